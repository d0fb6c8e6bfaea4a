"""One chunk's functions analysed by several processes at once (``tile-lsp check --jobs``).

``--jobs`` spreads files over processes; a single large file used one core.
:func:`analyze_clean_in_parallel` forks ``workers - 1`` processes after the
chunk is cut into units (:mod:`.layout`).  Each process, the calling one
included, analyses the chunk with :func:`.units.analyze_units` and a
``share``: its functions, and every unit that is not a function (aliases,
globals, the module itself); the other functions are left out.  The
functions are dealt out by their bodies (:func:`owners`): copies of one
body go to one process where the balance allows, which parses their
statements once (a file's statements repeat, and each process keeps its
own parses), and the processes get about as much text each.  The
processes answer one byte: whether their share found nothing at all.

The answer is only trusted when it is "nothing anywhere".  A function's
analysis depends on the module's aliases and globals, which every process
builds, and not on the other functions (functions are ``IsolatedFromAbove``
and nothing refers to one by its symbol; a unit built in a scope left dirty
by the unit before is not shared out).  The one check that spans functions,
two symbols of one name, is made first on the functions' header lines
(:func:`_distinct_names`).  So a diagnostic of the whole analysis is one
that its function's process finds, or one of the module that every process
finds.  The text of a message, its order and what the first error hides
(:func:`~tile_lsp.analysis.ir.diagnostics.mlir_order`) need the whole IR,
so as soon as one process found something the caller analyses the chunk
again in one process, as before: a file with diagnostics costs half again,
a clean file (the common case in a CI job) the time of its largest share.
"""

from __future__ import annotations

import logging
import os
import re

from tile_lsp.analysis.incremental.layout import Unit, function_units

log = logging.getLogger(__name__)

#: a chunk with fewer lines is analysed in one process (a fork would cost more than it saves)
MIN_LINES = 2000


#: the symbol of a function's header line: ``entry @name(`` (a quoted or unusual name: not parallel)
_SYMBOL = re.compile(r"^[ \t]*(?:cuda_tile\.)?entry\s+@([A-Za-z_][A-Za-z0-9_$.]*)\s*\(", re.MULTILINE)


def _distinct_names(text: str, layout: list[Unit]) -> bool:
    """Whether every function of ``layout`` names its symbol plainly on its header line, each name once
    (else two processes could each hold one of two functions of the same name, and neither see it)."""
    seen: set[str] = set()
    for u in function_units(layout):
        m = _SYMBOL.search(text, u.start, u.header_end)  # past the comment lines the unit starts with
        if m is None or m.group(1) in seen:
            return False
        seen.add(m.group(1))
    return True


def worth_it(layout: list[Unit], lines: int, workers: int) -> bool:
    """Whether a chunk of ``lines`` lines cut into ``layout`` is worth ``workers`` processes."""
    return workers > 1 and hasattr(os, "fork") and lines >= MIN_LINES and \
        sum(1 for _ in function_units(layout)) >= 2 * workers


def owners(text: str, layout: list[Unit], workers: int) -> tuple[int, ...]:
    """The process (0 to ``workers - 1``) of each function of ``layout``, in order.

    The functions are grouped by their text after the header line, the
    largest groups first; each function goes to its group's process while
    that process holds no more than its part of the text (a little over
    ``1 / workers``), else to the process holding the least.  So copies of a
    body stay together (each process parses a statement once) unless they
    would unbalance the processes: a file of a thousand copies of one kernel
    is still split.
    """
    functions = list(function_units(layout))
    groups: dict[str, list[int]] = {}
    for i, u in enumerate(functions):
        groups.setdefault(text[u.header_end:u.end], []).append(i)
    part = sum(len(body) * len(members) for body, members in groups.items()) / workers * 1.02
    load = [0] * workers
    owner = [0] * len(functions)
    for body, members in sorted(groups.items(), key=lambda g: -len(g[0]) * len(g[1])):
        home = None
        for i in members:
            if home is None or load[home] + len(body) > part:
                home = load.index(min(load))
            load[home] += len(body)
            owner[i] = home
    return tuple(owner)


def _share_is_clean(chunk, layout: list[Unit], options, source, share: tuple[int, tuple[int, ...]]):
    """Analyse ``share`` of the chunk; ``(analysis, clean)``: clean when it found no diagnostic and
    every unit was built in a clean scope, leaving it clean."""
    from tile_lsp.analysis.incremental.units import analyze_units

    analysis, state = analyze_units(chunk, layout, options, source, share=share)
    return analysis, not analysis.diagnostics and state.scopes_clean()


def analyze_clean_in_parallel(chunk, layout: list[Unit], options, source, workers: int):
    """The analysis of a clean chunk by ``workers`` processes, or ``None`` when any process found a
    diagnostic (or failed): then the caller analyses the chunk in one process.

    The analysis returned has no module and no units (each process built
    part of the IR): its diagnostics (none) are all it gives.  POSIX only
    (``os.fork``); call it from a process without other threads (the command
    line), never the server.  A fork that fails leaves the chunk to one process.
    """
    if not _distinct_names(chunk.text, layout):
        return None
    dealt = owners(chunk.text, layout, workers)
    children: list[tuple[int, int]] = []
    clean = False
    try:
        for k in range(1, workers):
            read, write = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                os.close(read)
                os.close(write)
                raise
            if pid == 0:  # the child: one byte, then gone without running the parent's clean-up
                answer = b"0"
                try:
                    os.close(read)
                    answer = b"1" if _share_is_clean(chunk, layout, options, source, (k, dealt))[1] else b"0"
                finally:
                    try:
                        os.write(write, answer)
                    finally:
                        os._exit(0)
            os.close(write)
            children.append((pid, read))
        analysis, clean = _share_is_clean(chunk, layout, options, source, (0, dealt))
    except Exception:  # the analysis in one process, which follows, reports what went wrong
        log.exception("the analysis of a chunk by several processes failed")
        clean = False
    finally:
        for pid, read in children:
            with os.fdopen(read, "rb") as f:
                if f.read(1) != b"1":
                    clean = False
            os.waitpid(pid, 0)
    if not clean:
        return None
    analysis.module = analysis.units = None
    return analysis

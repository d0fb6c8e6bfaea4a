"""CPython's cyclic garbage collector, paused while an analysis builds its IR.

An analysis allocates millions of objects (parse trees, operations, values,
ranges) and keeps most of them: the IR is the result.  Each full
(generation 2) collection scans every object of the heap, and the
collector starts one each time the heap has grown by a quarter, so building
the IR of a large file ran many of them over an ever larger heap: half of
the time of ``tile-lsp --check`` on a 50,000-line file went to collections
that found nothing to free (``docs/performance.md``).  What an analysis
drops on the way (a parse tree once built) is freed by reference counting;
the cycles (an op and its block point at each other) are collected once the
collector runs again.

:func:`collector_paused` disables the collector for the extent of a
``with`` block and enables it again when the last of the blocks open in the
process (in any thread) ends; the server also collects and freezes the heap
after a long analysis (:mod:`tile_lsp.server.heap`).

A command-line run (``tile-lsp check``, ``tile-lsp ptx``) needs no automatic
collection at all: :func:`for_command_line` turns it off for the process, and
:func:`collect_when_grown`, called between two files, collects only once the
IR left behind by the files checked so far is large.  Otherwise enabling the
collector again after a large file's analysis starts a collection over all of
its IR (every object built while paused is still in the youngest generation):
a second per 50,000 lines, only to free what the process exit frees anyway.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: objects tracked by the collector (less those freed) that a command-line run leaves behind before
#: :func:`collect_when_grown` collects them: about the IR of 16,000 lines (10,000 lines build 600,000)
COMMAND_LINE_LIMIT = 1_000_000

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable :mod:`gc`'s automatic collections inside the block (nestable, thread-safe).

    Collections are enabled again when every such block has ended, if they
    were enabled when the first began; an explicit :func:`gc.collect`
    inside the block still runs.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()


def for_command_line() -> None:
    """Turn automatic collections off for the rest of this process (a command-line run, or one of
    its ``--jobs`` worker processes); :func:`collect_when_grown` then collects between files."""
    gc.disable()


def collect_when_grown(limit: int = COMMAND_LINE_LIMIT) -> bool:
    """Collect now when at least ``limit`` tracked objects were allocated (less those freed) since the
    last collection (:func:`gc.get_count`, which counts while the collector is off); True when it did."""
    if gc.get_count()[0] < limit:
        return False
    gc.collect()
    return True

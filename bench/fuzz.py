"""Fuzzing campaigns against tile-lsp: never a traceback, never a hang, every request answered (issue 16).

Modes (``--mode``, several allowed, comma-separated):

- ``text``: mutated corpus kernels (``../shared/corpus/kernels/*.mlir``) and
  conformance chunks (``../shared/corpus/conformance/**/*.mlir``) through the
  in-process analysis (:func:`tile_lsp.analysis.api.analyze_text`, with
  random options: split mode, ``-verify-diagnostics`` emulation, editor
  checks); every ``--cli-every``-th input also through ``tile-lsp --check``
  in a subprocess.
- ``bytecode``: mutated ``.tileirbc`` files through the bytecode reader
  (only :class:`tile_lsp.bytecode.BytecodeError` may come out), then the
  printed module through the analysis.
- ``lower``: mutated valid kernels through :func:`tile_lsp.codegen.lower_text`
  for a random target (the mutations keep the kernel valid when they can).
- ``server``: ``--count`` sessions of ``tile-lsp serve`` over stdio, each with
  ``--edits`` random incremental edits (the line-break look-alikes form feed,
  vertical tab, NEL, U+2028, U+2029 included) and random requests of 16
  kinds, malformed ones included; every request must be answered and the
  final diagnostics must equal a fresh analysis of the final text.

A failure is an internal error (an exception, an ``internal`` diagnostic, a
traceback on stderr), a diagnostic without a range, a CLI exit status other
than 0/1/2, a hang (an input over ``--timeout`` seconds of CPU time, 10 by
default: a ``SIGVTALRM`` in the worker, so that a loaded machine does not
make slow inputs look like hangs; and a wall-clock watchdog that kills a
worker stuck in C code or blocked), memory beyond ``--memory-mb`` (``RLIMIT_AS``), an unanswered request
or a diagnostics mismatch.  Each distinct signature (exception type and
innermost tile_lsp frame, or the kind of failure) is minimised by delta
debugging (lines, then tokens, then characters; ``--no-minimize`` skips it)
and written to ``--out``: ``report.json`` (counts per mode, signatures with
their first input, minimised input and traceback) and one file per signature.

Inputs are derived from ``--seed`` and their index alone, so a campaign is
reproducible and ``--jobs`` only changes the speed.  Exit status: 0 when no
failure was found, 1 otherwise.

Usage::

    python bench/fuzz.py --mode text --count 100000 --seed 1 --jobs 2 --out fuzz-out
    python bench/fuzz.py --mode bytecode --count 10000 --seed 1
    python bench/fuzz.py --mode lower --count 2000 --seed 1
    python bench/fuzz.py --mode server --count 10 --edits 1000 --seed 1
    python bench/fuzz.py --mode text,bytecode,lower --count 500   # a short smoke run
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import multiprocessing.connection
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"

#: characters a mutation inserts: line breaks of every kind, look-alikes, quotes, escapes, odd Unicode
SPECIAL = ["\n", "\r\n", "\r", "\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\t", "\x00",
           '"', "\\", "\\u", "#", "%", "@", "^", "!", "<", ">", "(", ")", "{", "}", "[", "]", ":", ",", "=",
           "-", "?", "x", "0x", "é", "😋", "\ufeff", "\ud7ff", "// -----\n", "loc(", "#loc", "dense<", "array<i32: ",
           "tile<", "// expected-error @below {{x}}\n"]
#: numbers a mutation inserts: bounds of every width, huge and malformed ones
NUMBERS = ["0", "1", "-1", "2", "3", "7", "0x7", "0xFFFF", "65536", "2147483647", "-2147483648", "4294967296",
           "18446744073709551615", "18446744073709551616", "99999999999999999999999999999999", "1e308",
           "1e999", "-0.0", "nan", "inf", "0x7FC00000", "00", "-09", "1" * 60, "0x" + "F" * 40]
_TOKEN = re.compile(r"\s+|[%@#^!]?[\w.$-]+|\"(?:[^\"\\\n]|\\.)*\"|.", re.S)


# -- inputs -----------------------------------------------------------------------------------------


def corpus_texts(corpus: Path = CORPUS) -> list[tuple[str, str]]:
    """(name, text) of the corpus kernels (without ``.g.mlir`` duplicates) and conformance chunks.

    Conformance files are split at ``// -----`` lines; each chunk is one
    input.  Raises ``FileNotFoundError`` when the corpus is absent.
    """
    if not corpus.is_dir():
        raise FileNotFoundError(f"corpus not found at {corpus}")
    out = []
    for p in sorted((corpus / "kernels").glob("*.mlir")):
        out.append((p.name, p.read_text(encoding="utf-8", errors="replace")))
    for p in sorted((corpus / "conformance").rglob("*.mlir")):
        text = p.read_text(encoding="utf-8", errors="replace")
        for k, chunk in enumerate(re.split(r"(?m)^\s*// -----\s*$", text)):
            if chunk.strip():
                out.append((f"{p.relative_to(corpus)}#{k}", chunk))
    return out


def corpus_bytecode(corpus: Path = CORPUS) -> list[tuple[str, bytes]]:
    """(name, bytes) of every ``.tileirbc`` file of the corpus."""
    return [(str(p.relative_to(corpus)), p.read_bytes()) for p in sorted(corpus.rglob("*.tileirbc"))]


def mutate_text(rng: random.Random, text: str, n: int | None = None) -> str:
    """``text`` after ``n`` (1-6 when omitted) random mutations.

    Mutations: delete, insert, duplicate or swap characters, tokens and
    lines; insert a special character (:data:`SPECIAL`) or a number
    (:data:`NUMBERS`, replacing a number of the text half the time); splice
    a piece of the text elsewhere.
    """
    n = n if n is not None else rng.randint(1, 6)
    for _ in range(n):
        text = _mutate_once(rng, text)
    return text


def _mutate_once(rng: random.Random, text: str) -> str:
    kind = rng.randrange(12)
    size = len(text)
    pos = rng.randint(0, size)
    if kind == 0 and size:  # delete characters
        return text[:pos] + text[pos + rng.randint(1, 8):]
    if kind == 1:  # insert a special character
        return text[:pos] + rng.choice(SPECIAL) + text[pos:]
    if kind == 2:  # a number: replace one of the text or insert
        nums = list(re.finditer(r"-?\b(0x[0-9a-fA-F]+|\d+)\b", text))
        if nums and rng.random() < 0.7:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(NUMBERS) + text[m.end():]
        return text[:pos] + rng.choice(NUMBERS) + text[pos:]
    if kind in (3, 4, 5, 6):  # token level: delete, duplicate, swap, replace by another token
        toks = _TOKEN.findall(text)
        if not toks:
            return text
        i = rng.randrange(len(toks))
        if kind == 3:
            del toks[i]
        elif kind == 4:
            toks.insert(i, toks[i])
        elif kind == 5:
            j = rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        else:
            toks[i] = rng.choice(toks)
        return "".join(toks)
    if kind in (7, 8, 9):  # line level: delete, duplicate, swap
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        if kind == 7:
            del lines[i]
        elif kind == 8:
            lines.insert(i, lines[i])
        else:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)
    if kind == 10 and size:  # splice a piece elsewhere
        a = rng.randint(0, size)
        piece = text[a:a + rng.randint(1, 80)]
        return text[:pos] + piece + text[pos:]
    # random byte-ish characters
    return text[:pos] + "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 0x3000)]))
                                for _ in range(rng.randint(1, 4))) + text[pos:]


def mutate_bytes(rng: random.Random, data: bytes, n: int | None = None) -> bytes:
    """``data`` after ``n`` (1-4 when omitted) random byte mutations.

    Flip a bit, set a byte to a boundary value (0x00, 0x7f, 0x80, 0xff),
    delete, insert, duplicate or truncate a range, or write a long varint.
    """
    buf = bytearray(data)
    for _ in range(n if n is not None else rng.randint(1, 4)):
        if not buf:
            buf = bytearray(b"\x00")
        kind = rng.randrange(8)
        pos = rng.randrange(len(buf))
        if kind == 0:
            buf[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:
            buf[pos] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF])
        elif kind == 2:
            del buf[pos:pos + rng.randint(1, 16)]
        elif kind == 3:
            buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == 4:
            buf[pos:pos] = buf[pos:pos + rng.randint(1, 64)]
        elif kind == 5:
            del buf[pos:]
        elif kind == 6:
            buf[pos:pos] = b"\xff" * rng.randint(1, 10) + b"\x0f"  # a varint beyond 64 bits
        else:
            buf[pos] = rng.randrange(256)
    return bytes(buf)


# -- checks -----------------------------------------------------------------------------------------


class Failure(Exception):
    """A failed check: ``kind`` (internal-error, unlocated, exit-status, hang, ...) and details."""

    def __init__(self, kind: str, detail: str, signature: str | None = None):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.signature = signature or f"{kind}: {detail.splitlines()[0][:120] if detail else ''}"


def signature_of(exc: BaseException) -> str:
    """Exception type and the innermost frame of tile_lsp (file:function), e.g. ``ValueError @ builder.py:operation``."""
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "tile_lsp" in f.filename.replace("\\", "/")]
    where = f"{Path(inner[-1].filename).name}:{inner[-1].name}" if inner else "?"
    return f"{type(exc).__name__} @ {where}"


def check_diagnostics(diagnostics) -> None:
    """No ``internal`` diagnostic, every diagnostic located.  Raises :class:`Failure`."""
    for d in diagnostics:
        if d.code == "internal" or "internal error" in d.message:
            # the message names the exception; its traceback is in the log
            m = re.search(r"internal error[^:]*: (\w+)", d.message)
            raise Failure("internal-error", d.message, f"internal diagnostic {m.group(1) if m else '?'}: "
                          + re.sub(r"\d+", "N", d.message)[:100])
        if d.range is None:
            raise Failure("unlocated", d.message, "unlocated: " + re.sub(r"'[^']*'", "'…'", d.message)[:100])


def check_text(text: str, options: dict | None = None) -> None:
    """Analyse ``text`` in-process with ``options`` (AnalysisOptions fields); raises :class:`Failure`."""
    from tile_lsp.analysis.api import AnalysisOptions, analyze_text

    check_diagnostics(analyze_text(text, AnalysisOptions(**(options or {}))).diagnostics)


def check_cli(text: str, timeout: float = 60.0, extra: tuple[str, ...] = ()) -> None:
    """``tile-lsp --check`` on ``text`` in a subprocess: exit 0/1/2, no traceback, no internal error."""
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "fuzz.mlir"
        f.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", "--no-cache", str(f), *extra],
                                  capture_output=True, text=True, timeout=timeout, errors="replace",
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            raise Failure("hang", f"tile-lsp --check over {timeout} s", "hang: cli") from None
    if proc.returncode not in (0, 1, 2):
        raise Failure("exit-status", f"exit {proc.returncode}\n{proc.stderr[-2000:]}", f"exit-status {proc.returncode}")
    if "Traceback" in proc.stderr or "internal error" in proc.stdout:
        last = [ln for ln in proc.stderr.splitlines() if ln and not ln.startswith(" ")][-1:] or ["?"]
        raise Failure("internal-error", proc.stderr[-3000:] or proc.stdout[-2000:], "cli: " + last[0][:120])


def check_bytecode(data: bytes) -> None:
    """Read ``data`` as bytecode: only ``BytecodeError`` may come out; its print analyses cleanly."""
    from tile_lsp.analysis.ir.printer import print_module
    from tile_lsp.bytecode import BytecodeError, read_bytecode

    try:
        module = read_bytecode(data)
    except BytecodeError:
        return
    text = print_module(module)
    check_text(text)


def check_lower(text: str, gpu: str) -> None:
    """Lower ``text`` for ``gpu``: no exception, no internal diagnostic."""
    from tile_lsp.codegen import lower_text

    result = lower_text(text, gpu_name=gpu)
    check_diagnostics(result.diagnostics)


# -- the worker -------------------------------------------------------------------------------------


@dataclass
class Job:
    """What a worker runs: one input of ``mode`` number ``index`` of the campaign ``seed``."""

    mode: str
    seed: int
    index: int
    cli_every: int = 50
    edits: int = 1000


def make_input(job: Job, texts, blobs, valid) -> tuple[str, object, dict]:
    """The input of ``job``: (description, payload, extra) — deterministic in (mode, seed, index)."""
    rng = random.Random(f"{job.seed}:{job.mode}:{job.index}")
    if job.mode == "text":
        name, text = texts[rng.randrange(len(texts))]
        options = {"split_input_file": rng.random() < 0.2, "mlir_compat": rng.random() < 0.2,
                   "editor_checks": rng.random() < 0.3}
        return name, mutate_text(rng, text), {"options": options,
                                              "cli": job.cli_every > 0 and job.index % job.cli_every == 0}
    if job.mode == "bytecode":
        name, data = blobs[rng.randrange(len(blobs))]
        return name, mutate_bytes(rng, data), {}
    if job.mode == "lower":
        name, text = valid[rng.randrange(len(valid))]
        gpu = rng.choice(["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"])
        mutated = _valid_mutation(rng, text)
        return name, mutated, {"gpu": gpu}
    raise ValueError(job.mode)


def _valid_mutation(rng: random.Random, text: str) -> str:
    """A mutation of ``text`` the analysis accepts (up to 12 tries), else a plain mutation."""
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.analysis.ir.diagnostics import Severity

    for _ in range(12):
        candidate = mutate_text(rng, text, rng.randint(1, 2))
        if not [d for d in analyze_text(candidate).diagnostics if d.severity == Severity.ERROR]:
            return candidate
    return mutate_text(rng, text, 1)


def run_check(mode: str, payload, extra: dict) -> None:
    """Run the check of ``mode`` on ``payload``; raises :class:`Failure` or the escaped exception."""
    if mode == "text":
        check_text(payload, extra.get("options"))
    elif mode == "bytecode":
        check_bytecode(payload)
    elif mode == "lower":
        check_lower(payload, extra["gpu"])


class _Alarm(BaseException):
    """Raised by SIGVTALRM in a worker: the input ran over its CPU-time bound."""


def _on_alarm(signum, frame):
    raise _Alarm()


def outcome(mode: str, payload, extra: dict, timeout: float) -> dict | None:
    """Run one check under ``timeout`` seconds of CPU time (SIGVTALRM); ``None`` when it passed, else a failure record."""
    signal.signal(signal.SIGVTALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_VIRTUAL, timeout)
    try:
        run_check(mode, payload, extra)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        if mode == "text" and extra.get("cli"):
            # its own time bound: a process start (imports, grammar) is not the input's time
            check_cli(payload, timeout=max(60.0, 6 * timeout))
        return None
    except Failure as f:
        return {"kind": f.kind, "signature": f.signature, "detail": f.detail[-4000:]}
    except _Alarm as a:
        return {"kind": "hang", "signature": "hang @ " + signature_of(a).split(" @ ")[1],
                "detail": "".join(traceback.format_exception(a))[-4000:]}
    except MemoryError as e:
        return {"kind": "memory", "signature": signature_of(e), "detail": "".join(traceback.format_exception(e))[-4000:]}
    except Exception as e:  # noqa: BLE001 - every escaped exception is a finding
        return {"kind": "exception", "signature": signature_of(e),
                "detail": "".join(traceback.format_exception(e))[-4000:]}
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def _worker(conn, timeout: float, memory_mb: int) -> None:
    """A worker process: receives :class:`Job` s, answers (index, description, failure or None, payload)."""
    import logging

    logging.disable(logging.CRITICAL)  # the analysis logs tracebacks of what it catches: findings are reported
    if memory_mb:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    texts = corpus_texts()
    blobs = corpus_bytecode()
    valid = _valid_kernels(texts)
    warm_up(valid, blobs)
    conn.send("ready")
    while True:
        job = conn.recv()
        if job is None:
            return
        name, payload, extra = make_input(job, texts, blobs, valid)
        failure = outcome(job.mode, payload, extra, timeout)
        conn.send((job.index, name, failure, payload if failure else None, extra if failure else None))


def warm_up(valid, blobs) -> None:
    """Build the parsers and load the rules before the first timed input (it took over 10 s under load)."""
    from tile_lsp.analysis.api import analyze_text
    from tile_lsp.codegen import lower_text

    if valid:
        analyze_text(valid[0][1])
        lower_text(valid[0][1], gpu_name="sm_90")
    if blobs:
        try:
            check_bytecode(blobs[0][1])
        except Failure:
            pass


def _valid_kernels(texts):
    """The corpus kernels without debug locations (the lowering's inputs), by name."""
    return [(n, t) for n, t in texts if n.endswith(".mlir") and "#" not in n and not n.endswith(".g.mlir")]


class WorkerPool:
    """``jobs`` worker processes with a watchdog: a worker silent for ``3 * timeout + 30`` s is killed.

    A killed worker's input is reported as a hang (no traceback: it was stuck
    in C code or beyond the alarm) and the worker is replaced.
    """

    def __init__(self, jobs: int, timeout: float, memory_mb: int):
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.ctx = mp.get_context("fork")
        self.workers = [self._start() for _ in range(jobs)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.timeout, self.memory_mb), daemon=True)
        proc.start()
        # the watchdog counts from the first job: imports and warm-up take a minute on a loaded machine
        if not parent.poll(900) or parent.recv() != "ready":
            raise RuntimeError("a fuzz worker did not start in 900 s")
        return {"proc": proc, "conn": parent, "job": None, "since": 0.0}

    def run(self, jobs, on_result) -> None:
        """Run every job of the iterable ``jobs``; ``on_result(job, name, failure, payload, extra)`` for each."""
        pending = iter(jobs)
        exhausted = False
        while True:
            for w in self.workers:
                if w["job"] is None and not exhausted:
                    job = next(pending, None)
                    if job is None:
                        exhausted = True
                    else:
                        w["job"], w["since"] = job, time.monotonic()
                        w["conn"].send(job)
            busy = [w for w in self.workers if w["job"] is not None]
            if not busy:
                return
            ready = mp.connection.wait([w["conn"] for w in busy], timeout=1.0)
            for w in busy:
                if w["conn"] in ready:
                    try:
                        index, name, failure, payload, extra = w["conn"].recv()
                    except EOFError:  # the worker died (killed by the OOM killer, a signal...)
                        job = w["job"]
                        self._replace(w)
                        on_result(job, "?", {"kind": "crash", "signature": "worker died",
                                             "detail": f"exit code {w['proc'].exitcode}"}, None, None)
                        continue
                    job, w["job"] = w["job"], None
                    on_result(job, name, failure, payload, extra)
                elif time.monotonic() - w["since"] > 3 * self.timeout + 30:
                    job = w["job"]
                    self._replace(w)
                    on_result(job, "?", {"kind": "hang", "signature": "hang (worker killed)",
                                         "detail": f"no answer in {3 * self.timeout + 30:.0f} s"}, None, None)

    def _replace(self, w) -> None:
        w["proc"].kill()
        w["proc"].join()
        fresh = self._start()
        w.update(fresh)

    def close(self) -> None:
        """Stop the workers."""
        for w in self.workers:
            try:
                w["conn"].send(None)
            except OSError:
                pass
        for w in self.workers:
            w["proc"].join(timeout=5)
            if w["proc"].is_alive():
                w["proc"].kill()


# -- minimisation -----------------------------------------------------------------------------------


def _fails_alike(mode: str, payload, extra: dict, signature: str, timeout: float) -> bool:
    if mode == "text" and extra.get("cli") and not signature.startswith(("cli", "exit-status", "hang: cli")):
        extra = {**extra, "cli": False}
    got = outcome(mode, payload, extra, timeout)
    return got is not None and got["signature"] == signature


def ddmin(items: list, fails, budget: float = 120.0) -> list:
    """Zeller's delta debugging: a 1-minimal sublist of ``items`` for which ``fails(sublist)`` holds.

    ``fails(items)`` must hold.  Stops early (returning the smallest list
    found) after ``budget`` seconds.
    """
    deadline = time.monotonic() + budget
    n = 2
    while len(items) >= 2 and time.monotonic() < deadline:
        chunk = max(1, len(items) // n)
        subsets = [items[i:i + chunk] for i in range(0, len(items), chunk)]
        reduced = False
        for k in range(len(subsets)):
            complement = [x for j, s in enumerate(subsets) if j != k for x in s]
            if complement and fails(complement):
                items, n, reduced = complement, max(n - 1, 2), True
                break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), n * 2)
    return items


def minimize(mode: str, payload, extra: dict, signature: str, timeout: float, budget: float = 120.0):
    """The smallest input found failing with ``signature``: lines, then tokens, then characters (text) or bytes."""
    if mode == "bytecode":
        items = ddmin(list(payload), lambda xs: _fails_alike(mode, bytes(xs), extra, signature, timeout), budget)
        return bytes(items)
    text = payload
    for split in (lambda t: t.splitlines(True), lambda t: _TOKEN.findall(t), list):
        items = ddmin(split(text), lambda xs: _fails_alike(mode, "".join(xs), extra, signature, timeout), budget / 3)
        text = "".join(items)
    return text


# -- the server mode --------------------------------------------------------------------------------

REQUESTS = ["textDocument/hover", "textDocument/definition", "textDocument/references",
            "textDocument/documentHighlight", "textDocument/completion", "textDocument/signatureHelp",
            "textDocument/documentSymbol", "textDocument/foldingRange", "textDocument/selectionRange",
            "textDocument/semanticTokens/full", "textDocument/inlayHint", "textDocument/formatting",
            "textDocument/codeAction", "textDocument/prepareRename", "textDocument/rename", "workspace/symbol"]
#: characters a server-mode edit types: the line-break look-alikes included
SERVER_CHARS = ["\n", "\r\n", "\f", "\v", "\x85", "\u2028", "\u2029", " ", "%", "x", "0", ",", ":", "<", ">",
                "{", "}", "(", ")", '"', "é", "😋", "// -----\n"]


def lsp_split(text: str) -> list[str]:
    """Lines with their breaks, as LSP counts them (``\\n``, ``\\r\\n``, ``\\r``)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


def _utf16_to_index(line: str, units: int) -> int:
    col = 0
    for i, ch in enumerate(line):
        if col >= units:
            return i
        col += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def apply_lsp_edit(text: str, start: tuple[int, int], end: tuple[int, int], new: str) -> str:
    """``text`` after replacing the LSP range ``[start, end)`` (UTF-16 columns) by ``new``, as a client does."""
    lines = lsp_split(text)

    def offset(pos):
        line, char = pos
        if line >= len(lines):
            return len(text)
        before = sum(len(x) for x in lines[:line])
        content = lines[line].rstrip("\r\n")
        return before + _utf16_to_index(content, char)

    a, b = offset(start), offset(end)
    return text[:a] + new + text[max(a, b):]


def _random_position(rng: random.Random, text: str) -> tuple[int, int]:
    lines = lsp_split(text) or [""]
    line = rng.randrange(len(lines))
    content = lines[line].rstrip("\r\n")
    return line, len(content[:rng.randint(0, len(content))].encode("utf-16-le")) // 2


def server_session(seed: int, index: int, edits: int, timeout: float, texts) -> dict:
    """One ``tile-lsp serve`` session of ``edits`` random edits and requests; returns its counts and failures.

    The returned dict has ``edits``, ``requests``, ``answered``, ``failures``
    (a list of failure records) and ``final_text``.
    """
    sys.path.insert(0, str(ROOT / "bench"))
    from lsp import Client  # bench/lsp.py

    import queue

    rng = random.Random(f"{seed}:server:{index}")
    name, text = texts[rng.randrange(len(texts))]
    uri = f"file:///fuzz/{index}.mlir"
    client = Client([sys.executable, "-m", "tile_lsp.cli", "serve"])
    failures: list[dict] = []
    stats = {"edits": 0, "requests": 0, "answered": 0, "malformed": 0}

    def request(method, params, expect_error=False):
        stats["requests"] += 1
        try:
            _, body = client.request(method, params, timeout=max(timeout, 30.0))
        except queue.Empty:
            failures.append({"kind": "unanswered", "signature": f"unanswered {method}",
                             "detail": json.dumps(params)[:2000]})
            return None
        stats["answered"] += 1
        if "error" in body and not expect_error and body["error"].get("code") not in (-32803, -32800):
            failures.append({"kind": "error-answer", "signature": f"error answer {method} {body['error'].get('code')}",
                             "detail": json.dumps(body)[:2000]})
        if expect_error and body.get("error", {}).get("code") != -32602:
            failures.append({"kind": "not-invalid-params", "signature": f"malformed {method} not InvalidParams",
                             "detail": json.dumps(body)[:2000]})
        return body

    try:
        request("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                               "initializationOptions": {"debounceMs": 20}})
        client.notify("initialized", {})
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "mlir", "version": 1,
                                                                "text": text}})
        version = 1
        for _ in range(edits):
            a, b = sorted([_random_position(rng, text), _random_position(rng, text)])
            if rng.random() < 0.3:
                b = a
            new = "".join(rng.choice(SERVER_CHARS) for _ in range(rng.randint(0, 3))) if rng.random() < 0.7 else ""
            text = apply_lsp_edit(text, a, b, new)
            version += 1
            stats["edits"] += 1
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": a[0], "character": a[1]},
                                              "end": {"line": b[0], "character": b[1]}}, "text": new}]})
            if rng.random() < 0.8:
                method = rng.choice(REQUESTS)
                line, char = _random_position(rng, text)
                pos = {"line": line, "character": char}
                params: dict = {"textDocument": {"uri": uri}, "position": pos}
                if method == "textDocument/references":
                    params["context"] = {"includeDeclaration": True}
                elif method == "textDocument/rename":
                    params["newName"] = rng.choice(["%y", "%renamed", "@k2", "bad name", ""])
                elif method in ("textDocument/documentSymbol", "textDocument/foldingRange",
                                "textDocument/semanticTokens/full"):
                    params = {"textDocument": {"uri": uri}}
                elif method == "textDocument/selectionRange":
                    params = {"textDocument": {"uri": uri}, "positions": [pos]}
                elif method in ("textDocument/inlayHint", "textDocument/codeAction"):
                    end = _random_position(rng, text)
                    params = {"textDocument": {"uri": uri},
                              "range": {"start": pos, "end": {"line": max(end[0], line), "character": end[1]}}}
                    if method == "textDocument/codeAction":
                        params["context"] = {"diagnostics": []}
                elif method == "textDocument/formatting":
                    params = {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}}
                elif method == "workspace/symbol":
                    params = {"query": rng.choice(["", "k", "%"])}
                request(method, params)
            if rng.random() < 0.012:  # a malformed request: must be answered InvalidParams
                stats["malformed"] += 1
                bad = rng.choice([None, {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}},
                                  {"textDocument": {"uri": uri}, "position": {"line": 0, "character": -3}}, 17])
                request("textDocument/hover", bad, expect_error=True)
        _, published = client.wait_diagnostics(uri, version, timeout=120)
        expected = _reference_diagnostics(text)
        got = sorted((d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["line"],
                      d["range"]["end"]["character"], d["message"]) for d in published["diagnostics"])
        if got != expected:
            failures.append({"kind": "mismatch", "signature": "server diagnostics differ from a fresh analysis",
                             "detail": json.dumps({"server": got[:20], "fresh": expected[:20]})[:4000],
                             "input": text})
        for d in published["diagnostics"]:
            if d.get("code") == "internal" or "internal error" in d["message"]:
                failures.append({"kind": "internal-error", "signature": "server: " + d["message"][:100],
                                 "detail": d["message"], "input": text})
        if client.proc.poll() is not None:
            failures.append({"kind": "crash", "signature": "server exited", "detail": str(client.proc.returncode)})
    except (TimeoutError, queue.Empty) as exc:
        failures.append({"kind": "unanswered", "signature": f"no diagnostics: {exc}"[:120], "detail": str(exc),
                         "input": text})
    finally:
        client.close()
    return {**stats, "failures": failures, "final_text": text, "seed_input": name}


def _reference_diagnostics(text: str) -> list[tuple]:
    """A fresh analysis of ``text`` with the server's options (editor checks on)."""
    from tile_lsp.analysis.api import AnalysisOptions, analyze_text
    from tile_lsp.analysis.verify.rules.target import is_mlir_tool_input
    from tile_lsp.analysis.ir.split import has_split_marker

    options = AnalysisOptions(split_input_file=has_split_marker(text), editor_checks=True,
                              mlir_tool_input=is_mlir_tool_input(text))
    return sorted((d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.message)
                  for d in analyze_text(text, options).diagnostics if d.range is not None)


# -- the campaign -----------------------------------------------------------------------------------


@dataclass
class Report:
    """Counts per mode and the distinct failure signatures (first input of each)."""

    counts: dict = field(default_factory=dict)
    failures: dict = field(default_factory=dict)  # signature -> record
    started: float = field(default_factory=time.time)

    def add(self, mode: str, failure: dict | None, name: str, index: int, payload=None, extra=None) -> bool:
        """Count one input; True when its failure signature is new."""
        c = self.counts.setdefault(mode, {"inputs": 0, "failures": 0})
        c["inputs"] += 1
        if failure is None:
            return False
        c["failures"] += 1
        c.setdefault("by_kind", {}).setdefault(failure["kind"], 0)
        c["by_kind"][failure["kind"]] += 1
        sig = f"{mode}: {failure['signature']}"
        if sig in self.failures:
            self.failures[sig]["count"] += 1
            return False
        self.failures[sig] = {"mode": mode, "count": 1, "first_index": index, "seed_input": name, **failure}
        if payload is not None:
            self.failures[sig]["input"] = payload if isinstance(payload, str) else payload.hex()
            self.failures[sig]["extra"] = extra
        return True

    def write(self, out: Path, args) -> None:
        """Write ``report.json`` and one file per signature's (minimised) input under ``out``."""
        out.mkdir(parents=True, exist_ok=True)
        data = {"command": " ".join(sys.argv), "seed": args.seed, "timeout_s": args.timeout,
                "seconds": round(time.time() - self.started, 1), "counts": self.counts,
                "signatures": list(self.failures.values())}
        (out / "report.json").write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        for k, rec in enumerate(self.failures.values()):
            inp = rec.get("minimized", rec.get("input"))
            if isinstance(inp, str):
                suffix = ".tileirbc.hex" if rec["mode"] == "bytecode" else ".mlir"
                (out / f"failure-{k:03d}{suffix}").write_text(inp, encoding="utf-8", errors="surrogatepass")


def main(argv: list[str] | None = None) -> int:
    """Run a campaign; returns 0 when nothing failed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="text", help="text, bytecode, lower, server (comma-separated)")
    ap.add_argument("--count", type=int, default=1000, help="inputs per mode (sessions for server)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per input")
    ap.add_argument("--memory-mb", type=int, default=4096, help="address-space limit of a worker (0: none)")
    ap.add_argument("--cli-every", type=int, default=50, help="every Nth text input also through tile-lsp --check")
    ap.add_argument("--edits", type=int, default=1000, help="edits per server session")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--start", type=int, default=0, help="first input index (to resume a campaign)")
    args = ap.parse_args(argv)
    report = Report()
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    last_write = time.monotonic()

    def progress(mode: str, done: int) -> None:
        nonlocal last_write
        if time.monotonic() - last_write > 30:
            report.write(args.out, args)
            last_write = time.monotonic()
            c = report.counts.get(mode, {})
            print(f"[{time.strftime('%H:%M:%S')}] {mode}: {done}/{args.count} inputs, "
                  f"{c.get('failures', 0)} failures, {len(report.failures)} signatures", flush=True)

    for mode in modes:
        if mode == "server":
            texts = _valid_kernels(corpus_texts())
            for i in range(args.start, args.start + args.count):
                session = server_session(args.seed, i, args.edits, args.timeout, texts)
                c = report.counts.setdefault("server", {"inputs": 0, "failures": 0, "edits": 0, "requests": 0,
                                                        "answered": 0, "malformed": 0})
                for key in ("edits", "requests", "answered", "malformed"):
                    c[key] += session[key]
                for f in session["failures"]:
                    report.add("server-failure", f, session["seed_input"], i, f.get("input"))
                c["inputs"] += 1
                c["failures"] += len(session["failures"])
                print(f"[{time.strftime('%H:%M:%S')}] server session {i}: {session['edits']} edits, "
                      f"{session['answered']}/{session['requests']} requests answered, "
                      f"{len(session['failures'])} failures", flush=True)
                report.write(args.out, args)
            continue
        pool = WorkerPool(args.jobs, args.timeout, args.memory_mb)
        done = 0
        new_failures = []

        def on_result(job, name, failure, payload, extra, mode=mode):
            nonlocal done
            done += 1
            if report.add(mode, failure, name, job.index, payload, extra) and payload is not None:
                new_failures.append((f"{mode}: {failure['signature']}", payload, extra))
            progress(mode, done)

        jobs = (Job(mode, args.seed, i, args.cli_every, args.edits) for i in range(args.start, args.start + args.count))
        try:
            pool.run(jobs, on_result)
        finally:
            pool.close()
        if not args.no_minimize:
            import logging

            logging.disable(logging.CRITICAL)
            for sig, payload, extra in new_failures:
                rec = report.failures[sig]
                rec["minimized"] = minimize(mode, payload, extra or {}, rec["signature"], args.timeout)
                if isinstance(rec["minimized"], bytes):
                    rec["minimized"] = rec["minimized"].hex()
        report.write(args.out, args)
    total = sum(c["failures"] for c in report.counts.values())
    for mode, c in report.counts.items():
        print(f"{mode}: {json.dumps(c)}")
    for sig, rec in report.failures.items():
        print(f"  {rec['count']:6d} x {sig}")
    print(f"report: {args.out / 'report.json'}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())

"""Differential test: tile-lsp against NVIDIA's ``cuda-tile-opt`` on mutated valid IR.

tile-lsp promises NVIDIA's diagnostics word for word.  This script measures
how far that holds off the beaten path: it takes every valid text of
``../shared/corpus`` -- the kernels of ``kernels/MANIFEST.tsv`` with verdict
``ok`` (wrapped in ``cuda_tile.module @kernels { ... }``, as the 13.3 tool
needs; kernels using newer features are dropped because the oracle rejects
them) and each ``// -----`` chunk of ``conformance/**/*.mlir`` the oracle
accepts without an error -- applies one seeded edit of a given kind, and
compares what both tools print for the mutated text.

Oracle: ``cuda-tile-opt -allow-unregistered-dialect
--mlir-print-op-on-diagnostic=false FILE -o /dev/null`` (the command of
``../shared/tools/cuda-tile-opt/README.md``; no ``-split-input-file`` or
``-verify-diagnostics``: one text, parsing and verification only).  Build it
with ``../shared/tools/cuda-tile-opt/build.sh``; it is a development tool,
neither the product nor CI needs it.

Ours: ``tile-lsp --check --no-cache --format json FILE...`` (every file analysed), several
files per call to spread the start-up cost; while ``--check`` still swallows
the options after it (exit 2), ``tile-lsp --check FILE... --format json`` is
used instead.  A batch that does not exit 0/1 with a JSON array is rerun one
file at a time; a file that then crashes, times out or yields an ``internal``
diagnostic counts as a crash (a disagreement on every metric).

Both outputs become lists of ``(line, column, severity, message)`` (notes
included, flattened after their diagnostic).  Per mutation kind the report
gives: ``n``; ``oracle_err`` (mutations the oracle rejects); ``verdict``
(both report an error, or neither); ``first`` (neither reports an error, or
the first error of each has the same line, column and message: the first
each prints, as a user reads it -- tile-lsp prints MLIR's order, the parse
phase before the verifier, not position order); ``all`` (the
sorted lists of all diagnostics, notes included, are equal); ``fp`` (we
report an error where the oracle accepts the text); ``miss`` (the oracle
reports an error and we do not); ``crash``.

The sample can be stored as test data (``--save-sample DIR`` writes
``DIR/sample.jsonl``): one JSON object a line with ``source`` (corpus-relative
file, ``#N`` for the N-th chunk of a conformance file), ``sha`` (first 12 hex
digits of the SHA-1 of the unmutated text), ``kind``, ``edit``
(``[line, column, old, new]``: at 1-based ``line`` and 0-based character
``column`` the text ``old`` is replaced by ``new``; either may hold a newline)
with ``truncate: true`` when everything after the edit is dropped too, and
``oracle`` (the oracle's diagnostics as ``[line, column, severity, message]``).
``tests/test_differential.py`` re-applies the edits in-process;
``--from-sample DIR`` re-checks the stored sample through the CLI without the
oracle.

Usage::

    python bench/differential.py --seed 15 --count 2400 [--kinds K...] [--jobs 2]
        [--oracle PATH] [--out DIR] [--save-sample DIR] [--show N]
    python bench/differential.py --from-sample tests/data/differential [--show N]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
ORACLE_FLAGS = ["-allow-unregistered-dialect", "--mlir-print-op-on-diagnostic=false"]
KERNEL_WRAP = ("cuda_tile.module @kernels {\n", "}\n")
SPLIT_MARKER = "// -----"
BATCH = 40            # files per tile-lsp call
FILE_TIMEOUT = 30.0   # seconds per file (tile-lsp) before it counts as a crash
ORACLE_TIMEOUT = 30.0

KINDS = (
    "brace_deletion", "op_typo", "keyword_typo", "non_pow2_dim", "swap_operands",
    "delete_operand", "iter_values_type", "delete_terminator", "enum_change",
    "delete_line", "duplicate_line", "truncation",
)

Diag = tuple  # (line, column, severity, message); line/column None for an unknown location


# ---------------------------------------------------------------------------
# Base texts
# ---------------------------------------------------------------------------


def sha(text: str) -> str:
    """First 12 hex digits of the SHA-1 of ``text`` (UTF-8): detects a changed corpus."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def split_chunks(text: str) -> list[str]:
    """The ``// -----`` chunks of ``text`` (marker lines dropped, as MLIR splits)."""
    chunks, current = [], []
    for line in text.split("\n"):
        if line.strip() == SPLIT_MARKER:
            chunks.append("\n".join(current) + "\n")
            current = []
        else:
            current.append(line)
    chunks.append("\n".join(current))
    return chunks


def kernel_sources(corpus: Path) -> list[str]:
    """Corpus-relative kernels whose MANIFEST verdict is ``ok``."""
    out = []
    with open(corpus / "kernels" / "MANIFEST.tsv", encoding="utf-8") as fh:
        header = fh.readline().rstrip("\n").split("\t")
        i_file, i_verdict = header.index("file"), header.index("verdict")
        for row in fh:
            cols = row.rstrip("\n").split("\t")
            if len(cols) > i_verdict and cols[i_verdict] == "ok":
                out.append(f"kernels/{cols[i_file]}")
    return sorted(out)


def conformance_sources(corpus: Path) -> list[str]:
    """``conformance/...mlir#N`` for every chunk of every conformance text file."""
    out = []
    for path in sorted((corpus / "conformance").rglob("*.mlir")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(corpus).as_posix()
        out.extend(f"{rel}#{i}" for i in range(len(split_chunks(text))))
    return out


def load_base(corpus: Path, source: str) -> str:
    """The unmutated text named ``source`` (see the module docstring)."""
    rel, _, chunk = source.partition("#")
    text = (corpus / rel).read_text(encoding="utf-8")
    if chunk:
        return split_chunks(text)[int(chunk)]
    if rel.startswith("kernels/"):
        return KERNEL_WRAP[0] + text + ("" if text.endswith("\n") else "\n") + KERNEL_WRAP[1]
    return text


# ---------------------------------------------------------------------------
# Edits
# ---------------------------------------------------------------------------


@dataclass
class Edit:
    """At 1-based ``line``, 0-based ``col``: ``old`` becomes ``new``; ``truncate`` drops the rest."""

    line: int
    col: int
    old: str
    new: str
    truncate: bool = False

    def to_json(self) -> dict:
        d = {"edit": [self.line, self.col, self.old, self.new]}
        if self.truncate:
            d["truncate"] = True
        return d

    @staticmethod
    def from_json(d: dict) -> Edit:
        line, col, old, new = d["edit"]
        return Edit(line, col, old, new, bool(d.get("truncate")))


def line_offset(text: str, line: int, col: int) -> int:
    """Character offset of 1-based ``line``, 0-based ``col`` in ``text``."""
    off = 0
    for _ in range(line - 1):
        nl = text.find("\n", off)
        if nl < 0:
            raise ValueError(f"line {line} is past the end of the text")
        off = nl + 1
    return off + col


def apply_edit(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` applied; ``ValueError`` when ``old`` is not where the edit says."""
    off = line_offset(text, edit.line, edit.col)
    if text[off:off + len(edit.old)] != edit.old:
        raise ValueError(f"edit does not match the text at {edit.line}:{edit.col}")
    if edit.truncate:
        return text[:off] + edit.new
    return text[:off] + edit.new + text[off + len(edit.old):]


# ---------------------------------------------------------------------------
# Mutators: each returns an Edit for ``lines`` (text.split("\n")) or None
# ---------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyz_"
_OP_RE = re.compile(r'^(\s*)(?:%[\w#:]+(?:\s*,\s*%[\w#:]+)*\s*=\s*)?(?:"([\w.$]+)"|([a-z_][\w.$]*))')
_NOT_OPS = {"loc", "attributes", "module", "else", "true", "false"}
_OPERAND_RE = re.compile(r"%[\w$.#]+(?::\d+)?")
_TERMINATOR_RE = re.compile(r"^\s*(?:cuda_tile\.)?(yield|return|continue|break)\b")
_KEYWORDS = ("iter_values", "token", "dim", "reverse", "weak", "relaxed", "acquire", "release",
             "acq_rel", "device", "tl_blk", "step", "in", "to", "shape", "strides", "padding_value",
             "signed", "unsigned", "rounding", "flush_to_zero", "ordered", "unordered", "identities",
             "overflow", "scope", "bounded", "dims", "tile", "tensor_view", "partition_view",
             "optimization_hints", "num_cta_in_cga", "occupancy", "latency", "allow_tma",
             "propagate_nan", "same_elements", "divisible_by", "else", "by")
_KEYWORD_RE = re.compile(r"(?<![\w%@^#$.\"])(" + "|".join(_KEYWORDS) + r")(?![\w\"])")
_ENUM_GROUPS = [
    (re.compile(r"\b(?:cmpi|cmpf)\s+(\w+)"),
     ["equal", "not_equal", "less_than", "less_than_or_equal", "greater_than", "greater_than_or_equal"]),
    (re.compile(r"(?<![\w%@])(signed|unsigned)\b"), ["signed", "unsigned"]),
    (re.compile(r"(?<![\w%@])(ordered|unordered)\b"), ["ordered", "unordered"]),
    (re.compile(r"(?<![\w%@])(weak|relaxed|acquire|release|acq_rel)\b"),
     ["weak", "relaxed", "acquire", "release", "acq_rel"]),
    (re.compile(r"(?<![\w%@])(tl_blk|device|sys)\b"), ["tl_blk", "device", "sys"]),
    (re.compile(r"rounding<(\w+)>"),
     ["nearest_even", "zero", "negative_inf", "positive_inf", "approx", "full", "nearest_int_to_zero"]),
    (re.compile(r"padding_value\s*=\s*(\w+)"), ["zero", "neg_zero", "nan", "pos_inf", "neg_inf"]),
    (re.compile(r"overflow<(\w+)>"), ["none", "no_signed_wrap", "no_unsigned_wrap", "no_wrap"]),
    (re.compile(r"reverse\s*=\s*(true|false)\b"), ["true", "false"]),
    (re.compile(r"atomic_rmw_tko\s+\w+\s+\w+\s+%[\w#:]+,\s*(\w+)\b"),
     ["and", "or", "xor", "add", "addf", "max", "min", "umax", "umin", "xchg"]),
]
_DIM_RE = re.compile(r"(?<=[<(,x\s])(\d+)(?=x[\dfbi?])")
_TILE_PAREN_RE = re.compile(r"tile=\(([\d,\s]+)\)")
_TYPE_SWAP = {"f32": "f16", "f16": "f32", "bf16": "f32", "f64": "f32", "i32": "i64", "i64": "i32",
              "i16": "i32", "i8": "i32", "i1": "i32", "tf32": "f32"}


def _code_lines(lines: list[str]) -> list[int]:
    """0-based indices of non-blank, non-comment lines."""
    return [i for i, s in enumerate(lines) if s.strip() and not s.lstrip().startswith("//")]


def _typo(word: str, rng: random.Random) -> str:
    """``word`` with one insertion, deletion, substitution or transposition (never unchanged)."""
    for _ in range(20):
        i = rng.randrange(len(word) + 1)
        how = rng.choice("idst")
        if how == "i":
            out = word[:i] + rng.choice(_LETTERS) + word[i:]
        elif how == "d" and len(word) > 1 and i < len(word):
            out = word[:i] + word[i + 1:]
        elif how == "s" and i < len(word):
            out = word[:i] + rng.choice(_LETTERS) + word[i + 1:]
        elif how == "t" and i + 1 < len(word):
            out = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        else:
            continue
        if out != word and out:
            return out
    return word + "x"


def _splice(lines: list[str], i: int, start: int, end: int, new: str) -> Edit:
    return Edit(i + 1, start, lines[i][start:end], new)


def _pick_match(lines, rng, regex, group=1, where=None):
    """A random ``(line index, match)`` of ``regex`` over code lines (``where`` filters lines)."""
    found = [(i, m) for i in _code_lines(lines) if where is None or where(lines[i])
             for m in regex.finditer(lines[i])]
    return rng.choice(found) if found else None


def m_brace_deletion(lines, rng):
    """Delete one ``}``."""
    found = [(i, j) for i in _code_lines(lines) for j, c in enumerate(lines[i]) if c == "}"]
    if not found:
        return None
    i, j = rng.choice(found)
    return _splice(lines, i, j, j + 1, "")


def m_op_typo(lines, rng):
    """A typo in an operation name (custom or generic form)."""
    found = []
    for i in _code_lines(lines):
        m = _OP_RE.match(lines[i])
        if not m:
            continue
        g = 2 if m.group(2) else 3
        name = m.group(g)
        if name in _NOT_OPS or lines[i].lstrip().startswith(("}", "^")):
            continue
        found.append((i, m.start(g), m.end(g), name))
    if not found:
        return None
    i, s, e, name = rng.choice(found)
    # keep a dialect prefix intact: the typo goes into the op's own name
    prefix, dot, own = name.rpartition(".")
    return _splice(lines, i, s, e, prefix + dot + _typo(own, rng))


def m_keyword_typo(lines, rng):
    """A typo in a keyword (``iter_values``, ``token``, ``dim``, ``weak``, ...)."""
    hit = _pick_match(lines, rng, _KEYWORD_RE)
    if not hit:
        return None
    i, m = hit
    return _splice(lines, i, m.start(1), m.end(1), _typo(m.group(1), rng))


def _non_pow2(n: int, rng: random.Random) -> int:
    options = [v for v in (n + 1, n - 1, n * 3 // 2, 3, 6, 12, 24, 48, 100) if v > 0 and v & (v - 1)]
    return rng.choice(options)


def m_non_pow2_dim(lines, rng):
    """A shape dimension (``tile<AxBx..>``, ``tile=(..)``) that is not a power of two."""
    found = [(i, m.start(1), m.end(1), int(m.group(1))) for i in _code_lines(lines)
             for m in _DIM_RE.finditer(lines[i])]
    for i in _code_lines(lines):
        for m in _TILE_PAREN_RE.finditer(lines[i]):
            for d in re.finditer(r"\d+", m.group(1)):
                found.append((i, m.start(1) + d.start(), m.start(1) + d.end(), int(d.group())))
    if not found:
        return None
    i, s, e, n = rng.choice(found)
    return _splice(lines, i, s, e, str(_non_pow2(n, rng)))


def _rhs_operands(line: str) -> list[re.Match]:
    """``%operand`` uses right of the results' ``=`` (all of them on a line without results)."""
    m = re.match(r"^\s*%[\w#:]+(?:\s*,\s*%[\w#:]+)*\s*=", line)
    start = m.end() if m else 0
    return [o for o in _OPERAND_RE.finditer(line, start)
            if not re.match(r":(?!:)|\s*=(?!=)", line[o.end():])    # block argument, iter_values init
            and not re.search(r"\bfor\s+$", line[:o.start()])]      # induction variable


def m_swap_operands(lines, rng):
    """Swap two different operands of one operation."""
    found = []
    for i in _code_lines(lines):
        ops = _rhs_operands(lines[i])
        for a in range(len(ops) - 1):
            if ops[a].group() != ops[a + 1].group():
                found.append((i, ops[a], ops[a + 1]))
    if not found:
        return None
    i, a, b = rng.choice(found)
    line = lines[i]
    return _splice(lines, i, a.start(), b.end(), b.group() + line[a.end():b.start()] + a.group())


def m_delete_operand(lines, rng):
    """Delete one operand (with its comma)."""
    found = [(i, o) for i in _code_lines(lines) for o in _rhs_operands(lines[i])]
    if not found:
        return None
    i, o = rng.choice(found)
    line = lines[i]
    s, e = o.start(), o.end()
    after = re.match(r"\s*,\s*", line[e:])
    before = re.search(r",\s*$", line[:s])
    if after:
        e += after.end()
    elif before:
        s = before.start()
    return _splice(lines, i, s, e, "")


def m_iter_values_type(lines, rng):
    """Change one loop-carried type after ``iter_values(...)``."""
    found = []
    for i in _code_lines(lines):
        line = lines[i]
        k = line.find("iter_values(")
        if k < 0:
            continue
        depth, j = 0, k + len("iter_values")
        while j < len(line):
            depth += {"(": 1, ")": -1}.get(line[j], 0)
            j += 1
            if depth == 0:
                break
        for m in re.finditer(r"tile<[^<>]*>|\btoken\b", line[j:]):
            found.append((i, j + m.start(), j + m.end(), m.group()))
    if not found:
        return None
    i, s, e, ty = rng.choice(found)
    if ty == "token":
        new = "tile<i32>"
    else:
        inner = ty[5:-1]
        dims, _, elem = inner.rpartition("x") if "x" in inner else ("", "", inner)
        if dims and rng.random() < 0.5:
            new = "tile<" + "x".join(str(int(d) * 2) if d.isdigit() else d for d in dims.split("x")) + "x" + elem + ">"
        else:
            new = "tile<" + (dims + "x" if dims else "") + _TYPE_SWAP.get(elem, "i32") + ">"
    return _splice(lines, i, s, e, new)


def m_delete_terminator(lines, rng):
    """Delete a ``yield``/``return``/``continue``/``break`` line."""
    found = [i for i in _code_lines(lines) if _TERMINATOR_RE.match(lines[i])]
    if not found:
        return None
    i = rng.choice(found)
    return Edit(i + 1, 0, lines[i] + "\n", "")


def m_enum_change(lines, rng):
    """Replace an enum value by another of its enum (predicate, ordering, rounding, ...)."""
    found = []
    for rx, values in _ENUM_GROUPS:
        for i in _code_lines(lines):
            for m in rx.finditer(lines[i]):
                if m.group(1) in values:
                    found.append((i, m.start(1), m.end(1), m.group(1), values))
    if not found:
        return None
    i, s, e, old, values = rng.choice(found)
    return _splice(lines, i, s, e, rng.choice([v for v in values if v != old]))


def m_delete_line(lines, rng):
    """Delete one non-blank, non-comment line."""
    found = _code_lines(lines)
    if not found:
        return None
    i = rng.choice(found)
    return Edit(i + 1, 0, lines[i] + "\n", "") if i + 1 < len(lines) else Edit(i + 1, 0, lines[i], "")


def m_duplicate_line(lines, rng):
    """Insert a copy of a non-blank, non-comment line after it."""
    found = [i for i in _code_lines(lines) if i + 1 < len(lines)]
    if not found:
        return None
    i = rng.choice(found)
    return Edit(i + 2, 0, "", lines[i] + "\n")


def m_truncation(lines, rng):
    """Cut the text inside a code line (everything after the cut is dropped)."""
    found = _code_lines(lines)
    if not found:
        return None
    i = rng.choice(found)
    col = rng.randrange(len(lines[i]))
    return Edit(i + 1, col, lines[i][col:], "", truncate=True)


MUTATORS = {k: globals()[f"m_{k}"] for k in KINDS}


# ---------------------------------------------------------------------------
# Running the tools
# ---------------------------------------------------------------------------

_DIAG_RE = re.compile(r"^(.*?):(\d+):(\d+): (error|warning|note|remark): (.*)$")
_DIAG_NOLOC_RE = re.compile(r"^(.*?):(\d+): (error|warning|note|remark): (.*)$")
_UNKNOWN_RE = re.compile(r"^(?:<unknown>|loc\(.*\)|\S+):? ?(error|warning|note|remark): (.*)$")


def parse_mlir_diagnostics(stderr: str, path: str) -> list[Diag]:
    """``(line, column, severity, message)`` of every diagnostic MLIR printed for ``path``.

    MLIR prints ``PATH:LINE:COL: SEVERITY: MESSAGE``, then the source line and
    a caret; a location without a column (``<unknown>:0``) gives ``None``s.
    Source and caret lines are skipped: a line counts only when it starts with
    ``PATH:`` or an unknown location followed by a severity.
    """
    out: list[Diag] = []
    prefix = path + ":"
    for raw in stderr.splitlines():
        if raw.startswith(prefix):
            m = _DIAG_RE.match(prefix + raw[len(prefix):])
            if m and m.group(1) == path:
                out.append((int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)))
                continue
            m = _DIAG_NOLOC_RE.match(raw)
            if m and m.group(1) == path:
                out.append((int(m.group(2)) or None, None, m.group(3), m.group(4)))
                continue
        if raw.startswith(("<unknown>:0:", "loc(")):
            m = _UNKNOWN_RE.match(raw.replace("<unknown>:0:", "<unknown>", 1))
            if m:
                out.append((None, None, m.group(1), m.group(2)))
    return out


def run_oracle(oracle: str, path: str) -> tuple[str, list[Diag]]:
    """``(status, diagnostics)`` of cuda-tile-opt on ``path``; status ``ok`` or why not."""
    try:
        proc = subprocess.run([oracle, *ORACLE_FLAGS, path, "-o", os.devnull],
                              capture_output=True, text=True, timeout=ORACLE_TIMEOUT,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return "timeout", []
    diags = parse_mlir_diagnostics(proc.stderr, path)
    if proc.returncode < 0 or proc.returncode > 1:
        return f"exit {proc.returncode}", diags
    if proc.returncode == 1 and not any(d[2] == "error" for d in diags):
        return "exit 1 without an error", diags
    return "ok", diags


def json_to_diags(objects: list[dict]) -> dict[str, list[Diag]]:
    """tile-lsp's JSON report as ``{file: [(line, column, severity, message), ...]}``."""
    out: dict[str, list[Diag]] = collections.defaultdict(list)
    for o in objects:
        out[o["file"]].append((o["line"], o["column"], o["severity"], o["message"]))
        for n in o.get("notes") or []:
            out[o["file"]].append((n.get("line"), n.get("column"), "note", n["message"]))
        if o.get("code") == "internal":
            out[o["file"]].append((None, None, "crash", "internal: " + o["message"]))
    return out


_ORDER_FALLBACK = False  # set when `tile-lsp --check --format json FILE` fails with a usage error


def _tile_lsp_cmd() -> list[str]:
    exe = shutil.which("tile-lsp")
    if exe is None:
        venv = ROOT / ".venv" / "bin" / "tile-lsp"
        exe = str(venv) if venv.exists() else None
    return [exe] if exe else [sys.executable, "-m", "tile_lsp.cli"]


def _call_tile_lsp(paths: list[str], timeout: float):
    """One ``tile-lsp --check`` call over ``paths``: ``(dict or None, why)``."""
    global _ORDER_FALLBACK
    base = _tile_lsp_cmd()
    for attempt in range(2):
        if _ORDER_FALLBACK:
            cmd = base + ["--check", *paths, "--format", "json", "--no-cache"]
        else:
            cmd = base + ["--check", "--no-cache", "--format", "json", *paths]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  errors="replace")
        except subprocess.TimeoutExpired:
            return None, "timeout"
        if proc.returncode == 2 and not _ORDER_FALLBACK and "error" in proc.stderr \
                and not proc.stdout.strip():
            _ORDER_FALLBACK = True  # the user's order is not understood yet: use the other one
            continue
        if proc.returncode not in (0, 1):
            tail = proc.stderr.strip().splitlines()[-1:] or [""]
            return None, f"exit {proc.returncode}: {tail[0][:200]}"
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            return None, "output is not JSON"
        return json_to_diags(data), "ok"
    return None, "usage error"


def run_ours(paths: list[str]) -> dict[str, tuple[str, list[Diag]]]:
    """``{path: (status, diagnostics)}`` from tile-lsp, batched; a failed batch is rerun file by file."""
    result, why = _call_tile_lsp(paths, 20 + FILE_TIMEOUT * len(paths) / 4)
    if result is not None:
        return {p: ("ok", result.get(p, [])) for p in paths}
    if len(paths) == 1:
        return {paths[0]: (why, [])}
    out = {}
    for p in paths:
        out.update(run_ours([p]))
    return out


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def first_error(diags: list[Diag], *, sort: bool):
    errors = [d for d in diags if d[2] == "error"]
    if not errors:
        return None
    if sort:
        errors.sort(key=lambda d: (d[0] is not None, d[0] or 0, d[1] or 0))
    return errors[0]


def _key(d: Diag):
    return (d[0] or 0, d[1] or 0, d[2], d[3])


def compare(oracle: list[Diag], ours: list[Diag], status: str) -> dict:
    """The per-mutation metrics (see the module docstring)."""
    o_err = any(d[2] == "error" for d in oracle)
    crash = status != "ok" or any(d[2] == "crash" for d in ours)
    u_err = any(d[2] == "error" for d in ours)
    o_first = first_error(oracle, sort=False)
    u_first = first_error(ours, sort=False)
    first = (o_first is None and u_first is None) or (
        o_first is not None and u_first is not None and tuple(o_first[:2]) == tuple(u_first[:2])
        and o_first[3] == u_first[3])
    return {
        "oracle_err": o_err,
        "verdict": not crash and o_err == u_err,
        "first": not crash and first,
        "all": not crash and sorted(map(_key, oracle)) == sorted(map(_key, ours)),
        "fp": not crash and u_err and not o_err,
        "miss": not crash and o_err and not u_err,
        "crash": crash,
        "oracle_first": o_first,
        "ours_first": u_first,
    }


METRICS = ("oracle_err", "verdict", "first", "all", "fp", "miss", "crash")


def summarize(records: list[dict]) -> dict[str, dict[str, int]]:
    """``{kind: {"n": .., metric: count}}`` plus a ``total`` row."""
    table: dict[str, dict[str, int]] = {}
    for r in records:
        for k in (r["kind"], "total"):
            row = table.setdefault(k, {"n": 0, **{m: 0 for m in METRICS}})
            row["n"] += 1
            for m in METRICS:
                row[m] += bool(r["metrics"][m])
    return table


def format_table(table: dict[str, dict[str, int]]) -> str:
    head = f"{'kind':<18} {'n':>5} {'oracle_err':>10} {'verdict':>14} {'first':>14} {'all':>14} {'fp':>4} {'miss':>5} {'crash':>5}"
    lines = [head, "-" * len(head)]

    def pct(a, n):
        return f"{a:>5} {100 * a / n:5.1f}%" if n else f"{a:>5}    -  "
    order = [k for k in KINDS if k in table] + [k for k in table if k not in KINDS and k != "total"] + ["total"]
    for k in order:
        if k not in table:
            continue
        r = table[k]
        n = r["n"]
        lines.append(f"{k:<18} {n:>5} {r['oracle_err']:>10} {pct(r['verdict'], n):>14} {pct(r['first'], n):>14} "
                     f"{pct(r['all'], n):>14} {r['fp']:>4} {r['miss']:>5} {r['crash']:>5}")
    return "\n".join(lines)


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\b\d+\b")


def template(message: str | None) -> str:
    """``message`` with quoted parts and numbers replaced by ``_``: groups similar messages."""
    return _QUOTED.sub("_", message or "")[:110]


def category(m: dict) -> str:
    """How the first errors differ."""
    if m["crash"]:
        return "crash"
    o, u = m["oracle_first"], m["ours_first"]
    if o is None:
        return "false positive"
    if u is None:
        return "miss"
    same_pos = tuple(o[:2]) == tuple(u[:2])
    if same_pos:
        return "same position, other message"
    if o[3] == u[3]:
        return "same message, other position"
    if o[0] == u[0]:
        return "same line, other column and message"
    return "other line and message"


def format_disagreements(records: list[dict], show: int) -> str:
    out = []
    bad = [r for r in records if not r["metrics"]["first"]]
    cats = collections.Counter(category(r["metrics"]) for r in bad)
    out.append(f"first-error disagreements: {len(bad)}")
    for c, n in cats.most_common():
        out.append(f"  {n:>5}  {c}")
    groups = collections.Counter(
        (category(r["metrics"]), template((r["metrics"]["oracle_first"] or (0, 0, "", "(accepts)"))[3]))
        for r in bad)
    out.append("most frequent (category, NVIDIA's first message with quotes/numbers as _):")
    for (c, t), n in groups.most_common(20):
        out.append(f"  {n:>5}  {c}: {t}")
    if show:
        out.append(f"first {min(show, len(bad))} disagreements:")
        for r in bad[:show]:
            m = r["metrics"]
            e = r["edit"]
            out.append(f"- #{r['id']} {r['source']} [{r['kind']}] edit {e[0]}:{e[1]} "
                       f"{e[2][:60]!r} -> {e[3][:60]!r}{' (truncate)' if r.get('truncate') else ''}")
            out.append(f"    NVIDIA: {_fmt(m['oracle_first'])}")
            out.append(f"    ours:   {_fmt(m['ours_first'])}" + (f"  [{r.get('status')}]" if m["crash"] else ""))
    return "\n".join(out)


def _fmt(d) -> str:
    return "(no error)" if d is None else f"{d[0]}:{d[1]}: {d[3]}"


# ---------------------------------------------------------------------------
# Sampling and the pipeline
# ---------------------------------------------------------------------------


@dataclass
class Mutation:
    id: int
    source: str
    kind: str
    edit: Edit
    oracle: list[Diag] = field(default_factory=list)
    oracle_status: str = "ok"


def _oracle_worker(args):
    oracle, path = args
    return run_oracle(oracle, path)


def _ours_worker(paths):
    return run_ours(paths)


def valid_bases(corpus: Path, oracle: str, jobs: int, tmp: Path) -> dict[str, str]:
    """``{source: text}`` of the unmutated texts the oracle accepts without an error."""
    sources = kernel_sources(corpus) + conformance_sources(corpus)
    texts = {s: load_base(corpus, s) for s in sources}
    texts = {s: t for s, t in texts.items() if t.strip()}
    paths = {}
    for i, s in enumerate(texts):
        p = tmp / f"base{i:05d}.mlir"
        p.write_text(texts[s], encoding="utf-8")
        paths[s] = str(p)
    with cf.ProcessPoolExecutor(jobs) as pool:
        results = dict(zip(paths, pool.map(_oracle_worker, [(oracle, paths[s]) for s in paths], chunksize=8)))
    return {s: texts[s] for s, (status, diags) in results.items()
            if status == "ok" and not any(d[2] == "error" for d in diags)}


def make_mutations(bases: dict[str, str], kinds: list[str], count: int, seed: int) -> list[Mutation]:
    """``count`` seeded mutations, kinds in turn, each of a random base text."""
    rng = random.Random(seed)
    sources = sorted(bases)
    out: list[Mutation] = []
    seen = set()
    tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        kind = kinds[len(out) % len(kinds)]
        src = rng.choice(sources)
        edit = MUTATORS[kind](bases[src].split("\n"), rng)
        if edit is None:
            continue
        key = (src, edit.line, edit.col, edit.old, edit.new, edit.truncate)
        if key in seen or apply_edit(bases[src], edit) == bases[src]:
            continue
        seen.add(key)
        out.append(Mutation(len(out), src, kind, edit))
    return out


def check_ours(texts: list[tuple[int, str]], jobs: int, tmp: Path) -> dict[int, tuple[str, list[Diag]]]:
    """Run tile-lsp over ``[(id, text)]``: ``{id: (status, diagnostics)}``."""
    paths = {}
    for i, t in texts:
        p = tmp / f"m{i:05d}.mlir"
        p.write_text(t, encoding="utf-8")
        paths[str(p)] = i
    plist = list(paths)
    batches = [plist[k:k + BATCH] for k in range(0, len(plist), BATCH)]
    out = {}
    with cf.ProcessPoolExecutor(jobs) as pool:
        for res in pool.map(_ours_worker, batches):
            for p, v in res.items():
                out[paths[p]] = v
    return out


def evaluate(muts: list[Mutation], bases: dict[str, str], jobs: int, tmp: Path) -> list[dict]:
    """Run tile-lsp on every mutation and compare with its oracle diagnostics."""
    texts = [(m.id, apply_edit(bases[m.source], m.edit)) for m in muts]
    ours = check_ours(texts, jobs, tmp)
    records = []
    for m in muts:
        status, diags = ours[m.id]
        metrics = compare(m.oracle, diags, status)
        records.append({"id": m.id, "source": m.source, "kind": m.kind, **m.edit.to_json(),
                        "status": status, "oracle": m.oracle, "ours": diags, "metrics": metrics})
    return records


def sample_record(m: Mutation, bases: dict[str, str]) -> dict:
    return {"source": m.source, "sha": sha(bases[m.source]), "kind": m.kind, **m.edit.to_json(),
            "oracle": [list(d) for d in m.oracle]}


def load_sample(path: Path, corpus: Path) -> tuple[list[Mutation], dict[str, str], int]:
    """Mutations of a stored sample, their base texts, and how many were skipped (corpus changed)."""
    if path.is_dir():
        path = path / "sample.jsonl"
    muts, bases, skipped = [], {}, 0
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        d = json.loads(line)
        if d["source"] not in bases:
            try:
                bases[d["source"]] = load_base(corpus, d["source"])
            except (OSError, IndexError, UnicodeDecodeError):
                bases[d["source"]] = ""
        if sha(bases[d["source"]]) != d["sha"]:
            skipped += 1
            continue
        muts.append(Mutation(i, d["source"], d["kind"], Edit.from_json(d),
                             [tuple(x) for x in d["oracle"]]))
    return muts, bases, skipped


def find_oracle(given: str | None) -> str | None:
    """NVIDIA's ``cuda-tile-opt``: ``given``, ``$CUDA_TILE_OPT``, ``PATH`` or ``~/.local/bin``; ``None`` if absent."""
    for cand in (given, os.environ.get("CUDA_TILE_OPT"), shutil.which("cuda-tile-opt"),
                 str(Path.home() / ".local" / "bin" / "cuda-tile-opt")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS))
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--count", type=int, default=2400)
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--oracle", help="cuda-tile-opt (default: $CUDA_TILE_OPT, PATH, ~/.local/bin)")
    ap.add_argument("--out", help="write report.json (all records) here")
    ap.add_argument("--save-sample", metavar="DIR", help="write the sample with the oracle's output as DIR/sample.jsonl")
    ap.add_argument("--from-sample", metavar="DIR", help="re-check a stored sample (no oracle needed)")
    ap.add_argument("--show", type=int, default=10, help="list this many disagreements")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"corpus not found: {corpus}", file=sys.stderr)
        return 2
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="tile-diff-") as tmpname:
        tmp = Path(tmpname)
        if args.from_sample:
            muts, bases, skipped = load_sample(Path(args.from_sample), corpus)
            muts = [m for m in muts if m.kind in args.kinds]
            print(f"sample: {len(muts)} mutations ({skipped} skipped: their corpus text changed)")
        else:
            oracle = find_oracle(args.oracle)
            if oracle is None:
                print("cuda-tile-opt not found: build it with ../shared/tools/cuda-tile-opt/build.sh "
                      "or give --oracle", file=sys.stderr)
                return 2
            bases = valid_bases(corpus, oracle, args.jobs, tmp)
            print(f"valid base texts: {len(bases)} "
                  f"({sum(s.startswith('kernels/') for s in bases)} kernels, "
                  f"{sum(not s.startswith('kernels/') for s in bases)} conformance chunks)  [{time.time() - t0:.0f} s]")
            muts = make_mutations(bases, args.kinds, args.count, args.seed)
            mpaths = []
            for m in muts:
                p = tmp / f"o{m.id:05d}.mlir"
                p.write_text(apply_edit(bases[m.source], m.edit), encoding="utf-8")
                mpaths.append(str(p))
            with cf.ProcessPoolExecutor(args.jobs) as pool:
                for m, (status, diags) in zip(muts, pool.map(_oracle_worker, [(oracle, p) for p in mpaths],
                                                             chunksize=16)):
                    m.oracle_status, m.oracle = status, diags
            bad = [m for m in muts if m.oracle_status != "ok"]
            if bad:
                print(f"oracle failed on {len(bad)} mutations (left out): "
                      + ", ".join(sorted(collections.Counter(m.oracle_status for m in bad))))
                for m in bad:
                    e = m.edit
                    print(f"  {m.source} [{m.kind}] edit {e.line}:{e.col} {e.old[:50]!r} -> {e.new[:50]!r}"
                          f"{' (truncate)' if e.truncate else ''}: {m.oracle_status}")
            muts = [m for m in muts if m.oracle_status == "ok"]
            print(f"oracle: {len(muts)} mutations  [{time.time() - t0:.0f} s]")
            if args.save_sample:
                d = Path(args.save_sample)
                d.mkdir(parents=True, exist_ok=True)
                with open(d / "sample.jsonl", "w", encoding="utf-8") as fh:
                    for m in muts:
                        fh.write(json.dumps(sample_record(m, bases), ensure_ascii=False,
                                            separators=(",", ":")) + "\n")
                print(f"sample written: {d / 'sample.jsonl'}")
        records = evaluate(muts, bases, args.jobs, tmp)
    table = summarize(records)
    print(f"tile-lsp checked  [{time.time() - t0:.0f} s]\n")
    print(format_table(table))
    print()
    print(format_disagreements(records, args.show))
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(json.dumps({"table": table, "records": records}, indent=1,
                                                    ensure_ascii=False), encoding="utf-8")
        print(f"report: {out / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""NVIDIA's own tools as a second opinion: ``tileiras``, ``tileirdisasm``, ``cuobjdump``.

The tools come from PyPI (the ``nvidia`` extra of tile-lsp):
``nvidia-cuda-tileiras`` ships ``tileiras`` (Tile IR bytecode -> cubin) and
``tileirdisasm`` (bytecode -> MLIR text); ``nvidia-cuda-cuobjdump`` ships
``cuobjdump``.  They are located through the installed distributions'
file lists (:func:`find_tools`), never through a fixed path.

:func:`compile_with_tileiras` writes our bytecode
(:func:`tile_lsp.bytecode.writer.write_bytecode`), runs ``tileiras`` on it
and returns a :class:`TileirasResult`: tileiras' diagnostics as our
:class:`~tile_lsp.analysis.ir.diagnostics.Diagnostic` objects and, on success,
per-kernel facts of the cubin read with ``cuobjdump``.

Mapping diagnostics to lines: tileiras prints the errors of its bytecode
verifier without a location (``error: 'cuda_tile.absf' op failed to
verify ...``), even when the bytecode carries debug info, so an error is
mapped by op order: it goes to the op of that name in the text; when
several ops have the name, to the first one on which our own verifier also
reports an error, else to the first one in pre-order (MLIR's verifier
stops at the first failing op of a block).  Errors that name no op are
attached as notes of the first mapped diagnostic (or reported at the
first line when none is mapped).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field

from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity
from tile_lsp.dialect.targets import GPU_NAMES as _TARGET_GPU_NAMES

#: PyPI distribution shipping each tool.
TOOL_DISTRIBUTIONS = {
    "tileiras": "nvidia-cuda-tileiras",
    "tileirdisasm": "nvidia-cuda-tileiras",
    "cuobjdump": "nvidia-cuda-cuobjdump",
    "ptxas": "nvidia-cuda-nvcc",
}

#: ``--gpu-name`` values tileiras 13.4/13.5 accept (``tileiras --help``); kept with the
#: target table, :mod:`tile_lsp.dialect.targets`.
GPU_NAMES = _TARGET_GPU_NAMES

DEFAULT_GPU = "sm_90"
SOURCE = "tileiras"


class TileirasUnavailable(RuntimeError):
    """``tileiras`` is not installed (``pip install 'tile-lsp[nvidia]'``)."""


def find_tool(name: str) -> str | None:
    """Path of NVIDIA tool ``name`` from its installed PyPI distribution, or ``None``.

    Looks in the file list (RECORD) of the distribution named in
    :data:`TOOL_DISTRIBUTIONS` for a file ``bin/<name>``; falls back to
    ``PATH``.  Returns ``None`` when the tool is in neither.
    """
    dist_name = TOOL_DISTRIBUTIONS.get(name)
    if dist_name is not None:
        from importlib import metadata  # imported here: ~50 ms that `tile-lsp --check` does not need

        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            dist = None
        if dist is not None:
            for f in dist.files or []:
                parts = f.parts
                if len(parts) >= 2 and parts[-1] == name and parts[-2] == "bin":
                    path = str(dist.locate_file(f))
                    if os.path.isfile(path) and os.access(path, os.X_OK):
                        return path
    return shutil.which(name)


def tileiras_version() -> str | None:
    """The ``release X.Y, VX.Y.Z`` line of ``tileiras --version`` (``None`` without tileiras)."""
    exe = find_tool("tileiras")
    if exe is None:
        return None
    import subprocess  # here, as in the other runs: ~5 ms that `tile-lsp --check` does not need

    out = subprocess.run([exe, "--version"], check=False, capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"release [^\n]*", out)
    return m.group(0) if m else out.strip()


@dataclass
class KernelFacts:
    """What the cubin says about one kernel (``None`` where a fact could not be had).

    ``registers``: registers per thread (cuobjdump ``-res-usage`` ``REG``);
    ``shared_bytes``: static shared memory (``SHARED``); ``stack_bytes``
    (``STACK``) and ``local_bytes`` (``LOCAL``): per-thread stack and local
    memory; ``spill_stores``/``spill_loads``: number of ``STL``/``LDL``
    (local memory store/load) instructions in the kernel's SASS, which is
    where register spills go (tileiras runs ptxas internally and does not
    print ptxas' own ``-v`` spill figures); ``sass_bytes``: size of the
    kernel's ``.text.<name>`` section (cuobjdump ``-elf``), including the
    internal functions it calls; ``sass_instructions``: instructions in its
    SASS listing (cuobjdump ``-sass``).  ``unavailable`` maps each missing
    fact to why.
    """

    name: str
    registers: int | None = None
    shared_bytes: int | None = None
    stack_bytes: int | None = None
    local_bytes: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    sass_bytes: int | None = None
    sass_instructions: int | None = None
    unavailable: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        """Plain-dict form (for the language server)."""
        return {k: getattr(self, k) for k in (
            "name", "registers", "shared_bytes", "stack_bytes", "local_bytes", "spill_stores",
            "spill_loads", "sass_bytes", "sass_instructions", "unavailable")}


@dataclass
class TileirasResult:
    """Outcome of one tileiras run.

    ``ok``: tileiras exited 0 and wrote a cubin; ``returncode``: its exit
    status (``None`` when it did not run: the module could not be written as
    bytecode, see ``diagnostics``); ``diagnostics``: its errors/warnings,
    source ``"tileiras"``; ``kernels``: facts per entry (empty on failure);
    ``cubin``: the cubin bytes; ``output``: tileiras' stdout+stderr;
    ``unavailable``: facts that could not be had at all and why (e.g.
    cuobjdump not installed).
    """

    ok: bool
    gpu_name: str
    returncode: int | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    kernels: list[KernelFacts] = field(default_factory=list)
    cubin: bytes | None = None
    output: str = ""
    unavailable: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        """Plain-dict form without the cubin (for the language server)."""
        return {"ok": self.ok, "gpuName": self.gpu_name, "returncode": self.returncode,
                "diagnostics": [{"message": d.message, "severity": d.severity.name.lower(),
                                 "line": d.range.start.line if d.range else None}
                                for d in self.diagnostics],
                "kernels": [k.to_json() for k in self.kernels],
                "unavailable": list(self.unavailable), "output": self.output}


# -- tileiras diagnostics ----------------------------------------------------

_DIAG_RE = re.compile(r"^(?:(?P<file>[^\s:#][^:]*):(?P<line>\d+):(?P<col>\d+): )?"
                      r"(?P<sev>error|warning|remark|note): (?P<msg>.*)$")
#: A diagnostic at a debug-info location, which tileiras prints as the attribute:
#: ``#cuda_tile.di_loc<loc("kernels.py":612:0) in #cuda_tile.di_subprogram<...>>: error: ...``
#: (the line is one of the source the bytecode was generated from, not of the text).
_DI_LOC_PREFIX_RE = re.compile(r"^#cuda_tile\.di_loc<.*?>: (?=(?:error|warning|remark|note): )")
_OP_RE = re.compile(r"'(?P<op>[A-Za-z_][\w$.]*)' op\b")
_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING, "remark": Severity.REMARK,
             "note": Severity.NOTE}


def _ops_in_order(module) -> list:
    if module is None:
        return []
    return [op for op in module.walk()]


def _op_for(op_name: str, ops: list, own: list[Diagnostic]) -> object | None:
    candidates = [op for op in ops if op.name == op_name]
    if not candidates:
        short = op_name.split(".", 1)[-1]
        candidates = [op for op in ops if op.name.split(".", 1)[-1] == short]
    if not candidates:
        return None
    for op in candidates:
        if op.range is None:
            continue
        for d in own:
            if d.severity == Severity.ERROR and d.range is not None \
                    and op.range.start.line <= d.range.start.line <= op.range.end.line:
                return op
    return candidates[0]


def parse_tileiras_output(output: str, module=None, own: list[Diagnostic] | None = None) -> list[Diagnostic]:
    """tileiras' ``error:``/``warning:`` lines as diagnostics mapped onto ``module``'s ops.

    ``module``: the :class:`~tile_lsp.analysis.ir.core.Module` the bytecode was
    written from (its ops carry text ranges), or ``None``; ``own``: our
    analysis' diagnostics, used to choose among same-named ops (see the
    module docstring).  Lines naming a location ``file:line:col`` keep that
    line (1-based in the text, 0-based in the result).
    """
    ops = _ops_in_order(module)
    own = own or []
    out: list[Diagnostic] = []
    loose: list[tuple[Severity, str]] = []
    for raw in output.splitlines():
        m = _DIAG_RE.match(_DI_LOC_PREFIX_RE.sub("", raw.strip(), count=1))
        if not m:
            continue
        sev, msg = _SEVERITY[m.group("sev")], m.group("msg")
        rng: Range | None = None
        if m.group("line"):
            line, col = int(m.group("line")) - 1, int(m.group("col")) - 1
            rng = Range(Position(line, max(col, 0)), Position(line, max(col, 0)))
        else:
            om = _OP_RE.search(msg)
            op = _op_for(om.group("op"), ops, own) if om else None
            if op is not None and op.range is not None:
                rng = op.name_range or op.range
        if rng is None or sev == Severity.NOTE:
            loose.append((sev, msg))
            continue
        out.append(Diagnostic(sev, msg, rng, code="tileiras", source=SOURCE))
    if loose:
        if out:
            out[0].notes.extend(Note(msg, None) for _, msg in loose)
        else:
            first = next((op.name_range or op.range for op in ops if op.range is not None),
                         Range(Position(0, 0), Position(0, 0)))
            sev = Severity.ERROR if any(s == Severity.ERROR for s, _ in loose) else loose[0][0]
            out.append(Diagnostic(sev, loose[0][1], first, code="tileiras", source=SOURCE,
                                  notes=[Note(msg, None) for _, msg in loose[1:]]))
    return out


# -- cubin facts ---------------------------------------------------------------

_RES_FUNC_RE = re.compile(r"^\s*Function (?P<name>\S+):\s*$")
_RES_KV_RE = re.compile(r"(?P<key>[A-Z]+(?:\[\d+\])?):(?P<val>\d+)")
_ELF_TEXT_RE = re.compile(r"^\s*[0-9a-f]+\s+[0-9a-f]+\s+(?P<size>[0-9a-f]+)\s.*\sPROGBITS\s.*"
                          r"\s\.text\.(?P<name>\S+)\s*$")
_SASS_FUNC_RE = re.compile(r"^\s*Function : (?P<name>\S+)\s*$")
_SASS_INSN_RE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?P<insn>[^;]*);")


def cubin_facts(cubin_path: str, kernels: list[str] | None = None) -> tuple[list[KernelFacts], list[str]]:
    """Per-kernel facts of ``cubin_path`` read with ``cuobjdump``.

    ``kernels``: names to report (default: every function ``-res-usage``
    lists).  Returns ``(facts, unavailable)``; without cuobjdump every fact
    is ``None`` and ``unavailable`` says why.
    """
    exe = find_tool("cuobjdump")
    names = list(kernels or [])
    if exe is None:
        why = "cuobjdump is not installed (pip install nvidia-cuda-cuobjdump)"
        return [KernelFacts(n, unavailable={"all": why}) for n in names], [why]

    import subprocess

    def run(flag: str) -> str:
        return subprocess.run([exe, flag, cubin_path], check=False, capture_output=True, text=True, timeout=120).stdout

    res: dict[str, dict[str, int]] = {}
    current = None
    for line in run("-res-usage").splitlines():
        m = _RES_FUNC_RE.match(line)
        if m:
            current = m.group("name")
            continue
        if current is not None and "REG:" in line:
            res[current] = {k.group("key"): int(k.group("val")) for k in _RES_KV_RE.finditer(line)}
            current = None
    text_size = {m.group("name"): int(m.group("size"), 16)
                 for m in map(_ELF_TEXT_RE.match, run("-elf").splitlines()) if m}
    insns: dict[str, list[str]] = {}
    current = None
    for line in run("-sass").splitlines():
        m = _SASS_FUNC_RE.match(line)
        if m:
            current = m.group("name")
            insns.setdefault(current, [])
            continue
        m = _SASS_INSN_RE.match(line)
        if m and current is not None:
            insns[current].append(m.group("insn").split()[0] if not m.group("insn").startswith("@")
                                  else m.group("insn").split()[1])
    if not names:
        names = list(res)
    out = []
    for n in names:
        k = KernelFacts(n)
        r = res.get(n)
        if r is None:
            k.unavailable["resources"] = "cuobjdump -res-usage lists no such function"
        else:
            k.registers, k.shared_bytes = r.get("REG"), r.get("SHARED")
            k.stack_bytes, k.local_bytes = r.get("STACK"), r.get("LOCAL")
        if n in text_size:
            k.sass_bytes = text_size[n]
        else:
            k.unavailable["sass_bytes"] = "no .text section for this function in cuobjdump -elf"
        if n in insns:
            ops = [i.split(".")[0] for i in insns[n]]
            k.sass_instructions = len(ops)
            k.spill_stores, k.spill_loads = ops.count("STL"), ops.count("LDL")
        else:
            k.unavailable["sass"] = "cuobjdump -sass lists no such function"
        out.append(k)
    return out, []


# -- compile -------------------------------------------------------------------

def _entry_names(module) -> list[str]:
    names = []
    for op in _ops_in_order(module):
        if op.name in ("cuda_tile.entry", "entry"):
            sym = op.attr("sym_name")
            if sym is not None and hasattr(sym, "value"):
                names.append(sym.value)
    return names


def compile_with_tileiras(module_or_bytecode, gpu_name: str = DEFAULT_GPU, *, text: str | None = None,
                          tile_version: str = "13.4", opt_level: int | None = None,
                          timeout: float = 300, facts: bool = True) -> TileirasResult:
    """Compile with NVIDIA's ``tileiras`` and return its verdict and the cubin facts.

    ``module_or_bytecode``: an :class:`~tile_lsp.analysis.ir.core.Module` (written
    with :func:`~tile_lsp.bytecode.writer.write_bytecode` at
    ``tile_version``), MLIR text (analysed first; one module expected), or
    bytecode ``bytes`` (read back with our reader only to name the
    kernels; its diagnostics then have no text range).  ``gpu_name``: one
    of :data:`GPU_NAMES`.  Raises :class:`TileirasUnavailable` when tileiras
    is not installed and ``ValueError`` for an unknown ``gpu_name``; a
    module that cannot be written as bytecode gives a result with
    ``returncode=None`` and the writer's error as a diagnostic.
    ``facts=False`` skips cuobjdump: ``kernels`` then stays empty (the
    cubin is still returned).
    """
    from tile_lsp.bytecode.writer import BytecodeWriteError, write_bytecode

    if gpu_name not in GPU_NAMES:
        raise ValueError(f"unknown gpu name {gpu_name!r}; expected one of {', '.join(GPU_NAMES)}")
    exe = find_tool("tileiras")
    if exe is None:
        raise TileirasUnavailable("tileiras is not installed (pip install 'tile-lsp[nvidia]')")
    own: list[Diagnostic] = []
    if isinstance(module_or_bytecode, str):
        from tile_lsp.analysis.api import analyze_text
        analysis = analyze_text(module_or_bytecode)
        own = analysis.diagnostics
        module = analysis.chunks[0].module if analysis.chunks else None
    else:
        module = module_or_bytecode
    if isinstance(module, (bytes, bytearray)):
        data = bytes(module)
        try:
            from tile_lsp.bytecode.reader import read_bytecode
            module = read_bytecode(data)
        except Exception:  # noqa: BLE001 - tileiras will give its own verdict
            module = None
    else:
        if module is None:
            return TileirasResult(False, gpu_name, None, [Diagnostic(
                Severity.ERROR, "nothing to compile: the text has no module", None,
                code="tileiras", source=SOURCE)])
        try:
            data = write_bytecode(module, version=tile_version)
        except BytecodeWriteError as e:
            return TileirasResult(False, gpu_name, None, [Diagnostic(
                Severity.ERROR, f"cannot write bytecode: {e}", None, code="tileiras", source=SOURCE)])
    import subprocess

    with tempfile.TemporaryDirectory(prefix="tile-lsp-tileiras-") as tmp:
        src, cubin = os.path.join(tmp, "input.tileirbc"), os.path.join(tmp, "output.cubin")
        with open(src, "wb") as f:
            f.write(data)
        cmd = [exe, f"--gpu-name={gpu_name}", src, "-o", cubin]
        if opt_level is not None:
            cmd.insert(1, f"--opt-level={opt_level}")
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout)
        output = (proc.stdout + proc.stderr).replace(src, "<bytecode>")
        result = TileirasResult(proc.returncode == 0 and os.path.exists(cubin), gpu_name,
                                proc.returncode, parse_tileiras_output(output, module, own),
                                output=output)
        if result.ok:
            with open(cubin, "rb") as f:
                result.cubin = f.read()
            if facts:
                result.kernels, result.unavailable = cubin_facts(cubin, _entry_names(module) or None)
    return result


def disassemble(bytecode: bytes, timeout: float = 120, debug_info: bool = False) -> str:
    """MLIR text of ``bytecode`` as NVIDIA's ``tileirdisasm`` prints it (``debug_info``:
    with its debug-info locations, ``tileirdisasm -g``).

    Raises :class:`TileirasUnavailable` without tileirdisasm and
    ``RuntimeError`` (with its message) when it rejects the input.
    """
    exe = find_tool("tileirdisasm")
    if exe is None:
        raise TileirasUnavailable("tileirdisasm is not installed (pip install 'tile-lsp[nvidia]')")
    import subprocess

    with tempfile.TemporaryDirectory(prefix="tile-lsp-disasm-") as tmp:
        src = os.path.join(tmp, "input.tileirbc")
        with open(src, "wb") as f:
            f.write(bytecode)
        cmd = [exe, "-g", src] if debug_info else [exe, src]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip() or f"tileirdisasm exited {proc.returncode}")
    return proc.stdout


# -- CLI hooks -----------------------------------------------------------------

def add_tileiras_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--with-tileiras[=GPU]`` (default GPU :data:`DEFAULT_GPU`) to ``parser``.

    After parsing, ``args.with_tileiras`` is ``None`` (off) or a gpu name.
    """
    parser.add_argument("--with-tileiras", nargs="?", const=DEFAULT_GPU, default=None,
                        choices=GPU_NAMES, metavar="GPU",
                        help="also compile each file with NVIDIA's tileiras for GPU "
                             f"(default {DEFAULT_GPU}; needs 'pip install tile-lsp[nvidia]') "
                             "and report its errors")


def tileiras_diagnostics(path: str, text: str, gpu_name: str = DEFAULT_GPU) -> list[Diagnostic]:
    """tileiras' diagnostics for the file ``path`` with contents ``text``.

    Each ``// -----`` chunk is not split: the text must hold one module.
    When tileiras is not installed, returns one warning saying so (the
    check still runs); ``path`` is only used in that message.
    """
    try:
        result = compile_with_tileiras(text, gpu_name)
    except TileirasUnavailable as e:
        return [Diagnostic(Severity.WARNING, f"{path}: --with-tileiras: {e}", None,
                           code="tileiras", source=SOURCE)]
    return result.diagnostics

"""``tile-lsp ptx`` and ``tile-lsp lower``: the lowering on the command line.

``tile-lsp ptx FILE [--gpu-name sm_90] [--kernel NAME] [-o OUT] [--ptxas] [--op-counts]``
prints (or writes) the PTX module; ``tile-lsp lower FILE --stage NAME``
prints one stage of the pipeline (:data:`tile_lsp.codegen.STAGES`).
``--op-counts`` prints, instead of the PTX (which ``-o`` still writes), one
line per op that emitted instructions, in source order:
``LINE:COL<TAB>KERNEL<TAB>N<TAB>OPNAME`` (1-based line and column of the op's
start, N its PTX instructions: a static count of the text,
:attr:`~tile_lsp.codegen.passes.LoweringResult.op_counts`).
Diagnostics go to stderr in MLIR's text form.  Without ``--gpu-name``, the
``gpu-name`` of the file's configuration (``tile-lsp.toml`` or
``pyproject.toml`` ``[tool.tile-lsp]``, :mod:`tile_lsp.config`) applies, else
the module's compute capability, else sm_90.  Exit status: 0 on success,
1 when the lowering (or ptxas, with ``--ptxas``) reported errors, 2 on a
usage, I/O or configuration error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from tile_lsp.analysis.ir.diagnostics import Severity, SourceText
from tile_lsp.codegen.pipeline import STAGES, LoweringResult, lower_text
from tile_lsp.report import format_text


PTX_EXAMPLES = """\
examples:
  tile-lsp ptx kernel.mlir                          # PTX on stdout
  tile-lsp ptx kernel.mlir --gpu-name sm_80 -o kernel.ptx
  tile-lsp ptx kernel.tileirbc --kernel vector_add --ptxas   # and ptxas' verdict
  tile-lsp ptx kernel.mlir --op-counts              # LINE:COL, kernel, PTX instructions, op per line

exit status: 0 success, 1 lowering (or ptxas) errors, 2 usage, I/O or configuration error.
"""

LOWER_EXAMPLES = """\
examples:
  tile-lsp lower kernel.mlir --stage legal
  tile-lsp lower kernel.mlir --stage nv_tileas --gpu-name sm_100

exit status: 0 success, 1 lowering errors, 2 usage, I/O or configuration error.
"""


def _parser(prog: str, stage: bool) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=(
        "Print one stage of the cuda_tile lowering pipeline." if stage else
        "Lower a cuda_tile module to PTX."), epilog=LOWER_EXAMPLES if stage else PTX_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="cuda_tile text (.mlir / .tileir) or bytecode (.tileirbc)")
    p.add_argument("--gpu-name", default=None,
                   help="target GPU, sm_80 ... sm_120 (default: gpu-name of the configuration file, "
                        "else the module's compute capability, else sm_90)")
    p.add_argument("--kernel", default=None, help="lower only this entry")
    p.add_argument("-o", dest="output", default=None, help="write to this file instead of stdout")
    if stage:
        p.add_argument("--stage", required=True, choices=STAGES, help="the stage to print")
    else:
        p.add_argument("--ptxas", action="store_true",
                       help="also assemble the PTX with ptxas (PyPI nvidia-cuda-nvcc) and report its verdict")
        p.add_argument("--op-counts", action="store_true",
                       help="print instead of the PTX (-o still writes it) one line per op: "
                            "LINE:COL<TAB>KERNEL<TAB>INSTRUCTIONS<TAB>OP, 1-based, a static count "
                            "(an op in a loop body counts once)")
    return p


def _read(path: str) -> str:
    p = Path(path)
    if p.suffix == ".tileirbc":
        from tile_lsp.analysis.ir.printer import print_module
        from tile_lsp.bytecode.reader import read_bytecode

        return print_module(read_bytecode(p.read_bytes()))
    return p.read_text(encoding="utf-8")


def _report(path: str, text: str, result: LoweringResult) -> None:
    if result.diagnostics:
        sys.stderr.write(format_text([(path, SourceText(text), result.diagnostics)]))


def op_count_lines(result: LoweringResult) -> list[str]:
    """``--op-counts``' lines for ``result``: ``LINE:COL\tKERNEL\tN\tOPNAME`` per counted op (1-based
    position of the op's start; N: its PTX instructions, static), in source order."""
    rows = sorted((pos, kernel, count) for kernel, ops in result.op_counts.items() for pos, count in ops.items())
    return [f"{line + 1}:{col + 1}\t{kernel}\t{count.instructions}\t{count.op}"
            for (line, col), kernel, count in rows]


def find_ptxas() -> str | None:
    """Path of ``ptxas`` from the PyPI package ``nvidia-cuda-nvcc`` (``None`` when not installed)."""
    from tile_lsp.nvidia import find_tool

    return find_tool("ptxas")


def run_ptxas(ptx: str, gpu_name: str, timeout: float = 300) -> tuple[bool, str]:
    """Assemble ``ptx`` for ``gpu_name``; returns (accepted, ptxas output).  ``FileNotFoundError`` without ptxas."""
    exe = find_ptxas()
    if exe is None:
        raise FileNotFoundError("ptxas not found (pip install nvidia-cuda-nvcc)")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        proc = subprocess.run([exe, "--gpu-name", gpu_name, str(src), "-o", str(Path(tmp) / "kernel.cubin")],
                              capture_output=True, text=True, timeout=timeout, check=False)
    return proc.returncode == 0, (proc.stdout + proc.stderr).replace(str(src), "kernel.ptx")


def main(argv: list[str], stage: bool) -> int:
    """Entry point of ``tile-lsp ptx`` (``stage=False``) and ``tile-lsp lower`` (``stage=True``)."""
    try:
        args = _parser("tile-lsp lower" if stage else "tile-lsp ptx", stage).parse_args(argv)
    except SystemExit as exc:  # argparse: 2 on a usage error, 0 on --help
        return int(exc.code or 0)
    if args.gpu_name is None:
        from tile_lsp.config import ConfigError, ConfigResolver

        try:
            args.gpu_name = ConfigResolver().for_path(Path(args.file)).get("gpu-name")
        except ConfigError as exc:
            sys.stderr.write(f"tile-lsp: error: {exc}\n")
            return 2
    try:
        text = _read(args.file)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        sys.stderr.write(f"tile-lsp: error: cannot read '{args.file}': {exc}\n")
        return 2
    except Exception as exc:  # noqa: BLE001 - a malformed .tileirbc: the reader's message, no traceback
        sys.stderr.write(f"tile-lsp: error: {args.file}: {exc}\n")
        return 2
    want = args.stage if stage else "ptx"
    result = lower_text(text, args.gpu_name, args.kernel, file_name=Path(args.file).name, stop_after=want)
    _report(args.file, text, result)
    out = result.stages.get(want)
    if out is None or any(d.severity == Severity.ERROR for d in result.diagnostics):
        return 1
    status = 0
    if not stage and args.ptxas:
        try:
            ok, log = run_ptxas(out, result.target.name)
        except FileNotFoundError as exc:
            sys.stderr.write(f"tile-lsp: error: {exc}\n")
            return 2
        if log.strip():
            sys.stderr.write(log)
        status = 0 if ok else 1
    if args.output:
        Path(args.output).write_text(out)
    if not stage and args.op_counts:
        sys.stdout.write("".join(line + "\n" for line in op_count_lines(result)))
    elif not args.output:
        sys.stdout.write(out)
    return status

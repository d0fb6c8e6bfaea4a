"""``tile-lsp translate``: MLIR text <-> Tile IR bytecode.

Usage::

    tile-lsp translate --to-bytecode [--bytecode-version V] IN.mlir -o OUT.tileirbc
    tile-lsp translate --from-bytecode [-g] IN.tileirbc -o OUT.mlir

``IN``/``OUT`` may be ``-`` for stdin/stdout.  ``--to-bytecode`` parses and
verifies the text first and refuses to write a file with errors; the text's
``#cuda_tile.di_loc`` locations become the bytecode's debug info.
``--from-bytecode`` prints exactly what NVIDIA's ``tileirdisasm IN`` prints
(:mod:`tile_lsp.bytecode.disasm`: the entries at column 0 without a module
around them, floats as MLIR's C++ printer writes them); ``-g`` adds the debug
info as ``loc(#alias)`` and alias definitions exactly as ``tileirdisasm -g``,
so that the text translates back to the same bytecode.  ``--generic`` prints
MLIR's generic op form inside ``"builtin.module"`` (with ``-g``: the locations
as ``--mlir-print-debuginfo``).  Exit codes: 0 success, 1 bad input
(diagnostics or a bytecode error on stderr), 2 usage.  ``--tile-version``
is the deprecated spelling of ``--bytecode-version`` here (elsewhere it
names the Tile IR release whose rules apply); it still works, with a
warning on stderr.
"""

from __future__ import annotations

import argparse
import sys

from tile_lsp.bytecode import format as F
from tile_lsp.bytecode.reader import BytecodeError, read_bytecode
from tile_lsp.bytecode.writer import BytecodeWriteError, write_bytecode


EXAMPLES = """\
examples:
  tile-lsp translate --to-bytecode kernel.mlir -o kernel.tileirbc
  tile-lsp translate --to-bytecode --bytecode-version 13.1 kernel.mlir -o kernel.tileirbc
  tile-lsp translate --from-bytecode kernel.tileirbc            # as tileirdisasm prints it
  tile-lsp translate --from-bytecode -g kernel.tileirbc -o kernel.mlir   # with debug info
  cat kernel.mlir | tile-lsp translate --to-bytecode - -o - > kernel.tileirbc

exit status: 0 success, 1 bad input (diagnostics on stderr), 2 usage error.
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tile-lsp translate",
                                description="Translate between cuda_tile MLIR text and Tile IR bytecode.",
                                epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--to-bytecode", action="store_true", help="MLIR text -> bytecode")
    mode.add_argument("--from-bytecode", action="store_true", help="bytecode -> MLIR text")
    versions = [F.version_text(v) for v in F.SUPPORTED_VERSIONS]
    p.add_argument("--bytecode-version", default=None, choices=versions,
                   help=f"bytecode version to write (default {F.version_text(F.MAX_VERSION)})")
    p.add_argument("--tile-version", dest="deprecated_tile_version", default=None, choices=versions,
                   help="deprecated spelling of --bytecode-version")
    p.add_argument("--generic", action="store_true", help="with --from-bytecode: print the generic op form")
    p.add_argument("-g", "--print-debug-info", action="store_true",
                   help="with --from-bytecode: print the debug-info locations (as tileirdisasm -g)")
    p.add_argument("input", help="input file ('-' for stdin)")
    p.add_argument("-o", "--output", default="-", help="output file ('-' for stdout)")
    return p


def _read_input(path: str, binary: bool) -> bytes | str:
    if path == "-":
        return sys.stdin.buffer.read() if binary else sys.stdin.read()
    with open(path, "rb" if binary else "r", **({} if binary else {"encoding": "utf-8"})) as f:
        return f.read()


def _write_output(path: str, data: bytes | str) -> None:
    if path == "-":
        if isinstance(data, bytes):
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
        return
    with open(path, "wb" if isinstance(data, bytes) else "w",
              **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as f:
        f.write(data)


def translate_main(argv: list[str]) -> int:
    """Run ``tile-lsp translate`` with ``argv`` (the arguments after ``translate``); returns the exit code."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) if e.code in (0, None) else 2
    if args.deprecated_tile_version is not None:
        print("tile-lsp translate: warning: --tile-version is deprecated here; use --bytecode-version "
              "(--tile-version names the rules' Tile IR release in 'tile-lsp check')", file=sys.stderr)
        if args.bytecode_version is not None and args.bytecode_version != args.deprecated_tile_version:
            print("tile-lsp translate: error: --tile-version and --bytecode-version disagree", file=sys.stderr)
            return 2
    args.bytecode_version = args.bytecode_version or args.deprecated_tile_version or F.version_text(F.MAX_VERSION)
    try:
        if args.from_bytecode:
            return _from_bytecode(args)
        return _to_bytecode(args)
    except OSError as e:
        print(f"tile-lsp translate: {e}", file=sys.stderr)
        return 1


def _from_bytecode(args: argparse.Namespace) -> int:
    from tile_lsp.analysis.ir.printer import print_module
    from tile_lsp.bytecode.disasm import disassemble, disassemble_with_locations
    from tile_lsp.bytecode.locations import print_with_locations

    data = _read_input(args.input, binary=True)
    try:
        module = read_bytecode(data)
    except BytecodeError as e:
        where = f" at offset {e.offset}" if e.offset is not None else ""
        print(f"{args.input}: error{where}: {e.message}", file=sys.stderr)
        return 1
    if args.generic:
        printer = print_with_locations if args.print_debug_info else print_module
        text = printer(module, generic=True)
    elif args.print_debug_info:
        text = disassemble_with_locations(module)
    else:
        text = disassemble(module)
    _write_output(args.output, text)
    return 0


def _to_bytecode(args: argparse.Namespace) -> int:
    from tile_lsp.analysis.api import AnalysisOptions, analyze_text
    from tile_lsp.analysis.ir.diagnostics import Severity

    text = _read_input(args.input, binary=False)
    analysis = analyze_text(text, AnalysisOptions())
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    if errors:
        for d in errors:
            pos = f"{d.range.start.line + 1}:{d.range.start.character + 1}:" if d.range else ""
            print(f"{args.input}:{pos} error: {d.message}", file=sys.stderr)
        return 1
    if len(analysis.chunks) != 1:
        print(f"{args.input}: error: expected one module, got {len(analysis.chunks)} '// -----' chunks",
              file=sys.stderr)
        return 1
    try:
        data = write_bytecode(analysis.chunks[0].module, version=args.bytecode_version)
    except BytecodeWriteError as e:
        print(f"{args.input}: error: {e}", file=sys.stderr)
        return 1
    _write_output(args.output, data)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(translate_main(sys.argv[1:]))

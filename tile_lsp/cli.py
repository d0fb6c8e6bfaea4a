"""The ``tile-lsp`` command line.

``tile-lsp --check PATH...`` checks files (directories are searched for
``*.mlir`` and ``*.tileir``) and prints MLIR-style diagnostics; options
may come before or after the paths (``tile-lsp --check --format json
FILE``); it exits 0
when no error was found, 1 when there are errors and 2 on a usage or I/O
error.  ``tile-lsp serve`` runs the language server over stdio.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tile_lsp import __version__
from tile_lsp.analysis.diagnostics import Diagnostic, Position, Range, Severity, SourceText

EXTENSIONS = (".mlir", ".tileir")
EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A usage or I/O error: printed as ``tile-lsp: error: ...``, exit status 2."""


def _check_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tile-lsp",
        description="Language server and checker for NVIDIA CUDA Tile IR text. "
                    "Subcommands: 'tile-lsp serve' runs the language server over stdio; "
                    "'tile-lsp translate --to-bytecode|--from-bytecode IN -o OUT' converts between "
                    "text and Tile IR bytecode; 'tile-lsp ptx FILE' lowers a kernel to PTX and "
                    "'tile-lsp lower FILE --stage NAME' prints a stage of that lowering.",
    )
    p.add_argument("--version", action="version", version=f"tile-lsp {__version__}")
    p.add_argument("--check", action="store_true",
                   help="check the PATHs: files, or directories searched for *.mlir and *.tileir")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="what --check checks; options may come before or after the paths")
    p.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text",
                   help="output format (default: text, as MLIR's tools print)")
    p.add_argument("--split-input-file", action="store_true",
                   help="analyse each '// -----' chunk on its own (mlir-opt -split-input-file)")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check expected-error/warning/note/remark annotations (mlir-opt -verify-diagnostics)")
    p.add_argument("--tile-version", choices=("13.1", "13.2", "13.3"), default=None,
                   help="targeted Tile IR version; newer ops, types and attributes are reported")
    p.add_argument("--gpu-name", type=_gpu_name, default=None, metavar="sm_XX",
                   help="target GPU, as tileiras' --gpu-name (" + ", ".join(_gpu_names()) + "): also report "
                        "what tileiras refuses for it (e.g. f8 types before sm_89), with tileiras' text")
    p.add_argument("-Wunsupported-hints", dest="warn_unsupported_hints", action="store_true",
                   help="warn about optimization hints that are unknown or unsupported (as cuda-tile-opt)")
    p.add_argument("-Werr-hints", dest="error_unsupported_hints", action="store_true",
                   help="with -Wunsupported-hints, such hints are errors")
    p.add_argument("--quiet", action="store_true", help="text format: omit the closing summary line")
    from tile_lsp.nvidia import add_tileiras_option

    add_tileiras_option(p)
    return p


def _gpu_names() -> tuple[str, ...]:
    from tile_lsp.dialect.targets import GPU_NAMES

    return GPU_NAMES


def _gpu_name(value: str) -> int:
    """``--gpu-name`` value -> compute capability (``sm_80`` -> 80); only the names tileiras accepts."""
    if value not in _gpu_names():
        raise argparse.ArgumentTypeError(
            f"invalid GPU name '{value}'; expected one of: {', '.join(_gpu_names())}")
    return int(value[len("sm_"):])


def collect_files(paths: list[str]) -> list[Path]:
    """Files named by ``paths``: files as given, directories searched recursively.

    Raises :class:`UsageError` for a missing path or a directory with no IR file.
    """
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in EXTENSIONS)
            if not found:
                raise UsageError(f"no *.mlir or *.tileir files under '{raw}'")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        elif p.exists():
            raise UsageError(f"'{raw}' is not a regular file or directory")
        else:
            raise UsageError(f"no such file or directory: '{raw}'")
    return out


@dataclass
class FileResult:
    """The diagnostics of one checked file and the text they refer to."""

    path: str
    source: SourceText
    diagnostics: list[Diagnostic] = field(default_factory=list)
    chunks_total: int = 0
    chunks_passed: int = 0


def read_text(path: Path) -> tuple[str | None, Diagnostic | None]:
    """Read ``path`` as UTF-8; a binary or undecodable file gives a diagnostic instead.

    Raises :class:`UsageError` when the file cannot be read.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read '{path}': {exc.strerror or exc}") from exc
    if b"\x00" in data:
        offset = data.index(b"\x00")
        return None, Diagnostic(Severity.ERROR,
                                f"not a text file: NUL byte at offset {offset} (binary input; "
                                "Tile IR bytecode is not read by --check yet)",
                                Range(Position(0, 0), Position(0, 0)), "input.binary")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n")
        return None, Diagnostic(Severity.ERROR,
                                f"invalid UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                                f"cannot be decoded",
                                Range(Position(line, 0), Position(line, 0)), "input.encoding")


def bytecode_as_text(path: Path) -> tuple[str | None, Diagnostic | None]:
    """Read a ``.tileirbc`` file and print it as text (diagnostics then refer to that print).

    A malformed file gives a diagnostic naming the byte offset.  Raises
    :class:`UsageError` when the file cannot be read.
    """
    from tile_lsp.analysis.printer import print_module
    from tile_lsp.bytecode.reader import BytecodeError, read_bytecode

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read '{path}': {exc.strerror or exc}") from exc
    try:
        return print_module(read_bytecode(data)), None
    except BytecodeError as exc:
        return None, Diagnostic(Severity.ERROR, f"invalid Tile IR bytecode: {exc}",
                                Range(Position(0, 0), Position(0, 0)), "input.bytecode")


def check_file(path: Path, args: argparse.Namespace) -> FileResult:
    """Analyse one file according to the command-line options."""
    from tile_lsp.analysis.api import AnalysisOptions, analyze_text

    if path.suffix == ".tileirbc":
        text, problem = bytecode_as_text(path)
    else:
        text, problem = read_text(path)
    if text is None:
        return FileResult(str(path), SourceText(""), [problem], 1, 0)
    options = AnalysisOptions(split_input_file=args.split_input_file, tile_version=args.tile_version,
                              mlir_compat=args.verify_diagnostics,
                              warn_unsupported_hints=args.warn_unsupported_hints,
                              error_unsupported_hints=args.error_unsupported_hints,
                              target_sm=getattr(args, "gpu_name", None))
    analysis = analyze_text(text, options)
    source = SourceText(text)
    if not args.verify_diagnostics:
        diagnostics = list(analysis.diagnostics)
        if getattr(args, "with_tileiras", None):
            # NVIDIA's compiler as a second opinion (tile-lsp[nvidia])
            from tile_lsp.nvidia import tileiras_diagnostics

            diagnostics += tileiras_diagnostics(path, text, args.with_tileiras)
        return FileResult(str(path), source, diagnostics, len(analysis.chunks),
                          sum(1 for c in analysis.chunks if not any(
                              d.severity == Severity.ERROR for d in c.diagnostics)))
    from tile_lsp.analysis.verify_diagnostics import verify

    failures: list[Diagnostic] = []
    passed = 0
    for chunk in analysis.chunks:
        chunk_failures = verify(chunk.chunk.text, chunk.diagnostics, line_offset=chunk.chunk.start_line)
        failures.extend(chunk_failures)
        passed += not chunk_failures
    return FileResult(str(path), source, failures, len(analysis.chunks), passed)


def run_check(args: argparse.Namespace) -> int:
    """``--check``: analyse, print in the chosen format, return the exit status."""
    from tile_lsp import report

    files = collect_files(args.paths)
    results = [check_file(f, args) for f in files]
    entries = [(r.path, r.source, r.diagnostics) for r in results]
    if args.format == "json":
        out = report.format_json(entries)
    elif args.format == "github":
        out = report.format_github(entries)
    elif args.format == "sarif":
        out = report.format_sarif(entries, tool_version=__version__)
    else:
        out = report.format_text(entries)
        if not args.quiet:
            errors, warnings, with_problems = report.count_diagnostics(entries)
            summary = report.format_summary(errors, warnings, with_problems, len(files))
            if args.verify_diagnostics:
                total = sum(r.chunks_total for r in results)
                ok = sum(r.chunks_passed for r in results)
                summary += f"; verify-diagnostics: {ok}/{total} chunks pass"
            out = (out.rstrip("\n") + "\n" if out.strip() else "") + summary
    if out:
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
    has_errors = any(d.severity == Severity.ERROR for r in results for d in r.diagnostics)
    return EXIT_ERRORS if has_errors else EXIT_OK


def _bare_optional_values(argv: list[str]) -> list[str]:
    """``argv`` with ``--with-tileiras`` followed by a path spelled ``--with-tileiras=GPU``, GPU being
    the ``--gpu-name`` of ``argv`` if any, else :data:`tile_lsp.nvidia.DEFAULT_GPU`.

    argparse gives an option with an optional value (``nargs="?"``) the next
    word whatever it is, so ``--with-tileiras FILE`` would take the path as
    the GPU name; a word that is not a GPU name stays a path.
    """
    from tile_lsp.nvidia import DEFAULT_GPU, GPU_NAMES

    default = DEFAULT_GPU  # or the target of --gpu-name, when given
    for i, word in enumerate(argv):
        named = argv[i + 1] if word == "--gpu-name" and i + 1 < len(argv) else word[len("--gpu-name="):] \
            if word.startswith("--gpu-name=") else None
        if named in GPU_NAMES:
            default = named
    out = []
    for i, word in enumerate(argv):
        if word == "--with-tileiras" and (i + 1 >= len(argv) or argv[i + 1] not in GPU_NAMES):
            word = f"--with-tileiras={default}"
        out.append(word)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tile-lsp`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "translate":
        from tile_lsp.bytecode.cli import translate_main

        return translate_main(argv[1:])
    if argv and argv[0] in ("ptx", "lower"):
        from tile_lsp.codegen.cli import main as codegen_main

        return codegen_main(argv[1:], stage=argv[0] == "lower")
    if argv and argv[0] == "serve":
        sp = argparse.ArgumentParser(prog="tile-lsp serve", description="Run the language server over stdio.")
        sp.add_argument("--log-file", help="write the server's log to this file")
        sp.add_argument("--stdio", action="store_true", help="accepted for editor compatibility (default)")
        ns = sp.parse_args(argv[1:])
        from tile_lsp.server.server import serve_stdio

        if ns.log_file:
            import logging

            logging.basicConfig(filename=ns.log_file, level=logging.INFO)
        serve_stdio()
        return EXIT_OK
    parser = _check_parser()
    try:
        args = parser.parse_intermixed_args(_bare_optional_values(argv))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if not args.check or not args.paths:
        parser.print_usage(sys.stderr)
        what = "--check needs at least one PATH" if args.check else "give --check PATH... or the 'serve' subcommand"
        sys.stderr.write(f"tile-lsp: error: nothing to do: {what}\n")
        return EXIT_USAGE
    try:
        return run_check(args)
    except UsageError as exc:
        sys.stderr.write(f"tile-lsp: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

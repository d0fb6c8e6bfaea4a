"""The ``tile-lsp`` command line.

``tile-lsp check PATH...`` checks files (directories are walked for
``*.mlir``, ``*.tileir`` and ``*.tileirbc``, honouring ``.gitignore`` and the
configuration's ``include``/``exclude`` patterns) and prints MLIR-style
diagnostics; ``tile-lsp --check PATH...`` is the same.  Options may come
before or after the paths (``tile-lsp --check --format json FILE``).  It exits
0 when no error was found, 1 when there are errors and 2 on a usage, I/O or
configuration error.  Options not given on the command line come from the
nearest ``tile-lsp.toml`` or ``pyproject.toml`` ``[tool.tile-lsp]``
(:mod:`tile_lsp.config`).  ``tile-lsp serve`` runs the language server over
stdio; ``ptx``, ``lower`` and ``translate`` are the lowering and bytecode
tools.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tile_lsp import __version__
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Position, Range, Severity, SourceText
from tile_lsp.config import FORMATS, TILE_VERSIONS, Config, ConfigError, ConfigResolver

#: Suffixes a directory walk collects by default (``include`` in the configuration).
EXTENSIONS = (".mlir", ".tileir", ".tileirbc")
EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
#: The subcommands, in the order ``tile-lsp --help`` lists them.
SUBCOMMANDS = ("check", "ptx", "lower", "translate", "serve")
#: A progress bar is drawn (on a terminal) from this many files on.
PROGRESS_MIN_FILES = 5


class UsageError(Exception):
    """A usage or I/O error: printed as ``tile-lsp: error: ...``, exit status 2."""


OVERVIEW = """\
usage: tile-lsp COMMAND [OPTIONS] ...      ('tile-lsp COMMAND --help' for each)

Language server and checker for NVIDIA CUDA Tile IR.

commands:
  check PATH...           check files and directories, print diagnostics
  ptx FILE                lower a kernel to PTX
  lower FILE --stage S    print one stage of the lowering
  translate IN -o OUT     convert between Tile IR text and bytecode
  serve                   run the language server over stdio

'tile-lsp --check PATH...' is the same as 'tile-lsp check PATH...'.
Exit status of check: 0 no error, 1 errors found, 2 usage, I/O or configuration error.
Options not given come from the nearest tile-lsp.toml or pyproject.toml [tool.tile-lsp].

examples:
  tile-lsp check kernels/ --format json
  tile-lsp ptx kernel.mlir --gpu-name sm_90
  tile-lsp translate --to-bytecode kernel.mlir -o kernel.tileirbc
  tile-lsp serve
"""

CHECK_EXAMPLES = """\
examples:
  tile-lsp check kernel.mlir                    # diagnostics as MLIR's tools print them
  tile-lsp check kernels/                       # *.mlir, *.tileir, *.tileirbc below kernels/
  tile-lsp check --format json kernel.mlir      # one JSON object per diagnostic
  tile-lsp check --gpu-name sm_80 --tile-version 13.3 kernel.mlir
  tile-lsp check --format github .              # annotations in a GitHub Actions log
  tile-lsp check --format sarif . > tile-lsp.sarif
  tile-lsp check --jobs 0 corpus/               # one process per core
  tile-lsp check --split-input-file --verify-diagnostics invalid.mlir
  tile-lsp --check kernel.mlir --format json    # the same as 'tile-lsp check'

exit status: 0 no error found, 1 errors found, 2 usage, I/O or configuration error.
configuration: the nearest tile-lsp.toml (or pyproject.toml [tool.tile-lsp]) upward
from each file; its keys are the long options without dashes (gpu-name = "sm_90").
"""


def _check_parser(prog: str = "tile-lsp", alias: bool = True) -> argparse.ArgumentParser:
    """The parser of ``tile-lsp check`` (``alias=False``) or of ``tile-lsp --check`` (``alias=True``).

    Options that a configuration file may set default to ``None`` so that
    :func:`resolve_options` can tell them from ones given.
    """
    p = argparse.ArgumentParser(
        prog=prog,
        description="Check CUDA Tile IR files (text or bytecode) and print their diagnostics.",
        epilog=CHECK_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"tile-lsp {__version__}")
    if alias:
        p.add_argument("--check", action="store_true",
                       help="check the PATHs (the same as 'tile-lsp check PATH...')")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files, or directories searched for *.mlir, *.tileir and *.tileirbc; "
                        "options may come before or after the paths")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="output format (default: text, as MLIR's tools print; gitlab: GitLab code quality)")
    p.add_argument("--split-input-file", action=argparse.BooleanOptionalAction, default=None,
                   help="analyse each '// -----' chunk on its own (mlir-opt -split-input-file)")
    p.add_argument("--verify-diagnostics", action=argparse.BooleanOptionalAction, default=None,
                   help="check expected-error/warning/note/remark annotations (mlir-opt -verify-diagnostics)")
    p.add_argument("--tile-version", choices=TILE_VERSIONS, default=None,
                   help="Tile IR release whose rules apply; newer ops, types and attributes are reported")
    p.add_argument("--gpu-name", type=_gpu_name, default=None, metavar="sm_XX",
                   help="target GPU, as tileiras' --gpu-name (" + ", ".join(_gpu_names()) + "): also report "
                        "what tileiras refuses for it (e.g. f8 types before sm_89), with tileiras' text")
    p.add_argument("-Wunsupported-hints", dest="warn_unsupported_hints", action="store_const", const=True,
                   default=None,
                   help="warn about optimization hints that are unknown or unsupported (as cuda-tile-opt)")
    p.add_argument("--warn-unsupported-hints", dest="warn_unsupported_hints",
                   action=argparse.BooleanOptionalAction, default=None, help="the same as -Wunsupported-hints")
    p.add_argument("-Werr-hints", dest="error_unsupported_hints", action="store_const", const=True, default=None,
                   help="with -Wunsupported-hints, such hints are errors")
    p.add_argument("--error-unsupported-hints", dest="error_unsupported_hints",
                   action=argparse.BooleanOptionalAction, default=None, help="the same as -Werr-hints")
    p.add_argument("--quiet", action=argparse.BooleanOptionalAction, default=None,
                   help="text format: omit the closing summary line")
    files = p.add_argument_group("file selection (directory walks)")
    files.add_argument("--include", action="append", metavar="GLOB", default=None,
                       help="files a directory walk collects (gitignore-style; repeatable; "
                            "default *.mlir, *.tileir, *.tileirbc)")
    files.add_argument("--exclude", action="append", metavar="GLOB", default=None,
                       help="paths a walk skips, replacing the configuration's list (repeatable; "
                            "default: .git/, node_modules/, .venv/ and the like)")
    files.add_argument("--extend-exclude", action="append", metavar="GLOB", default=None,
                       help="paths a walk skips, in addition to the exclude list (repeatable)")
    files.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip what .gitignore files ignore (default: on)")
    files.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                       help="apply the exclusions to files named on the command line too (for pre-commit)")
    run = p.add_argument_group("configuration and running")
    run.add_argument("--config", metavar="FILE", default=None,
                     help="use this tile-lsp.toml / pyproject.toml for every file instead of searching")
    run.add_argument("--isolated", action="store_true",
                     help="ignore configuration files: only the command line and the defaults")
    run.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                     help="check files in N processes (default 0: one per core), or a single large "
                          "file's functions; the output is the same, in the same order")
    run.add_argument("--no-cache", action="store_true",
                     help="neither read nor write the result cache (by default a file, options and tile-lsp "
                          "build already checked are answered from it)")
    run.add_argument("--cache-dir", metavar="DIR", default=None,
                     help="the result cache's directory (default: $TILE_LSP_CACHE_DIR, else .tile-lsp-cache "
                          "in the current directory)")
    run.add_argument("--no-progress", action="store_true",
                     help="no progress bar (by default one is drawn on stderr when it is a terminal "
                          f"and {PROGRESS_MIN_FILES} or more files are checked)")
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


def _jobs(value: str) -> int:
    """``--jobs`` value: a number of processes, 0 for one per core."""
    try:
        n = int(value)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"invalid number of jobs '{value}'; expected 0 (one per core) or more")
    return n


#: (attribute of the parsed options, configuration key, default) of the options a file may set
_PER_FILE = (
    ("split_input_file", "split-input-file", False),
    ("verify_diagnostics", "verify-diagnostics", False),
    ("tile_version", "tile-version", None),
    ("warn_unsupported_hints", "warn-unsupported-hints", False),
    ("error_unsupported_hints", "error-unsupported-hints", False),
    ("with_tileiras", "with-tileiras", None),
)
_PER_RUN = (
    ("format", "format", "text"),
    ("quiet", "quiet", False),
    ("jobs", "jobs", 0),
)


def resolve_options(args: argparse.Namespace, config: Config | None, keys=_PER_FILE + _PER_RUN) -> argparse.Namespace:
    """``args`` with each option the command line left out taken from ``config``, else its default.

    ``config`` ``None`` means no configuration file.  ``--gpu-name`` becomes
    the compute capability (``sm_90`` -> ``90``) whichever gave it.  Returns
    a new namespace; ``args`` is not changed.
    """
    out = argparse.Namespace(**vars(args))
    for attr, key, default in keys:
        if getattr(out, attr, None) is None:
            value = config.get(key) if config is not None else None
            setattr(out, attr, default if value is None else value)
    if getattr(out, "gpu_name", None) is None and config is not None and config.get("gpu-name"):
        out.gpu_name = _gpu_name(config.get("gpu-name"))
    return out


@dataclass
class FileResult:
    """The diagnostics of one checked file and the text they refer to."""

    path: str
    source: SourceText
    diagnostics: list[Diagnostic] = field(default_factory=list)
    chunks_total: int = 0
    chunks_passed: int = 0
    #: checked under --verify-diagnostics: the diagnostics are the expectations that failed
    verified: bool = False


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
                                "Tile IR bytecode is read from *.tileirbc files)",
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
    from tile_lsp.analysis.ir.printer import print_module
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


def check_file(path: Path, args: argparse.Namespace, workers: int = 1) -> FileResult:
    """Analyse one file according to the options ``args`` (parsed by :func:`_check_parser`).

    Options left ``None`` take their defaults (no configuration file is read
    here: :func:`run_check` resolves them per file).  ``workers`` > 1 lets a
    large file's functions be analysed by that many processes
    (:mod:`tile_lsp.analysis.incremental.parallel`; same result).  Raises
    :class:`UsageError` when the file cannot be read.
    """
    from tile_lsp.analysis.api import AnalysisOptions

    args = resolve_options(args, None, _PER_FILE)

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
    # tileiras' opinion is not ours to cache; bytecode is decoded afresh (its text is not the file)
    cache = None if getattr(args, "with_tileiras", None) or path.suffix == ".tileirbc" else _cache(args)
    if cache is not None:
        from tile_lsp.check_cache import CachedCheck

        # every option of the analysis is part of the key (plain values: bools, str, int, None)
        key = cache.key(text, tuple(getattr(options, f.name) for f in dataclasses.fields(options)))
        hit = cache.get(key)
        if hit is not None:
            return FileResult(str(path), SourceText(text), hit.diagnostics, hit.chunks_total, hit.chunks_passed,
                              hit.verified)
        result = _analyse(path, text, args, options, workers)
        cache.put(key, CachedCheck(result.diagnostics, result.chunks_total, result.chunks_passed, result.verified))
        return result
    return _analyse(path, text, args, options, workers)


def _cache(args: argparse.Namespace):
    """The :class:`~tile_lsp.check_cache.CheckCache` of this run, or ``None`` with ``--no-cache``."""
    if getattr(args, "no_cache", False):
        return None
    from tile_lsp.check_cache import CheckCache, cache_directory

    return CheckCache(cache_directory(getattr(args, "cache_dir", None)))


def _analyse(path: Path, text: str, args: argparse.Namespace, options, workers: int = 1) -> FileResult:
    """The analysis part of :func:`check_file` (no cache): ``text`` read from ``path``."""
    from tile_lsp.analysis.api import analyze_text

    analysis = analyze_text(text, options, workers=workers)
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
    from tile_lsp.analysis.verify.verify_diagnostics import verify

    failures: list[Diagnostic] = []
    passed = 0
    for chunk in analysis.chunks:
        chunk_failures = verify(chunk.chunk.text, chunk.diagnostics, line_offset=chunk.chunk.start_line)
        failures.extend(chunk_failures)
        passed += not chunk_failures
    return FileResult(str(path), source, failures, len(analysis.chunks), passed, verified=True)


def _check_one(item: tuple[Path, argparse.Namespace], workers: int = 1) -> FileResult:
    """:func:`check_file` on one ``(path, options)`` pair (what a worker process runs), then
    the heap collected if the files checked so far left much behind
    (:func:`tile_lsp.collector.collect_when_grown`)."""
    from tile_lsp.collector import collect_when_grown

    result = check_file(*item, workers=workers)
    collect_when_grown()
    return result


def _progress(total: int, enabled: bool):
    """A tqdm progress bar on stderr for ``total`` files, or ``None`` when none is drawn.

    Drawn only when ``enabled``, stderr is a terminal and ``total`` is at
    least :data:`PROGRESS_MIN_FILES`.
    """
    if not enabled or total < PROGRESS_MIN_FILES or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    try:
        columns, rows = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        columns = rows = 0
    # a terminal that reports no size (0 x 0) would get no bar at all from tqdm
    return tqdm(total=total, file=sys.stderr, unit="file", desc="tile-lsp check", leave=False,
                ncols=min(columns, 100) if columns > 0 else 80, nrows=rows if rows > 0 else 24)


def check_files(items: list[tuple[Path, argparse.Namespace]], jobs: int = 1,
                progress: bool = True) -> list[FileResult]:
    """Check each ``(path, options)`` of ``items``; results in the order of ``items``.

    ``jobs`` > 1 spreads the files over that many processes (0: one per
    core), or a single file's functions; the results are the same as with one.  ``progress``: allow a
    progress bar on stderr (see :func:`_progress`).  Raises
    :class:`UsageError` when a file cannot be read or a worker process dies.
    """
    workers = jobs or os.cpu_count() or 1
    # one file: its functions spread over the processes (the command line has no other thread)
    unit_workers = workers if len(items) == 1 else 1
    workers = min(workers, len(items))
    bar = _progress(len(items), progress)
    try:
        if workers <= 1:
            results = []
            for item in items:
                results.append(_check_one(item, unit_workers))
                if bar is not None:
                    bar.update(1)
            return results
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        from tile_lsp.collector import for_command_line

        with ProcessPoolExecutor(max_workers=workers, initializer=for_command_line) as pool:
            futures = [pool.submit(_check_one, item) for item in items]
            try:
                for future in as_completed(futures):
                    future.result()  # the first failure (a UsageError) stops the run
                    if bar is not None:
                        bar.update(1)
            except BrokenProcessPool as exc:
                raise UsageError(f"a --jobs worker process died ({exc}); try --jobs 1") from None
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            return [f.result() for f in futures]
    finally:
        if bar is not None:
            bar.close()


def _format_output(fmt: str, entries, results: list[FileResult], quiet: bool, files: int) -> str:
    from tile_lsp import report

    if fmt == "json":
        return report.format_json(entries)
    if fmt == "github":
        return report.format_github(entries)
    if fmt == "sarif":
        return report.format_sarif(entries, tool_version=__version__)
    if fmt == "gitlab":
        return report.format_gitlab(entries)
    out = report.format_text(entries)
    if not quiet:
        errors, warnings, with_problems = report.count_diagnostics(entries)
        summary = report.format_summary(errors, warnings, with_problems, files)
        if any(r.verified for r in results):
            total = sum(r.chunks_total for r in results)
            ok = sum(r.chunks_passed for r in results)
            summary += f"; verify-diagnostics: {ok}/{total} chunks pass"
        out = (out.rstrip("\n") + "\n" if out.strip() else "") + summary
    return out


def run_check(args: argparse.Namespace) -> int:
    """``tile-lsp check``: collect, analyse, print in the chosen format, return the exit status.

    Options the command line leaves out come from the configuration file of
    each checked file; the output format, ``--quiet`` and ``--jobs`` from
    the one found from the current directory.  Raises :class:`UsageError`
    for a missing path, an unreadable file or an invalid configuration.
    """
    from tile_lsp.files import PathError, Selection, collect_files

    try:
        resolver = ConfigResolver(Path(args.config) if getattr(args, "config", None) else None,
                                  isolated=bool(getattr(args, "isolated", False)))
        selection = Selection(
            include=tuple(args.include) if getattr(args, "include", None) else None,
            exclude=tuple(args.exclude) if getattr(args, "exclude", None) is not None else None,
            extend_exclude=tuple(getattr(args, "extend_exclude", None) or ()),
            respect_gitignore=getattr(args, "respect_gitignore", None),
            force_exclude=getattr(args, "force_exclude", None))
        files = collect_files(args.paths, resolver, selection)
        run = resolve_options(args, resolver.for_path(Path.cwd()), _PER_RUN)
        items = [(f, resolve_options(args, resolver.for_path(f), _PER_FILE)) for f in files]
    except (PathError, ConfigError) as exc:
        raise UsageError(str(exc)) from None
    results = check_files(items, jobs=run.jobs, progress=not getattr(args, "no_progress", False))
    entries = [(r.path, r.source, r.diagnostics) for r in results]
    out = _format_output(run.format, entries, results, run.quiet, len(files))
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


SERVE_EXAMPLES = """\
examples:
  tile-lsp serve                                # what an editor runs (stdio)
  tile-lsp serve --gpu-name sm_80 --tile-version 13.3
  tile-lsp serve --log-file /tmp/tile-lsp.log

The workspace's tile-lsp.toml (or pyproject.toml [tool.tile-lsp]) sets tile-version,
gpu-name and the hint warnings; these options override it, the editor's settings
override both.
"""


def _serve(argv: list[str]) -> int:
    """``tile-lsp serve``: parse its options and run the language server over stdio."""
    sp = argparse.ArgumentParser(prog="tile-lsp serve", description="Run the language server over stdio.",
                                 epilog=SERVE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp.add_argument("--log-file", help="write the server's log to this file")
    sp.add_argument("--stdio", action="store_true", help="accepted for editor compatibility (default)")
    sp.add_argument("--tile-version", choices=TILE_VERSIONS, default=None,
                    help="Tile IR release whose rules apply (over the workspace's configuration file)")
    sp.add_argument("--gpu-name", choices=_gpu_names(), default=None, metavar="sm_XX",
                    help="target GPU (over the workspace's configuration file)")
    try:
        ns = sp.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    from tile_lsp.server.app import serve_stdio

    if ns.log_file:
        import logging

        logging.basicConfig(filename=ns.log_file, level=logging.INFO)
    overrides = {k: v for k, v in (("tile-version", ns.tile_version), ("gpu-name", ns.gpu_name)) if v}
    serve_stdio(overrides)
    return EXIT_OK


def _run_check(argv: list[str], alias: bool) -> int:
    """``tile-lsp check ARGS`` (``alias=False``) or ``tile-lsp ARGS`` with ``--check`` in ARGS."""
    parser = _check_parser("tile-lsp" if alias else "tile-lsp check", alias=alias)
    try:
        args = parser.parse_intermixed_args(_bare_optional_values(argv))
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    if alias and not args.check:
        sys.stderr.write(OVERVIEW.split("\n\n")[0] + "\n")
        sys.stderr.write("tile-lsp: error: nothing to do: give --check PATH... (or 'tile-lsp check PATH...') "
                         f"or a command: {', '.join(SUBCOMMANDS)}\n")
        return EXIT_USAGE
    if not args.paths:
        parser.print_usage(sys.stderr)
        what = "--check" if alias else "check"
        sys.stderr.write(f"tile-lsp: error: nothing to do: {what} needs at least one PATH\n")
        return EXIT_USAGE
    try:
        return run_check(args)
    except UsageError as exc:
        sys.stderr.write(f"tile-lsp: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tile-lsp`` console script; returns the exit status.

    ``argv[0]`` names the command (:data:`SUBCOMMANDS`); without one, the
    arguments are those of ``tile-lsp --check`` (the alias of ``check``).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv else None
    if command in ("-h", "--help"):
        sys.stdout.write(OVERVIEW)
        return EXIT_OK
    if command == "check":
        return _run_check(argv[1:], alias=False)
    if command == "translate":
        from tile_lsp.bytecode.cli import translate_main

        return translate_main(argv[1:])
    if command in ("ptx", "lower"):
        from tile_lsp.codegen.cli import main as codegen_main

        return codegen_main(argv[1:], stage=command == "lower")
    if command == "serve":
        return _serve(argv[1:])
    return _run_check(argv, alias=True)


def console_main() -> int:
    """The ``tile-lsp`` console script (and ``python -m tile_lsp.cli``): :func:`main`, then the
    heap frozen (:func:`gc.freeze`), so that the interpreter's exit does not run a last full
    collection over the IR the analysis left: cyclic, so not freed by reference counting,
    and seconds of work for a large file (``docs/performance.md``).  The operating system
    takes the memory back anyway.  Every command but ``serve`` runs without automatic
    collections (:func:`tile_lsp.collector.for_command_line`; ``check`` collects between
    files when much was left behind)."""
    import gc

    from tile_lsp.collector import for_command_line

    if sys.argv[1:2] != ["serve"]:
        for_command_line()
    try:
        return main()
    finally:
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())

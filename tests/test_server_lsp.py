"""End-to-end tests of the tile-lsp language server (``python -m tile_lsp.server``).

The server runs in a subprocess driven by pytest-lsp.  A few
in-process unit tests cover the pure adapters (diagnostic conversion,
settings parsing).
"""

from __future__ import annotations

import asyncio
import pathlib
import sys
import time
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.conftest import server_env
from tile_lsp import __version__
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Note, Position, Range, Severity
from tile_lsp.analysis.ir.split import has_split_marker
from tile_lsp.server.convert import to_lsp_diagnostic, to_lsp_diagnostics
from tile_lsp.server.app import create_server
from tile_lsp.server.server import EditDelay, guarded
from tile_lsp.server.settings import DEFAULT_DEBOUNCE_MS, ServerSettings

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

UNDECLARED = (
    "cuda_tile.module @m {\n"
    "  cuda_tile.entry @e() {\n"
    "    %0 = cuda_tile.addi %x, %x : !cuda_tile.tile<i32>\n"
    "  }\n"
    "}\n"
)

VALID = "cuda_tile.module @m {\n  cuda_tile.entry @e() {\n    cuda_tile.return\n  }\n}\n"

SPLIT = VALID + "\n// -----\n\n" + VALID.replace("@m", "@m2") + "  // -----  \n" + VALID.replace("@e", "@e3")



# -- client and fixture ---------------------------------------------------------


class RecordingClient(LanguageClient):
    """pytest-lsp client that also keeps every ``publishDiagnostics`` it receives."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []

    def published_for(self, uri: str) -> list[types.PublishDiagnosticsParams]:
        """All notifications received for ``uri``, in arrival order."""
        return [p for p in self.published if p.uri == uri]


def _record_diagnostics(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)


def make_recording_client() -> RecordingClient:
    """pytest-lsp's default client, with diagnostics recorded as a history."""
    client = RecordingClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_diagnostics
    register_lsp_features(client, features)
    return client


def recording_server(command: list[str], doc: str):
    """A pytest-lsp fixture: a :class:`RecordingClient` connected to a server started by ``command``
    (in a fresh process per test, with :func:`server_env`), shut down after the test.  Tests call
    :func:`initialize` themselves.  Bind it to a module name: pytest names the fixture after it."""

    @pytest_lsp.fixture(
        config=ClientServerConfig(
            server_command=command,
            client_factory=make_recording_client,
            server_env=server_env(),
        ),
        loop_scope="function",
    )
    async def fixture(lsp_client: RecordingClient):
        yield
        await lsp_client.shutdown_session()

    fixture.__doc__ = doc
    return fixture


client = recording_server([sys.executable, "-m", "tile_lsp.server"],
                          "A client connected to a fresh server; tests call :func:`initialize` themselves.")


# A server whose analysis is replaced by a fake, so that the server's own
# behaviour (text sync, stale results, options, failures) is observable without
# the parser: each analysis reports one warning whose message echoes the options
# and the analysed text; "SLOW" in the text makes it take 1 s, "RAISE" makes it fail.
FAKE_SERVER = """
import time
import tile_lsp.server.server as srv
from tile_lsp.analysis.api import ChunkAnalysis, DocumentAnalysis
from tile_lsp.analysis.ir.diagnostics import Diagnostic, Range, Severity
from tile_lsp.analysis.ir.split import Chunk

def fake_analyze_text(text, options):
    if "SLOW" in text:
        time.sleep(1.0)
    if "RAISE" in text:
        raise RuntimeError("fake analysis failure")
    message = f"split={options.split_input_file} version={options.tile_version} text={text!r}"
    diag = Diagnostic(Severity.WARNING, message, Range.point(0, 0), code="fake")
    return DocumentAnalysis(text, [ChunkAnalysis(Chunk(0, 0, text), None, [diag])])

srv.analyze_text = fake_analyze_text
srv.IncrementalAnalyzer.analyze = lambda self, text, options=None, **kw: fake_analyze_text(text, options)
from tile_lsp.server.app import serve_stdio
serve_stdio()
"""


fake_client = recording_server([sys.executable, "-c", FAKE_SERVER],
                               "A client connected to a server running the fake analysis above.")


def echoed(published: types.PublishDiagnosticsParams) -> str:
    """The message of the fake analysis' single diagnostic."""
    assert len(published.diagnostics) == 1, published.diagnostics
    return published.diagnostics[0].message


async def initialize(client: RecordingClient, options: dict | None = None) -> types.InitializeResult:
    """``initialize`` + ``initialized`` with VS Code's capabilities and ``options``."""
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options=options,
    )
    return await client.initialize_session(params)


def open_doc(client: RecordingClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="mlir", version=version, text=text)
        )
    )


def change_doc(client: RecordingClient, uri: str, version: int, changes: list) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=changes,
        )
    )


def edit(line: int, start: int, end_line: int, end: int, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=line, character=start),
            end=types.Position(line=end_line, character=end),
        ),
        text=text,
    )


async def wait_for_publish(
    client: RecordingClient, uri: str, *, count: int = 1, version: Any = ..., timeout: float = 30.0
) -> types.PublishDiagnosticsParams:
    """Wait until ``count`` notifications arrived for ``uri`` (the last one with ``version``)."""
    deadline = time.monotonic() + timeout
    while True:
        seen = client.published_for(uri)
        if len(seen) >= count and (version is ... or seen[-1].version == version):
            return seen[-1]
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no publishDiagnostics for {uri} (count={count}, version={version}); "
                f"seen {[(p.version, len(p.diagnostics)) for p in seen]}"
            )
        await asyncio.sleep(0.01)


# -- end-to-end tests ---------------------------------------------------------------


@pytest.mark.asyncio
async def test_initialize_reports_incremental_sync(client: RecordingClient):
    result = await initialize(client)
    sync = result.capabilities.text_document_sync
    assert isinstance(sync, types.TextDocumentSyncOptions)
    assert sync.change == types.TextDocumentSyncKind.Incremental
    assert sync.open_close is True
    assert result.server_info is not None
    assert result.server_info.name == "tile-lsp"
    assert result.server_info.version == __version__


@pytest.mark.asyncio
async def test_did_open_publishes_with_version(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/open.mlir"
    open_doc(client, uri, VALID, version=7)
    published = await wait_for_publish(client, uri)
    assert published.version == 7
    assert list(published.diagnostics) == []
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_diagnostics_arrive_within_a_second_of_did_open(client: RecordingClient):
    await initialize(client)
    # The first analysis of a process may still be waiting for the warm-up
    # (parser import and tables); the latency that matters is the steady one.
    open_doc(client, "file:///workspace/warm.mlir", VALID)
    await wait_for_publish(client, "file:///workspace/warm.mlir", timeout=30.0)
    uri = "file:///workspace/fast.mlir"
    start = time.monotonic()
    open_doc(client, uri, UNDECLARED)
    await wait_for_publish(client, uri, timeout=5.0)
    elapsed = time.monotonic() - start
    assert elapsed < 1.0, f"diagnostics took {elapsed:.3f} s"


@pytest.mark.asyncio
async def test_an_edit_during_a_long_first_analysis_is_published_before_it_ends(client: RecordingClient):
    """A big file's first analysis takes seconds; an edit made meanwhile cancels it, the entry
    edited is built first and what is known then is published at once, with the edit's version
    (the view of the first lines, which the edit left whole, is not made again before it); the
    complete diagnostics of that version follow, and nothing older after them."""
    await initialize(client, {"debounceMs": 0})
    body = "".join(f"    %v{i} = constant <i32: {i}> : tile<i32>\n" for i in range(40))
    entries = [f"  entry @e{k}() {{\n" + body + "    return\n  }\n" for k in range(150)]
    text = "cuda_tile.module @m {\n" + "".join(entries) + "}\n"
    uri = "file:///workspace/big-first-edit.mlir"
    open_doc(client, uri, text, version=1)
    await asyncio.sleep(0.3)  # the first analysis is under way (it takes seconds)
    # an unknown op typed in the last entry, above its `return`
    line = text.count("\n") - 3
    change_doc(client, uri, 2, [edit(line, 0, line, 0, "    cuda_tile.not_an_op\n")])
    deadline = time.monotonic() + 120
    # the complete analysis of version 2 ends with the document's outline
    while True:
        symbols = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri)))
        if symbols:
            break
        assert time.monotonic() < deadline, "the analysis of version 2 never completed"
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.3)
    published = client.published_for(uri)
    versions = [p.version for p in published]
    # of version 1, only its first lines' view (clean) was published, before the edit cancelled the rest
    assert versions == sorted(versions) and versions.count(1) <= 1 and versions[-1] == 2
    assert all(not p.diagnostics for p in published if p.version == 1)
    published = [p for p in published if p.version == 2]
    assert len(published) >= 2  # early, after the edited entry (the view kept); then complete
    expected = [(d.message, d.range.start.line) for d in published[-1].diagnostics]
    assert expected == [("custom op 'cuda_tile.not_an_op' is unknown", line)]
    assert [(d.message, d.range.start.line) for d in published[0].diagnostics] == expected


@pytest.mark.asyncio
async def test_a_large_file_s_first_lines_are_published_first_and_complete(client: RecordingClient):
    """Opening a large file publishes first the complete diagnostics of its first entries (the
    verifier's included), before the rest of the file is analysed; the complete list follows."""
    await initialize(client, {"debounceMs": 0})
    body = "".join(f"    %v{i} = constant <i32: {i}> : tile<i32>\n" for i in range(40))
    bad = "    %bad = reshape %v1 : tile<i32> -> tile<2xi32>\n"
    entries = [f"  entry @e{k}() {{\n" + body + (bad if k == 0 else "") + "    return\n  }\n" for k in range(150)]
    text = "cuda_tile.module @m {\n" + "".join(entries) + "}\n"
    last = text.count("\n") - 3  # a syntax error in the last entry, far below the first screen
    lines = text.splitlines(keepends=True)
    lines.insert(last, "    %v99 = constant <i32: 9> : tile<i32\n")
    text = "".join(lines)
    uri = "file:///workspace/big-first-lines.mlir"
    open_doc(client, uri, text)
    first = await wait_for_publish(client, uri, timeout=60)
    message = "'cuda_tile.reshape' op expected source tile and result tile to have the same number of elements"
    assert [(d.message, d.range.start.line) for d in first.diagnostics] == [(message, 42)]
    deadline = time.monotonic() + 120
    while not await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))):
        assert time.monotonic() < deadline, "the first analysis never completed"
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.3)
    final = client.published_for(uri)[-1]
    assert (message, 42) in [(d.message, d.range.start.line) for d in final.diagnostics]
    assert any(d.range.start.line == last and d.code == "parse.syntax" for d in final.diagnostics)


@pytest.mark.asyncio
async def test_a_long_first_analysis_shows_its_progress(client: RecordingClient):
    """A first analysis longer than half a second is shown as work-done progress (the client declares
    ``window.workDoneProgress``): begun with the share of the file done, reported as it grows,
    ended once the analysis is over, before or with its diagnostics."""
    await initialize(client, {"debounceMs": 0})
    body = "".join(f"    %v{i} = constant <i32: {i}> : tile<i32>\n" for i in range(40))
    entries = [f"  entry @e{k}() {{\n" + body + "    return\n  }\n" for k in range(300)]  # about 1.5 s
    uri = "file:///workspace/big-progress.mlir"
    open_doc(client, uri, "cuda_tile.module @m {\n" + "".join(entries) + "}\n")
    published = await wait_for_publish(client, uri, timeout=120)
    assert list(published.diagnostics) == []
    deadline = time.monotonic() + 10

    def shown() -> list:
        return [r for r in client.progress_reports.values()
                if r and isinstance(r[0], types.WorkDoneProgressBegin) and r[0].title == "tile-lsp"]

    while not (shown() and isinstance(shown()[0][-1], types.WorkDoneProgressEnd)):
        assert time.monotonic() < deadline, f"no ended progress: {client.progress_reports}"
        await asyncio.sleep(0.05)
    (steps,) = shown()
    begin, *reports, end = steps
    assert begin.message == "analysing big-progress.mlir" and not begin.cancellable
    assert all(isinstance(r, types.WorkDoneProgressReport) for r in reports)
    percentages = [begin.percentage] + [r.percentage for r in reports]
    assert percentages == sorted(percentages) and 0 < percentages[0] < 100 and percentages[-1] <= 100
    assert end.message == "done"
    # an edit's analysis (the document has been analysed once) shows none
    change_doc(client, uri, 2, [edit(1, 0, 1, 0, " ")])
    await wait_for_publish(client, uri, version=2, timeout=60)
    await asyncio.sleep(0.2)
    assert len(shown()) == 1


@pytest.mark.asyncio
async def test_did_close_publishes_empty_list(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/close.mlir"
    open_doc(client, uri, UNDECLARED)
    await wait_for_publish(client, uri, count=1)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    published = await wait_for_publish(client, uri, count=2)
    assert list(published.diagnostics) == []
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_quick_changes_publish_only_the_latest_version_last(client: RecordingClient):
    await initialize(client, {"debounceMs": 200})
    uri = "file:///workspace/change.mlir"
    open_doc(client, uri, VALID, version=1)
    await wait_for_publish(client, uri, count=1, version=1)

    # Five quick incremental edits renaming @e to @e12345, one character each.
    for i, ch in enumerate("12345"):
        change_doc(client, uri, 2 + i, [edit(1, 20 + i, 1, 20 + i, ch)])
        await asyncio.sleep(0.01)

    last = await wait_for_publish(client, uri, version=6)
    # Give a stale analysis every chance to arrive late.
    await asyncio.sleep(0.5)
    versions = [p.version for p in client.published_for(uri)]
    assert versions[-1] == 6, versions
    assert versions == sorted(versions), versions
    # Debounced: the intermediate versions are never analysed.
    assert set(versions) <= {1, 6}, versions
    assert list(last.diagnostics) == list(client.diagnostics[uri])


@pytest.mark.asyncio
async def test_debounce_can_be_changed_by_configuration(client: RecordingClient):
    await initialize(client, {"debounceMs": 5000})
    uri = "file:///workspace/debounce.mlir"
    open_doc(client, uri, VALID)
    await wait_for_publish(client, uri, count=1)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tileLsp": {"debounceMs": 0}})
    )
    change_doc(client, uri, 2, [edit(0, 0, 0, 0, "// comment\n")])
    # With the initial 5 s debounce this would time out.
    await wait_for_publish(client, uri, version=2, timeout=4.0)


def test_edit_delay_is_the_debounce_until_a_change_was_analysed_then_the_recent_work():
    delay = EditDelay()
    assert delay.delay(0.15) == 0.15  # nothing known yet: the configured debounce
    delay.record(0.004)
    assert delay.delay(0.15) == 0.0  # quick analyses: no wait
    delay.record(0.090)
    assert delay.delay(0.15) == 0.0
    delay.record(0.120)
    delay.record(0.010)
    assert delay.delay(0.15) == 0.120  # one slower: the longest of the last three
    delay.record(0.020)
    assert delay.delay(0.15) == 0.120
    delay.record(0.030)
    assert delay.delay(0.15) == 0.0  # 0.120 is no longer among them
    delay.record(2.0)
    assert delay.delay(0.15) == 0.15  # never more than the debounce


@pytest.mark.asyncio
async def test_a_quick_document_is_analysed_sooner_than_the_debounce_after_its_first_change(client: RecordingClient):
    await initialize(client, {"debounceMs": 1500})
    uri = "file:///workspace/adaptive.mlir"
    open_doc(client, uri, VALID, version=1)
    await wait_for_publish(client, uri, version=1)
    start = time.monotonic()
    change_doc(client, uri, 2, [edit(0, 0, 0, 0, "// one\n")])
    await wait_for_publish(client, uri, version=2, timeout=10.0)
    first = time.monotonic() - start
    assert first >= 1.5  # no change analysed yet: the whole debounce
    start = time.monotonic()
    change_doc(client, uri, 3, [edit(0, 0, 0, 0, "// two\n")])
    await wait_for_publish(client, uri, version=3, timeout=10.0)
    second = time.monotonic() - start
    assert second < 1.0, f"the second change waited {second:.2f} s"  # about as long as the last analysis took


@pytest.mark.asyncio
async def test_tile_version_change_reanalyses_open_documents(client: RecordingClient):
    await initialize(client, {"tileVersion": "13.1"})
    uri = "file:///workspace/version.mlir"
    open_doc(client, uri, VALID, version=3)
    await wait_for_publish(client, uri, count=1)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tileVersion": "13.2"}))
    published = await wait_for_publish(client, uri, count=2)
    assert published.version == 3


@pytest.mark.asyncio
async def test_split_input_file_is_accepted(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/split.mlir"
    open_doc(client, uri, SPLIT)
    published = await wait_for_publish(client, uri)
    assert published.version == 1
    assert [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Error] == []
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]


@pytest.mark.asyncio
async def test_garbage_text_does_not_crash_the_server(client: RecordingClient):
    await initialize(client)
    garbage = "\x00\x01\x02\xff\ufffd\u202e %% @@ {{{ ]]] \"unterminated \\ \r\n\t" + bytes(range(256)).decode("latin-1")
    garbage += "\n// -----\n" + "😀" * 50 + "\n" + "(" * 2000
    uri = "file:///workspace/garbage.mlir"
    open_doc(client, uri, garbage)
    await wait_for_publish(client, uri)
    # An edit with a range past the end of the text is clamped, not fatal.
    change_doc(client, uri, 2, [edit(1000, 5, 1000, 9, "x")])

    # The server still answers: a second document is analysed and published.
    uri2 = "file:///workspace/after-garbage.mlir"
    open_doc(client, uri2, VALID)
    published = await wait_for_publish(client, uri2)
    assert published.version == 1
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]


@pytest.mark.asyncio
async def test_change_of_unopened_document_is_logged_not_fatal(client: RecordingClient):
    await initialize(client)
    change_doc(client, "file:///workspace/never-opened.mlir", 2, [edit(0, 0, 0, 0, "x")])
    uri = "file:///workspace/after-bad-change.mlir"
    open_doc(client, uri, VALID)
    assert (await wait_for_publish(client, uri)).version == 1
    assert client.published_for("file:///workspace/never-opened.mlir") == []
    assert not client.messages  # logged (window/logMessage), no popup
    assert any(m.type == types.MessageType.Error for m in client.log_messages)
    # (the fixture's ``shutdown`` request is answered after the failure, too)


@pytest.mark.asyncio
async def test_reopened_document_is_analysed_again(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/reopen.mlir"
    open_doc(client, uri, VALID, version=1)
    await wait_for_publish(client, uri, count=1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    await wait_for_publish(client, uri, count=2)
    open_doc(client, uri, VALID, version=1)
    published = await wait_for_publish(client, uri, count=3)
    assert published.version == 1


@pytest.mark.asyncio
async def test_undeclared_ssa_value_is_reported(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/undeclared.mlir"
    open_doc(client, uri, UNDECLARED)
    published = await wait_for_publish(client, uri)
    errors = [
        d
        for d in published.diagnostics
        if d.severity == types.DiagnosticSeverity.Error and d.message == "use of undeclared SSA value name"
    ]
    assert errors, published.diagnostics
    assert errors[0].range.start.line == 2
    assert errors[0].source == "tile-lsp"


@pytest.mark.asyncio
async def test_incremental_edits_are_applied_before_analysis(client: RecordingClient):
    await initialize(client, {"debounceMs": 50})
    uri = "file:///workspace/incremental.mlir"
    open_doc(client, uri, UNDECLARED, version=1)
    first = await wait_for_publish(client, uri, version=1)
    assert any(d.message == "use of undeclared SSA value name" for d in first.diagnostics)
    # Replace line 2 by a plain return: the error must go away.
    change_doc(client, uri, 2, [edit(2, 4, 2, len("    %0 = cuda_tile.addi %x, %x : !cuda_tile.tile<i32>"), "cuda_tile.return")])
    second = await wait_for_publish(client, uri, version=2)
    assert not [d for d in second.diagnostics if d.message == "use of undeclared SSA value name"]
    assert not [d for d in second.diagnostics if d.severity == types.DiagnosticSeverity.Error]


# -- end-to-end tests with the fake analysis ---------------------------------------------


@pytest.mark.asyncio
async def test_fake_incremental_edits_reach_the_analysis(fake_client: RecordingClient):
    await initialize(fake_client, {"debounceMs": 20})
    uri = "file:///workspace/fake-edit.mlir"
    open_doc(fake_client, uri, "abc\ndef\n", version=1)
    assert echoed(await wait_for_publish(fake_client, uri, version=1)).endswith("text='abc\\ndef\\n'")
    change_doc(
        fake_client,
        uri,
        2,
        [edit(0, 1, 0, 2, "XY"), edit(1, 0, 1, 0, "> "), edit(2, 0, 2, 0, "é😀\n")],
    )
    change_doc(fake_client, uri, 3, [edit(2, 1, 2, 3, "")])  # deletes the emoji (2 UTF-16 units)
    published = await wait_for_publish(fake_client, uri, version=3)
    assert echoed(published).endswith("text='aXYc\\n> def\\né\\n'")
    d = published.diagnostics[0]
    assert d.severity == types.DiagnosticSeverity.Warning and d.code == "fake" and d.source == "tile-lsp"


@pytest.mark.asyncio
async def test_fake_stale_analysis_is_never_published(fake_client: RecordingClient):
    await initialize(fake_client, {"debounceMs": 0})
    uri = "file:///workspace/fake-stale.mlir"
    open_doc(fake_client, uri, "SLOW v1\n", version=1)  # analysis takes 1 s
    await asyncio.sleep(0.2)  # ... and is under way now
    change_doc(fake_client, uri, 2, [edit(0, 0, 0, 4, "FAST")])
    published = await wait_for_publish(fake_client, uri, version=2)
    assert echoed(published).endswith("text='FAST v1\\n'")
    await asyncio.sleep(1.3)  # the slow analysis of version 1 has finished by now
    assert [p.version for p in fake_client.published_for(uri)] == [2]


@pytest.mark.asyncio
async def test_fake_options_follow_split_marker_and_settings(fake_client: RecordingClient):
    await initialize(fake_client, {"tileVersion": "13.1"})
    plain, split = "file:///workspace/fake-plain.mlir", "file:///workspace/fake-split.mlir"
    open_doc(fake_client, plain, "a\n")
    open_doc(fake_client, split, "a\n// -----\nb\n")
    assert echoed(await wait_for_publish(fake_client, plain)).startswith("split=False version=13.1 ")
    assert echoed(await wait_for_publish(fake_client, split)).startswith("split=True version=13.1 ")
    fake_client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tileVersion": "13.2"}))
    assert echoed(await wait_for_publish(fake_client, plain, count=2)).startswith("split=False version=13.2 ")
    assert echoed(await wait_for_publish(fake_client, split, count=2)).startswith("split=True version=13.2 ")


@pytest.mark.asyncio
async def test_fake_analysis_failure_is_logged_and_server_survives(fake_client: RecordingClient):
    await initialize(fake_client)
    bad, good = "file:///workspace/fake-raise.mlir", "file:///workspace/fake-ok.mlir"
    open_doc(fake_client, bad, "RAISE\n")
    open_doc(fake_client, good, "fine\n")
    await wait_for_publish(fake_client, good)
    deadline = time.monotonic() + 30
    while not any("fake analysis failure" in m.message for m in fake_client.log_messages):
        assert time.monotonic() < deadline, "failure was not logged"
        await asyncio.sleep(0.01)
    error = next(m for m in fake_client.log_messages if "fake analysis failure" in m.message)
    assert error.type == types.MessageType.Error
    published = await wait_for_publish(fake_client, bad)
    assert published.version == 1
    (internal,) = published.diagnostics
    assert internal.code == "internal" and internal.severity == types.DiagnosticSeverity.Error
    assert "fake analysis failure" in internal.message


# -- in-process unit tests of the adapters ------------------------------------------------


def _rng(l1: int, c1: int, l2: int, c2: int) -> Range:
    return Range(Position(l1, c1), Position(l2, c2))


def test_convert_severity_code_source_and_range():
    uri = "file:///x.mlir"
    cases = {
        Severity.ERROR: types.DiagnosticSeverity.Error,
        Severity.WARNING: types.DiagnosticSeverity.Warning,
        Severity.NOTE: types.DiagnosticSeverity.Information,
        Severity.REMARK: types.DiagnosticSeverity.Hint,
    }
    for sev, lsp_sev in cases.items():
        d = to_lsp_diagnostic(Diagnostic(sev, "msg", _rng(1, 2, 1, 5), code="parse"), uri)
        assert d.severity == lsp_sev
        assert d.message == "msg"
        assert d.code == "parse"
        assert d.source == "tile-lsp"
        assert (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) == (1, 2, 1, 5)
        assert d.related_information is None


def test_convert_unknown_location_and_empty_code():
    d = to_lsp_diagnostic(Diagnostic(Severity.ERROR, "boom", None), "file:///x.mlir")
    assert d.range == types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    assert d.code is None


def test_convert_notes_to_related_information():
    uri = "file:///x.mlir"
    diag = Diagnostic(
        Severity.ERROR,
        "bad",
        _rng(3, 1, 3, 4),
        notes=[
            Note("here", _rng(1, 0, 1, 2)),
            Note("unknown loc", None),
            Note("elsewhere", _rng(5, 6, 5, 7), uri="file:///other.mlir"),
        ],
    )
    d = to_lsp_diagnostic(diag, uri)
    rel = d.related_information
    assert rel is not None and [r.message for r in rel] == ["here", "unknown loc", "elsewhere"]
    assert rel[0].location.uri == uri and rel[0].location.range.start == types.Position(line=1, character=0)
    assert rel[1].location.uri == uri and rel[1].location.range == d.range
    assert rel[2].location.uri == "file:///other.mlir"
    assert rel[2].location.range.start == types.Position(line=5, character=6)


def test_convert_reencodes_columns_for_utf8_and_utf32_clients():
    text = "a😀é = x\n"
    # UTF-16 columns: 'a'=0, '😀'=1..2, 'é'=3, ' '=4.
    diag = Diagnostic(Severity.ERROR, "m", _rng(0, 3, 0, 4))
    (utf16,) = to_lsp_diagnostics([diag], "file:///x", text=text, encoding=None)
    (utf8,) = to_lsp_diagnostics([diag], "file:///x", text=text, encoding=types.PositionEncodingKind.Utf8)
    (utf32,) = to_lsp_diagnostics([diag], "file:///x", text=text, encoding="utf-32")
    assert (utf16.range.start.character, utf16.range.end.character) == (3, 4)
    assert (utf8.range.start.character, utf8.range.end.character) == (5, 7)
    assert (utf32.range.start.character, utf32.range.end.character) == (2, 3)


def test_guarded_handlers_log_and_return_the_default():
    logged: list[str] = []

    class FakeServer:
        def log_exception(self, what: str) -> None:
            logged.append(what)

    @guarded(default=[])
    def sync_boom(ls, params):
        raise ValueError("boom")

    @guarded()
    async def async_boom(ls, params):
        raise ValueError("boom")

    assert sync_boom(FakeServer(), None) == []
    assert asyncio.run(async_boom(FakeServer(), None)) is None
    assert len(logged) == 2 and "sync_boom" in logged[0] and "async_boom" in logged[1]
    assert asyncio.iscoroutinefunction(async_boom)


def test_create_server_registers_the_handlers():
    server = create_server()
    assert server.name == "tile-lsp" and server.version == __version__
    features = server.protocol.fm.features
    for method in (
        types.INITIALIZE,
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_DID_CLOSE,
        types.WORKSPACE_DID_CHANGE_CONFIGURATION,
        types.SHUTDOWN,
    ):
        assert method in features
    assert server.latest_analysis("file:///nothing.mlir") is None


def test_split_marker_detection():
    assert has_split_marker(SPLIT)
    assert has_split_marker("a\n  // -----  \nb")
    assert not has_split_marker(VALID)
    assert not has_split_marker("x // -----\n")
    assert not has_split_marker("// ------\n")


def test_settings_parsing():
    s = ServerSettings()
    assert s.debounce_ms == DEFAULT_DEBOUNCE_MS and s.tile_version is None
    s2, problems = s.updated({"tileVersion": "13.2", "debounceMs": 40})
    assert (s2.tile_version, s2.debounce_ms, problems) == ("13.2", 40, [])
    s3, problems = s2.updated({"tileLsp": {"debounceMs": 75}})
    assert (s3.tile_version, s3.debounce_ms) == ("13.2", 75)
    s4, problems = s3.updated({"tileVersion": 13.2, "debounceMs": "fast"})
    assert s4 == s3 and len(problems) == 2
    s5, _ = s4.updated({"tileVersion": None, "debounceMs": -3})
    assert (s5.tile_version, s5.debounce_ms) == (None, 0)
    assert s.updated(None) == (s, [])
    assert s.updated([1, 2]) == (s, [])


# -- end-to-end tests on NVIDIA's corpus ----------------------------------------------------


@pytest.mark.asyncio
async def test_corpus_kernel_is_clean_and_fast(client: RecordingClient, corpus):
    """A real cuTile kernel: no diagnostics, published within 1 s of didOpen (after warm-up)."""
    await initialize(client)
    open_doc(client, "file:///workspace/warm.mlir", VALID)
    await wait_for_publish(client, "file:///workspace/warm.mlir", timeout=30.0)
    kernel = corpus / "kernels" / "flash_attention_f16_causal_d64_128x64.sm_90.mlir"
    uri = kernel.as_uri()
    start = time.monotonic()
    open_doc(client, uri, kernel.read_text(encoding="utf-8"))
    published = await wait_for_publish(client, uri, timeout=5.0)
    elapsed = time.monotonic() - start
    assert list(published.diagnostics) == []
    assert elapsed < 1.0, f"diagnostics took {elapsed:.3f} s"


@pytest.mark.asyncio
async def test_invalid_conformance_file_publishes_verbatim_diagnostics(client: RecordingClient, corpus):
    """A split file of NVIDIA's dialect tests: chunk-wise analysis, MLIR's text and ranges."""
    await initialize(client)
    path = corpus / "conformance" / "Dialect" / "CudaTile" / "math_invalid.mlir"
    text = path.read_text(encoding="utf-8")
    uri = path.as_uri()
    open_doc(client, uri, text)
    published = await wait_for_publish(client, uri, timeout=30.0)
    lines = text.splitlines()
    absi = next(i for i, line in enumerate(lines) if "%0 = cuda_tile.absi %arg0 : !cuda_tile.tile<4x4xf32>" in line)
    found = [d for d in published.diagnostics if d.range.start.line == absi]
    assert [d.message for d in found] == [
        "'cuda_tile.absi' op operand #0 must be tile of i1 or i8 or i16 or i32 or i64 values, "
        "but got '!cuda_tile.tile<4x4xf32>'"
    ]
    assert found[0].range.start.character == lines[absi].index("cuda_tile.absi")
    assert found[0].severity == types.DiagnosticSeverity.Error
    # every chunk is analysed: diagnostics spread over the whole file
    assert len({d.range.start.line for d in published.diagnostics}) > 50

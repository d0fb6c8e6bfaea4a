"""End-to-end tests of signature help, semantic-token deltas, code actions and settings over LSP.

The server runs in a subprocess driven by pytest-lsp (client fixture and
helpers of ``tests/test_server_lsp.py``); edits a code action returns are
applied to the text, sent back with ``didChange``, and the published
diagnostics re-checked.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests import test_server_lsp
from tests.test_server_lsp import (
    RecordingClient,
    change_doc,
    initialize,
    open_doc,
    wait_for_publish,
)
from tile_lsp.server.editing import SIGNATURE_TRIGGERS, token_delta
from tile_lsp.server.settings import SETTINGS, ServerSettings, parse_target_gpu

KERNEL = (
    "cuda_tile.module @m {\n"
    "  entry @k(%a: tile<f32>) {\n"
    "    %0 = addf %a, %a : tile<f32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)

POW2 = (
    "cuda_tile.module @m {\n"
    "  entry @k() {\n"
    "    %0 = constant <f32: 1.0> : tile<3x8xf32>\n"
    "    %x, %y, %z = get_tile_block_id : tile<i32>\n"
    "    return\n"
    "  }\n"
    "}\n"
)

NV = '%x = "nv_tileas.create_none"() : () -> !nv_tileas.none\n'

#: pytest-lsp's fixture: a client connected to a fresh server subprocess.
client = test_server_lsp.client


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions of an ASCII text) the way a client does."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: types.Position) -> int:
        return starts[min(p.line, len(lines))] + p.character

    out, last = [], 0
    for e in sorted(edits, key=lambda e: (offset(e.range.start), offset(e.range.end))):
        out += [text[last:offset(e.range.start)], e.new_text]
        last = offset(e.range.end)
    return "".join(out + [text[last:]])


def _replace_all(client: RecordingClient, uri: str, version: int, text: str) -> None:
    change_doc(client, uri, version, [types.TextDocumentContentChangeWholeDocument(text=text)])


def _apply_delta(old: list[int], delta: types.SemanticTokensDelta) -> list[int]:
    data = list(old)
    for e in sorted(delta.edits, key=lambda e: e.start, reverse=True):
        data[e.start:e.start + e.delete_count] = list(e.data or [])
    return data


@pytest.mark.asyncio
async def test_signature_help_and_semantic_token_deltas(client: RecordingClient):
    result = await initialize(client)
    caps = result.capabilities
    assert list(caps.signature_help_provider.trigger_characters) == SIGNATURE_TRIGGERS
    assert caps.semantic_tokens_provider.full.delta is True
    assert list(caps.code_action_provider.code_action_kinds) == [types.CodeActionKind.QuickFix]

    uri = "file:///workspace/sig.mlir"
    open_doc(client, uri, KERNEL)
    await wait_for_publish(client, uri, version=1)
    assert list(client.published_for(uri)[-1].diagnostics) == []
    first = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=_doc(uri)))
    assert first.result_id and len(first.data) % 5 == 0

    # type a new line that does not parse yet, and ask for signature help in it
    typed = KERNEL.replace("    return\n", "    %1 = mulf %0, \n    return\n")
    _replace_all(client, uri, 2, typed)
    sig = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=_doc(uri), position=types.Position(line=3, character=18),
        context=types.SignatureHelpContext(trigger_kind=types.SignatureHelpTriggerKind.TriggerCharacter,
                                           trigger_character=" ", is_retrigger=False)))
    [info] = sig.signatures
    assert info.label == ("%result = cuda_tile.mulf %lhs, %rhs [rounding<rounding_mode>] [flush_to_zero] "
                          ": type(result)")
    assert sig.active_parameter == 1
    start, end = info.parameters[1].label
    assert info.label[start:end] == "%rhs"
    assert info.parameters[1].documentation.value.startswith("`rhs` (operand): tile of f16 or bf16 or f32")
    none = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=_doc(uri), position=types.Position(line=1, character=2)))
    assert none is None
    # on the op name itself: the signature, no active slot (an index past the parameters)
    on_name = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=_doc(uri), position=types.Position(line=3, character=13)))
    assert on_name.signatures[0].label == info.label and on_name.active_parameter == len(info.parameters)

    # the delta from the first result gives the new full tokens
    delta = await client.text_document_semantic_tokens_full_delta_async(types.SemanticTokensDeltaParams(
        text_document=_doc(uri), previous_result_id=first.result_id))
    assert isinstance(delta, types.SemanticTokensDelta) and delta.result_id != first.result_id
    assert len(delta.edits) == 1
    full = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=_doc(uri)))
    assert _apply_delta(list(first.data), delta) == list(full.data) != list(first.data)
    # no change: an empty delta; an unknown result id: the full tokens
    same = await client.text_document_semantic_tokens_full_delta_async(types.SemanticTokensDeltaParams(
        text_document=_doc(uri), previous_result_id=full.result_id))
    assert list(same.edits) == []
    unknown = await client.text_document_semantic_tokens_full_delta_async(types.SemanticTokensDeltaParams(
        text_document=_doc(uri), previous_result_id="no-such-result"))
    assert isinstance(unknown, types.SemanticTokens) and list(unknown.data) == list(full.data)


@pytest.mark.asyncio
async def test_code_actions_fix_what_they_say(client: RecordingClient):
    await initialize(client)
    uri = "file:///workspace/pow2.mlir"
    open_doc(client, uri, POW2)
    published = await wait_for_publish(client, uri, version=1)
    [diag] = published.diagnostics
    assert diag.message == "custom op 'cuda_tile.constant' all dimensions must be powers of two, got 3, 8"

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=_doc(uri), range=types.Range(start=types.Position(line=2, character=0),
                                                     end=types.Position(line=2, character=0)),
        context=types.CodeActionContext(diagnostics=[diag])))
    titles = [a.title for a in actions]
    assert titles == ["Change the shape 3x8 to 4x8 (nearest powers of two)", "Change the shape 3x8 to 2x8 (rounded down)",
                      "Add expected-* diagnostic checks"]
    fix = actions[0]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert list(fix.diagnostics) == [diag]
    fixed = _apply(POW2, fix.edit.changes[uri])
    assert "tile<4x8xf32>" in fixed
    _replace_all(client, uri, 2, fixed)
    assert list((await wait_for_publish(client, uri, version=2)).diagnostics) == []

    # "Add expected-* diagnostic checks" on the broken text
    checks = _apply(POW2, actions[2].edit.changes[uri])
    assert checks.split("\n")[2] == ("    // expected-error @below {{custom op 'cuda_tile.constant' all dimensions "
                                     "must be powers of two, got 3, 8}}")

    # a typo in an op name, fixed by "did you mean"
    typo = KERNEL.replace("addf %a", "adf %a")
    _replace_all(client, uri, 3, typo)
    [error] = (await wait_for_publish(client, uri, version=3)).diagnostics
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=_doc(uri), range=error.range, context=types.CodeActionContext(diagnostics=[error])))
    assert actions[0].title == "Did you mean 'addf'?" and list(actions[0].diagnostics) == [error]
    _replace_all(client, uri, 4, _apply(typo, actions[0].edit.changes[uri]))
    assert list((await wait_for_publish(client, uri, version=4)).diagnostics) == []


@pytest.mark.asyncio
async def test_settings_reach_diagnostics_and_inlay_hints(client: RecordingClient):
    refreshed = asyncio.Event()

    @client.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def on_refresh(params: None) -> None:
        refreshed.set()

    caps = client_capabilities("visual-studio-code")
    caps.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    await client.initialize_session(types.InitializeParams(
        capabilities=caps, initialization_options={"tileLsp": {"inlayHints": {"tileSizes": False}}}))
    nv_uri, pow_uri = "file:///workspace/nv.mlir", "file:///workspace/hints.mlir"
    open_doc(client, nv_uri, NV)
    open_doc(client, pow_uri, POW2.replace("3x8", "4x8"))
    [warning] = (await wait_for_publish(client, nv_uri)).diagnostics
    assert (warning.message, warning.severity) == ("Failed to get ComputeCapability", types.DiagnosticSeverity.Warning)
    await wait_for_publish(client, pow_uri)

    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=7, character=0))
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(pow_uri), range=whole))
    assert [(h.position.line, h.label) for h in hints] == [(3, ": tile<i32>"), (3, ": tile<i32>"), (3, ": tile<i32>")]

    count = len(client.published_for(nv_uri))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"tileLsp": {"targetGpu": "sm_90", "inlayHints.tileSizes": True, "inlayHints": {"resultTypes": False}}}))
    await asyncio.wait_for(refreshed.wait(), 10)
    assert list((await wait_for_publish(client, nv_uri, count=count + 1)).diagnostics) == []
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=_doc(pow_uri), range=whole))
    assert [(h.position.line, h.label) for h in hints] == [(2, "32 × f32 = 128 B")]  # (rank 0: no size hint)

    # back to no target: the warning returns
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tileLsp": {"targetGpu": None}}))
    assert [d.message for d in (await wait_for_publish(client, nv_uri, count=count + 2)).diagnostics] == [
        "Failed to get ComputeCapability"]


def test_settings_parsing():
    s = ServerSettings()
    assert (s.target_gpu, s.target_sm, s.inlay_result_types, s.inlay_tile_sizes) == (None, None, True, True)
    s2, problems = s.updated({"tile-lsp": {"targetGpu": "sm_100a", "inlayHints": {"resultTypes": False}}})
    assert (s2.target_gpu, s2.target_sm, s2.inlay_result_types, problems) == ("sm_100a", 100, False, [])
    s3, problems = s2.updated({"inlayHints.tileSizes": False, "targetGpu": 90})
    assert (s3.target_gpu, s3.inlay_tile_sizes, s3.inlay_result_types) == ("sm_90", False, False)
    s4, problems = s3.updated({"targetGpu": "gfx90a", "inlayHints": {"tileSizes": "yes"}})
    assert s4 == s3 and problems == ["ignoring targetGpu 'gfx90a': expected a GPU such as \"sm_90\"",
                                     "ignoring inlayHints.tileSizes 'yes': expected true or false"]
    s5, _ = s4.updated({"targetGpu": None})
    assert (s5.target_gpu, s5.target_sm) == (None, None)
    assert s5.analysis_key != s4.analysis_key and s5.inlay_key == s4.inlay_key
    assert [parse_target_gpu(v) for v in ("sm_90", "SM90", "120", 89, True, "sm_9")] == [
        ("sm_90", 90), ("sm_90", 90), ("sm_120", 120), ("sm_89", 89), None, None]
    # the VS Code extension's master switch
    off, _ = ServerSettings().updated({"tileLsp": {"inlayHints": {"enabled": False}}})
    assert (off.show_result_types, off.show_tile_sizes, off.inlay_result_types) == (False, False, True)
    on, _ = off.updated({"tileLsp": {"inlayHints": {"enabled": True}}})
    assert (on.show_result_types, on.show_tile_sizes) == (True, True) and on.inlay_key != off.inlay_key
    assert [k for k, *_ in SETTINGS] == ["tileVersion", "targetGpu", "debounceMs", "inlayHints.enabled",
                                         "inlayHints.resultTypes", "inlayHints.tileSizes"]


def test_token_delta_edits():
    assert token_delta([1, 2, 3], [1, 2, 3]) == []
    [e] = token_delta([1, 2, 3, 4, 5], [1, 9, 9, 4, 5])
    assert (e.start, e.delete_count, list(e.data)) == (1, 2, [9, 9])
    [e] = token_delta([1, 2, 3], [1, 2, 3, 7, 8])
    assert (e.start, e.delete_count, list(e.data)) == (3, 0, [7, 8])
    [e] = token_delta([5, 1, 2], [1, 2])
    assert (e.start, e.delete_count, list(e.data)) == (0, 1, [])
    # long arrays (compared block by block): the edit is exactly the differing middle
    rng = random.Random(5)
    for size in (5000, 40000):
        old = [rng.randint(0, 9) for _ in range(size)]
        for start, removed, added in ((0, 3, [1]), (size // 3, 0, [7, 7]), (size - 5, 5, []), (size // 2, 4096, [3])):
            new = old[:start] + added + old[start + removed:]
            got = list(old)
            for e in token_delta(old, new):
                got[e.start:e.start + e.delete_count] = list(e.data)
            assert got == new
            [e] = token_delta(old, new)  # no larger than the change made (it may be smaller, by chance)
            assert e.delete_count <= min(removed, size - start) and len(e.data) <= len(added)

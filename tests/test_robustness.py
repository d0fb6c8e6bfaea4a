"""Issue 16: never a traceback, never a hang, every error located.

Each test is a reproducer found by fuzzing (issue 16); each failed on the
code before its fix.  The rules they pin down:

- a count or size taken from the text is bounded before work proportional
  to it (``tile_lsp.analysis.ir.limits``);
- no ``literal_eval``/``int()`` on unchecked tokens, no exception escapes a
  verifier rule (a rule that raises is a located ``internal`` diagnostic at
  its op, and the other ops are still verified);
- every diagnostic has a range.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tile_lsp.analysis.api import AnalysisOptions, analyze_text


def _diagnostics(text: str, **options):
    analysis = analyze_text(text, AnalysisOptions(**options))
    return analysis.diagnostics


def _assert_sound(diagnostics) -> None:
    for d in diagnostics:
        assert d.code != "internal" and "internal error" not in d.message, d.message
        assert d.range is not None, d.message


def _messages(text: str, **options) -> list[tuple[int, int, str]]:
    ds = _diagnostics(text, **options)
    _assert_sound(ds)
    return [(d.range.start.line, d.range.start.character, d.message) for d in ds]


# -- counts from the text ------------------------------------------------------------------


def test_huge_result_group_is_rejected_at_once():
    t0 = time.monotonic()
    got = _messages("%x:4294967296 = constant <i32: 1> : tile<i32>\n")
    assert time.monotonic() - t0 < 5.0
    assert got == [(0, 3, "result group of 4294967296 results is out of range: "
                          "an operation binds at most 65536 results")]


def test_result_groups_are_bounded_all_together():
    text = "%a:40000, %b:40000 = constant <i32: 1> : tile<i32>\n"
    got = _messages(text)
    assert (0, 13, "result group of 40000 results is out of range: an operation binds at most 65536 results") in got


@pytest.mark.parametrize("count", ["0", "18446744073709551616", "-1"])
def test_result_group_below_one_or_beyond_64_bits(count):
    # MLIR (OperationParser::parseOperation): getUInt64IntegerValue, then "at least 1 result"
    got = _messages(f"%x:{count} = constant <i32: 1> : tile<i32>\n")
    assert got[0] == (0, 3, "expected named operation to have at least 1 result")


def test_hex_result_group_count_is_read_as_mlir_does():
    # `%0:0x7` once raised ValueError (int('0x7')); MLIR reads it as 7 results
    text = """entry @k(%a: tile<32x128xf16>) {
  %x:0x7 = cuda_tile.reduce %a dim=1 identities=[0xFC00 : f16] : tile<32x128xf16> -> tile<32xf16>
  (%l0: tile<f16>, %r0: tile<f16>) {
    yield %l0 : tile<f16>
  }
  return
}
"""
    got = _messages(text)
    assert (1, 2, "operation defines 1 results but was provided 7 to bind") in got
    _messages("%0:0x7=cuda_tile.reduce")  # the fuzzer's text: a syntax error, nothing worse


def test_hex_result_group_that_matches_binds():
    text = """entry @k(%a: tile<32x128xf16>) {
  %0:0x2 = cuda_tile.reduce %a, %a dim=1 identities=[0xFC00 : f16, 0xFC00 : f16] : tile<32x128xf16>, tile<32x128xf16> -> tile<32xf16>, tile<32xf16>
  (%l0: tile<f16>, %r0: tile<f16>, %l1: tile<f16>, %r1: tile<f16>) {
    yield %l0, %l1 : tile<f16>, tile<f16>
  }
  %s = addf %0#0, %0#1 : tile<32xf16>
  return
}
"""
    assert not [m for m in _messages(text) if "result" in m[2]]


@pytest.mark.parametrize("text", [
    "%x = constant <f32: 1.0> : tile<65536x65536x65536xf32>\n",
    "%x = constant <f32: [1.0, 2.0]> : tile<65536x65536x65536xf32>\n",
    "%x = iota : tile<4294967296xi32>\n",
    "%x = constant <f32: 1.0> : tile<99999999999999999999999999999xf32>\n",
    "%x = constant <i32: 99999999999999999999999999999999999999999> : tile<i32>\n",
])
def test_huge_shapes_and_values_are_diagnostics_in_bounded_time(text):
    t0 = time.monotonic()
    got = _messages(text)
    assert time.monotonic() - t0 < 5.0
    assert got


# -- internal errors -------------------------------------------------------------------------


def test_expected_message_with_unlisted_punctuation():
    # ValueError in grammar/parse.py _expected_message (tuple.index)
    assert _messages('#i=#e<""""')


def test_unknown_escape_in_generic_op_name():
    # SyntaxError from literal_eval in builder.generic_op; MLIR's lexer: "unknown escape in string literal"
    got = _messages('"\\u"():()->!w<>')
    assert (0, 1, "unknown escape in string literal") in got


def test_escapes_in_generic_op_name_are_decoded():
    got = _messages('"cuda_tile.\\72eturn"() : () -> ()\n')
    assert not [m for m in got if "escape" in m[2]]


_STORE = """entry @k(%a: tile<i32>, %b: tile<i32>) {{
  "cuda_tile.store_view_tko"(%a, %b) {{operandSegmentSizes = array<i32: {sizes}>, memory_ordering_semantics = 0 : i32}} : (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> (!cuda_tile.token)
  return
}}
"""


@pytest.mark.parametrize("sizes, message", [
    ("1, -09, 2, 0", "'operandSegmentSizes' attribute cannot have negative elements"),
    ("1, 1, 1, 0", "operand count (2) does not match with the total size (3) specified in attribute "
                   "'operandSegmentSizes'"),
    ("1, 1", "'operandSegmentSizes' attribute for specifying operand segments must have 4 elements, but got 2"),
])
def test_bad_operand_segment_sizes(sizes, message):
    # a negative entry raised IndexError in verifier._verify_type_constraints
    got = _messages(_STORE.format(sizes=sizes))
    assert (1, 2, "'cuda_tile.store_view_tko' op " + message) in got


def test_a_rule_that_raises_is_a_located_diagnostic_and_the_others_still_run(monkeypatch):
    from tile_lsp.analysis.verify import verifier

    def broken(op, ctx):
        raise KeyError("boom")

    verifier.load_rule_modules()
    rules = dict(verifier._RULES)
    rules["cuda_tile.addi"] = [("broken", broken)]
    monkeypatch.setattr(verifier, "_RULES", rules)
    text = """entry @k(%a: tile<i32>) {
  %0 = addi %a, %a : tile<i32>
  %1 = addf %a, %a : tile<i32>
  return
}
"""
    ds = _diagnostics(text)
    internal = [d for d in ds if d.code == "internal"]
    assert len(internal) == 1 and internal[0].range.start.line == 1
    assert "cuda_tile.addi.broken" in internal[0].message
    assert any(d.range.start.line == 2 and "addf" in d.message for d in ds)


# -- locations ------------------------------------------------------------------------------


def test_redefined_entry_argument_is_located():
    got = _messages("entry @k(%arg3: tile<i32>, %arg3: tile<i32>) {\n  return\n}\n")
    assert got == [(0, 27, "redefinition of SSA value '%arg3'")]


def test_redefined_block_argument_is_located():
    text = """entry @k(%a: tile<32x128xf16>) {
  %x = cuda_tile.reduce %a dim=1 identities=[0xFC00 : f16] : tile<32x128xf16> -> tile<32xf16>
  (%l0: tile<f16>, %l0: tile<f16>) {
    yield %l0 : tile<f16>
  }
  return
}
"""
    assert (2, 19, "redefinition of SSA value '%l0'") in _messages(text)


def test_cli_json_has_a_line_for_a_redefined_argument(tmp_path):
    f = tmp_path / "k.mlir"
    f.write_text("entry @k(%arg3: tile<i32>, %arg3: tile<i32>) {\n  return\n}\n")
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", str(f), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert [(d["line"], d["column"]) for d in json.loads(proc.stdout)] == [(1, 28)]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("text", ['#i=#e<""""', '"\\u"():()->!w<>', "%x:4294967296 = constant <i32: 1> : tile<i32>\n"])
def test_cli_no_traceback(tmp_path, text):
    f = tmp_path / "k.mlir"
    f.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", str(f)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stdout


# -- the server over raw JSON-RPC --------------------------------------------------------------


class RawServer:
    """``tile-lsp serve`` in a subprocess, spoken to in raw JSON-RPC over stdio.

    A reader thread collects every message the server writes; :meth:`wait`
    returns the first message matching a predicate (or fails after a timeout).
    """

    def __init__(self):
        import threading

        from tests.conftest import server_env

        self.proc = subprocess.Popen([sys.executable, "-m", "tile_lsp.cli", "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=server_env())
        self.messages: list[dict] = []
        self.stderr = b""
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = out.read(length)
            with self._cond:
                self.messages.append(json.loads(body))
                self._cond.notify_all()

    def _read_stderr(self):
        self.stderr = self.proc.stderr.read()

    def send_bytes(self, body: bytes):
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: dict):
        self.send_bytes(json.dumps(message).encode())

    def request(self, msg_id, method, params):
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, predicate, timeout=30.0):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for m in self.messages:
                    if predicate(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching message in {timeout} s; got {self.messages[-5:]}")
                self._cond.wait(left)

    def response(self, msg_id, timeout=30.0):
        return self.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def initialize(self):
        self.request(0, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        self.response(0, timeout=60)
        self.notify("initialized", {})

    def close(self):
        try:
            self.request(99999, "shutdown", None)
            self.response(99999, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def raw_server():
    server = RawServer()
    server.initialize()
    yield server
    server.close()


URI = "file:///workspace/k.mlir"
KERNEL = "entry @k(%a: tile<i32>) {\n  %0 = addi %a, %a : tile<i32>\n  return\n}\n"


def _open(server, text, uri=URI):
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "mlir", "version": 1,
                                                            "text": text}})


@pytest.mark.parametrize("params", [
    {"textDocument": {"uri": URI}, "position": {"line": -1, "character": 0}},
    {"textDocument": {"uri": URI}, "position": {"line": 0, "character": -5}},
    None,
    {"textDocument": {}, "position": {"line": 0, "character": 0}},
])
def test_request_with_invalid_params_is_answered_invalid_params(raw_server, params):
    _open(raw_server, KERNEL)
    raw_server.request(7, "textDocument/hover", params)
    answer = raw_server.response(7)
    assert answer["error"]["code"] == -32602, answer
    # the server goes on answering
    raw_server.request(8, "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 1, "character": 3}})
    assert "result" in raw_server.response(8)


def test_malformed_messages_are_warnings_and_the_server_lives(raw_server):
    _open(raw_server, KERNEL)
    raw_server.send_bytes(b"{not json")
    raw_server.send_bytes(b"[1, 2]")
    raw_server.notify("textDocument/didChange", None)
    raw_server.send({"jsonrpc": "2.0", "id": 5, "method": "textDocument/definition", "params": 17})
    assert raw_server.response(5)["error"]["code"] == -32602
    raw_server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    raw_server.request(6, "textDocument/documentSymbol", {"textDocument": {"uri": URI}})
    assert raw_server.response(6)["result"]
    assert not [m for m in raw_server.messages
                if m.get("method") == "window/logMessage" and m["params"]["type"] == 1], "no Error-level log"


def test_refused_rename_is_a_refusal_not_an_internal_error(raw_server):
    _open(raw_server, KERNEL)
    raw_server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    raw_server.request(3, "textDocument/rename", {"textDocument": {"uri": URI},
                                                 "position": {"line": 1, "character": 3}, "newName": "not a name"})
    answer = raw_server.response(3)
    assert answer["error"]["code"] == -32803, answer
    raw_server.request(4, "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": 1, "character": 3}})
    raw_server.response(4)
    logs = [m["params"] for m in raw_server.messages if m.get("method") == "window/logMessage"]
    assert not [p for p in logs if p["type"] == 1 or "internal error" in p["message"]], logs


# -- line breaks: LSP counts only \n, \r\n and \r ---------------------------------------------------

LOOKALIKES = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_lsp_lines_split_only_at_lsp_breaks():
    from tile_lsp.analysis.ir.diagnostics import split_lines
    from tile_lsp.server.document import lsp_lines

    text = "a\fb\vc\x1cd\x85e\u2028f\u2029g\r\nh\ri\nj"
    assert lsp_lines(text) == ("a\fb\vc\x1cd\x85e\u2028f\u2029g\r\n", "h\r", "i\n", "j")
    assert split_lines(text) == ["a\fb\vc\x1cd\x85e\u2028f\u2029g\r\n", "h\ri\n", "j"]
    assert lsp_lines("") == () and split_lines("") == []
    assert lsp_lines("x\n") == ("x\n",) and split_lines("x\n") == ["x\n"]


def test_split_chunks_counts_lines_at_newlines_only():
    from tile_lsp.analysis.ir.split import split_chunks

    chunks = split_chunks("a\u2028b\n// -----\nc\n")
    assert [(c.start_line, c.text) for c in chunks] == [(0, "a\u2028b\n"), (2, "c\n")]


def _cli_diagnostics(tmp_path, text: str) -> list[tuple]:
    f = tmp_path / "k.mlir"
    f.write_bytes(text.encode("utf-8"))
    proc = subprocess.run([sys.executable, "-m", "tile_lsp.cli", "--check", str(f), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((d["line"] - 1, d["message"]) for d in json.loads(proc.stdout or "[]"))


@pytest.mark.parametrize("char", LOOKALIKES)
def test_server_diagnostics_equal_the_clis_after_line_break_lookalikes(raw_server, tmp_path, char):
    # an edit after the character lands where the client put it, and the diagnostics are the CLI's
    text = f"// a comment with {char} inside\n" + KERNEL
    _open(raw_server, text)
    raw_server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    # break line 2 (the addi): a missing operand
    raw_server.notify("textDocument/didChange", {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 2, "character": 16}, "end": {"line": 2, "character": 20}},
                            "text": ""}]})
    lines = text.split("\n")
    lines[2] = lines[2][:16] + lines[2][20:]
    final = "\n".join(lines)
    expected = _cli_diagnostics(tmp_path, final)
    assert expected  # the edit broke the op
    published = raw_server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"].get("version") == 2)
    got = sorted((d["range"]["start"]["line"], d["message"]) for d in published["params"]["diagnostics"])
    assert got == expected

"""The editor configurations of docs/editors.md: each runs ``tile-lsp serve`` for the Tile IR text files
the command line collects (the editors are not installed: the snippets are read and checked)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tile_lsp.config import DEFAULT_INCLUDE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "editors.md").read_text()
SERVE = ["tile-lsp", "serve"]
#: the text files of the CLI's walk (bytecode is binary: only VS Code opens it, as text)
TEXT_SUFFIXES = {g.removeprefix("*.") for g in DEFAULT_INCLUDE} - {"tileirbc"}


def block(language: str, heading: str) -> str:
    section = DOC.split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]
    (found,) = re.findall(rf"```{language}\n(.*?)```", section, re.S)
    return found


def test_text_suffixes_are_those_of_the_cli():
    assert TEXT_SUFFIXES == {"mlir", "tileir"}


def test_neovim_vim_lsp_config():
    lua = block("lua", "Neovim")
    (name, body) = re.fullmatch(r'.*vim\.lsp\.config\("(\w+)", \{\n(.*?)\n\}\)\n.*', lua, re.S).groups()
    assert re.findall(r'vim\.lsp\.enable\("(\w+)"\)', lua) == [name]
    cmd = re.search(r"^  cmd = \{(.*)\},$", body, re.M).group(1)
    assert re.findall(r'"([^"]*)"', cmd) == SERVE
    filetypes = re.findall(r'"(\w+)"', re.search(r"^  filetypes = \{(.*)\},$", body, re.M).group(1))
    # Neovim knows *.mlir as filetype "mlir"; the snippet maps *.tileir to "tileir"
    extension_map = dict(re.findall(r"(\w+) = \"(\w+)\"", re.search(r"vim\.filetype\.add\((.*)\)", lua).group(1)))
    covered = {suffix for suffix in TEXT_SUFFIXES if extension_map.get(suffix, suffix) in filetypes}
    assert covered == TEXT_SUFFIXES
    markers = re.findall(r'"([^"]+)"', re.search(r"^  root_markers = \{(.*)\},$", body, re.M).group(1))
    assert markers[0] == "tile-lsp.toml"


def test_helix_languages_toml():
    config = tomllib.loads(block("toml", "Helix"))
    server = config["language-server"]["tile-lsp"]
    assert [server["command"], *server["args"]] == SERVE
    (language,) = config["language"]
    assert language["language-servers"] == ["tile-lsp"]
    assert set(language["file-types"]) == TEXT_SUFFIXES
    assert language["roots"][0] == "tile-lsp.toml"
    assert language["comment-token"] == "//"


def _elisp_regexp(literal: str) -> re.Pattern:
    """An Emacs string literal holding a regexp -> the Python regexp."""
    text = literal.encode().decode("unicode_escape")  # "\\." -> "\."
    for emacs, python in ((r"\(", "("), (r"\)", ")"), (r"\|", "|"), (r"\'", r"\Z"), (r"\`", r"\A")):
        text = text.replace(emacs, python)
    return re.compile(text)


def test_emacs_eglot():
    elisp = block("elisp", "Emacs")
    (mode, program) = re.search(r"\(add-to-list 'eglot-server-programs '\((\S+) \. \(([^)]*)\)\)\)",
                                elisp).groups()
    assert re.findall(r'"([^"]*)"', program) == SERVE
    assert f"(add-hook '{mode}-hook #'eglot-ensure)" in elisp
    (pattern, auto_mode) = re.search(r"\(add-to-list 'auto-mode-alist '\(\"(.*)\" \. (\S+)\)\)", elisp).groups()
    assert auto_mode == mode
    regexp = _elisp_regexp(pattern)
    for suffix in TEXT_SUFFIXES:
        assert regexp.search(f"kernels/k.{suffix}"), suffix
    for name in ("k.mlir.orig", "k.tileirbc", "notes.txt"):
        assert not regexp.search(name), name
    assert f"(define-derived-mode {mode} prog-mode" in elisp


def test_readme_lists_the_server_capabilities():
    """Every LSP method the server registers is in the README's capability list, and the other way round."""
    from tile_lsp.server.app import create_server

    server = create_server()
    registered = set(server.protocol.fm.features)
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Capabilities", 1)[1].split("\n#", 1)[0]
    listed = set(re.findall(r"`((?:textDocument|workspace|tileir)/[\w/]+|initialize|shutdown)`", section))
    lifecycle = {"initialize", "shutdown", "textDocument/didOpen", "textDocument/didChange",
                 "textDocument/didClose", "workspace/didChangeConfiguration"}
    assert registered - lifecycle <= listed, sorted(registered - lifecycle - listed)
    # sent by the server, or the request behind the commands
    assert listed - registered == {"textDocument/publishDiagnostics", "workspace/executeCommand"}
    commands = set(re.findall(r"`(tile\.\w+)`", section))
    assert commands == set(server.protocol.fm.commands)

"""``tile-lsp translate --from-bytecode FILE`` prints exactly what ``tileirdisasm FILE`` prints.

Reference texts: the corpus ``kernels/*.mlir`` (and ``*.g.mlir`` for ``-g``) are
``tileirdisasm``'s (``-g``) output for the ``.tileirbc`` beside them, byte for
byte (checked here too when the tool is installed), so the main comparison
needs no NVIDIA tool.  Other corpus ``.tileirbc`` files (conformance inputs)
have no printed text; they are compared with the tool's output directly.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_nvidia_tool
from tile_lsp.analysis.ir.apfloat import apfloat_to_string, mlir_float_text
from tile_lsp.cli import main


def _translate(path: Path, tmp_path: Path, *options: str) -> tuple[int, bytes]:
    out = tmp_path / (path.stem + ".out.mlir")
    if out.exists():
        out.unlink()
    rc = main(["translate", "--from-bytecode", *options, str(path), "-o", str(out)])
    return rc, (out.read_bytes() if out.exists() else b"")


def _mismatches(pairs, tmp_path: Path, *options: str) -> list[str]:
    bad = []
    for bc, expected in pairs:
        rc, ours = _translate(bc, tmp_path, *options)
        if rc != 0 or ours != expected:
            bad.append(bc.name)
    return bad


def test_kernels_match_corpus_text(corpus: Path, tmp_path: Path) -> None:
    """Every ``kernels/*.tileirbc`` prints as its ``.mlir`` (tileirdisasm's text)."""
    files = sorted((corpus / "kernels").glob("*.tileirbc"))
    assert files
    pairs = [(f, f.with_suffix(".mlir").read_bytes()) for f in files if f.with_suffix(".mlir").exists()]
    assert len(pairs) == len(files)
    assert _mismatches(pairs, tmp_path) == []


def test_kernels_debug_info_match_corpus_text(corpus: Path, tmp_path: Path) -> None:
    """``-g``: every ``kernels/*.tileirbc`` with a ``.g.mlir`` prints as it (``tileirdisasm -g``)."""
    pairs = []
    for f in sorted((corpus / "kernels").glob("*.tileirbc")):
        g = f.with_name(f.name[: -len(".tileirbc")] + ".g.mlir")
        if g.exists():
            pairs.append((f, g.read_bytes()))
    assert pairs
    assert _mismatches(pairs, tmp_path, "-g") == []


def _tool_output(tool: str, path: Path, *options: str) -> tuple[int, bytes]:
    r = subprocess.run([tool, *options, str(path)], capture_output=True, timeout=60)
    return r.returncode, r.stdout


def test_corpus_text_is_tileirdisasm_output(corpus: Path) -> None:
    """The reference ``.mlir``/``.g.mlir`` texts are what the installed ``tileirdisasm`` prints."""
    tool = require_nvidia_tool("tileirdisasm")
    bad = []
    for f in sorted((corpus / "kernels").glob("*.tileirbc")):
        base = f.name[: -len(".tileirbc")]
        for name, options in ((base + ".mlir", ()), (base + ".g.mlir", ("-g",))):
            ref = f.with_name(name)
            if ref.exists() and _tool_output(tool, f, *options) != (0, ref.read_bytes()):
                bad.append(name)
    assert bad == []


@pytest.mark.parametrize("options", [(), ("-g",)], ids=["plain", "debug-info"])
def test_other_corpus_bytecode_matches_tileirdisasm(corpus: Path, tmp_path: Path, options) -> None:
    """Corpus ``.tileirbc`` files outside ``kernels/``: same text as the tool, and
    an error exactly where the tool reports one."""
    tool = require_nvidia_tool("tileirdisasm")
    files = sorted(f for f in corpus.rglob("*.tileirbc") if f.parent.name != "kernels")
    assert files
    bad = []
    for f in files:
        rc, expected = _tool_output(tool, f, *options)
        ours_rc, ours = _translate(f, tmp_path, *options)
        if (rc == 0) != (ours_rc == 0) or (rc == 0 and ours != expected):
            bad.append(str(f.relative_to(corpus)))
    assert bad == []


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


@pytest.mark.parametrize(("value", "type_name", "text"), [
    (_f32(0.797884583), "f32", "0.797884583"),
    (_f32(0.01), "f32", "0.00999999977"),
    (_f32(5.96046448e-8), "f32", "5.96046448E-8"),
    (_f32(1e-12), "f32", "9.99999996E-13"),
    (_f32(1e30), "f64", "1.0000000150474662E+30"),
    (_f32(1e30), "f32", "1.000000e+30"),
    (_f32(0.044715), "f32", "4.471500e-02"),
    (0.0, "f32", "0.000000e+00"),
    (-0.0, "f64", "-0.000000e+00"),
    (0.1, "f64", "1.000000e-01"),
    (123456789.0, "f64", "0x419D6F3454000000"),  # the default form has no '.': hex
    (float("-inf"), "f32", "0xFF800000"),
])
def test_mlir_float_text(value: float, type_name: str, text: str) -> None:
    """MLIR's printFloatValue: %e with 6 digits when exact, else APFloat's default form."""
    assert mlir_float_text(value, type_name) == text


def test_apfloat_to_string_forms() -> None:
    """APFloat::toString's padding/scientific choices and half-up digit rounding."""
    assert apfloat_to_string(1.5, "f64") == "1.5"
    assert apfloat_to_string(1500.0, "f64") == "1500"
    assert apfloat_to_string(1.5e20, "f64") == "1.5E+20"
    assert apfloat_to_string(0.00125, "f64") == "0.00125"
    assert apfloat_to_string(0.000125, "f64") == "1.25E-4"
    assert apfloat_to_string(2.0, "f32", 6, 0, False) == "2.000000e+00"
    assert apfloat_to_string(0.0, "f32", 6, 0, False) == "0.000000e+00"
    assert apfloat_to_string(_f32(2 / 3), "f32") == "0.666666686"
    # the first pass truncates surplus digits (LLVM does; tileirdisasm prints 4.299160e-03 for f16 0x1C67)
    assert apfloat_to_string(_f32(2 / 3), "f32", 6, 0, False) == "6.666660e-01"
    assert mlir_float_text(struct.unpack("<e", bytes.fromhex("671c"))[0], "f16") == "4.299160e-03"

"""What one iteration of a kernel's main loop costs in SASS, per warp, on the path that runs: no GPU needed.

Lowers a corpus kernel (or any ``.mlir``) with this checkout's :func:`tile_lsp.codegen.lower_text`,
assembles the PTX with ``ptxas`` and disassembles the cubin with ``cuobjdump -sass`` (the NVIDIA
tools of the venv's PyPI packages, ``tile_lsp.nvidia.find_tool``), then prints, for the loop with
the most instructions (the longest backward branch), the SASS instructions between its head and
its back edge by opcode, with the registers ``ptxas -v`` reports::

    python bench/sass_loop.py flash_attention_f16_causal_d64_128x64.sm_90
    python bench/sass_loop.py matmul_tiled_f16_128x128x32.sm_90 --top 40
    PYTHONPATH=/other/checkout python bench/sass_loop.py KERNEL   # another checkout's lowering

Staged copies test at run time whether 16-byte vectors apply and keep an element copy for when
they do not (``ops_memory.copy_to_staged``); that copy, hundreds of instructions inside the loop,
does not run on aligned tensors.  So the PTX is first rewritten as if every such test passed: the
branches to the element copies (``$L_copy_elements_*``, ``$L_load_elements_*``) are dropped and
those over them (``$L_copied_ahead_*``) made unconditional; ptxas then removes the dead copies and
the loop holds what an iteration executes (every warp runs the whole body: the lowering's
branches are uniform).  ``--as-is`` measures the PTX unchanged.
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import tile_lsp  # noqa: F401  - from PYTHONPATH first: the lowering measured

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT.parent / "shared" / "corpus" / "kernels"


def assume_aligned(ptx: str) -> str:
    """``ptx`` with every run-time vector-alignment test of a staged copy taken as passed (module
    docstring): ``@!%p bra.uni $L_copy_elements_N`` / ``$L_load_elements_N`` lines dropped, and
    ``@%p bra.uni $L_copied_ahead_N`` made unconditional."""
    ptx = re.sub(r"^\s*@!%p\d+ bra\.uni \$L_(?:copy|load)_elements_\d+;\n", "", ptx, flags=re.M)
    return re.sub(r"@%p\d+ (bra\.uni \$L_copied_ahead_\d+;)", r"\1", ptx)


def sass_instructions(sass: str) -> list[tuple[int, str]]:
    """(address, instruction text without its ``;``) of each SASS line of ``cuobjdump -sass``."""
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*([^;]*);", line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def main_loop(instructions: list[tuple[int, str]]) -> list[str]:
    """The instructions of the loop whose backward branch spans the most addresses (its head to its
    back edge, both included); ``[]`` without a loop."""
    best = None
    for at, text in instructions:
        m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < at and (best is None or at - int(m.group(1), 16) > best[1] - best[0]):
            best = (int(m.group(1), 16), at)
    if best is None:
        return []
    return [text for at, text in instructions if best[0] <= at <= best[1]]


def opcode(text: str) -> str:
    """The opcode with its modifiers of a SASS instruction, its guard (``@P0``, ``@!PT``) left out."""
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def measure(path: Path, target: str, as_is: bool = False) -> dict:
    """``{"registers", "spill_stores", "instructions", "opcodes": Counter}`` of ``path``'s main loop.
    ``SystemExit`` when the kernel does not lower or a tool is missing or fails."""
    from tile_lsp.codegen import lower_text
    from tile_lsp.nvidia import find_tool

    result = lower_text(path.read_text(), target, file_name=path.name)
    if not result.ok:
        raise SystemExit(f"{path.name} does not lower: {result.diagnostics[0].message}")
    ptxas, cuobjdump = find_tool("ptxas"), find_tool("cuobjdump")
    if ptxas is None or cuobjdump is None:
        raise SystemExit("ptxas and cuobjdump are needed: pip install -e '.[nvidia]'")
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(result.ptx if as_is else assume_aligned(result.ptx))
        log = subprocess.run([ptxas, f"-arch={target}", "-v", str(src), "-o", str(cubin)],
                             capture_output=True, text=True)
        if log.returncode:
            raise SystemExit(f"ptxas failed: {log.stderr[:500]}")
        sass = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True, check=True).stdout
    regs = re.search(r"Used (\d+) registers", log.stderr)
    spills = re.search(r"(\d+) bytes spill stores", log.stderr)
    loop = main_loop(sass_instructions(sass))
    return {"registers": int(regs.group(1)) if regs else None,
            "spill_stores": int(spills.group(1)) if spills else 0,
            "instructions": len(loop), "opcodes": collections.Counter(opcode(t) for t in loop)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", help="corpus kernel NAME.sm_XX, or a path to a .mlir file")
    parser.add_argument("--target", help="sm_XX (default: the kernel name's)")
    parser.add_argument("--top", type=int, default=25, help="opcodes to print (default 25)")
    parser.add_argument("--as-is", action="store_true", help="keep the element copies (no rewrite)")
    args = parser.parse_args(argv)
    path = Path(args.kernel)
    if not path.exists():
        path = KERNELS / f"{args.kernel}.mlir"
    target = args.target or (re.search(r"\.(sm_\d+)", path.name) or [None, "sm_90"])[1]
    print(f"tile_lsp: {Path(tile_lsp.__file__).parent}")
    m = measure(path, target, args.as_is)
    print(f"{path.name} ({target}): {m['registers']} registers, {m['spill_stores']} bytes spilled"
          f"{'' if args.as_is else ' (the rewritten PTX; --as-is for the real one)'}; "
          f"main loop: {m['instructions']} SASS instructions a warp an iteration")
    for op, n in m["opcodes"].most_common(args.top):
        print(f"{n:6d}  {op}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

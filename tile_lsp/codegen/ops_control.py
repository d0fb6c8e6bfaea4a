"""Lowering of structured control flow, tokens, block ids, assert, print and grid dependency control.

``for``, ``loop`` and ``if`` become PTX branches over the same registers:
loop-carried values (``iter_values``) and if results are registers that
``continue``/``yield``/``break`` assign before branching.  Conditions are
0-d tiles, replicated in every thread, so every branch is uniform
(``bra.uni``) and ``bar.sync`` inside a region is safe.  ``print_tko`` and
``assert`` call the CUDA ``vprintf`` system call from thread 0 / from any
failing thread (then ``trap``).  Semantics: NVIDIA cuda-tile ``Ops.td``
(ForOp, LoopOp, IfOp, BreakOp, ContinueOp, PrintTkoOp, AssertOp).
"""

from __future__ import annotations

import re

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.codegen.lower import KernelLowering, handler
from tile_lsp.codegen.fragment_layouts import is_uniform, loop_marks
from tile_lsp.codegen.prefetch import prefetch_loads
from tile_lsp.codegen.mma_fragments import (FragmentTile, RowBroadcast, RowFragments, broadcast_rows, fresh_like,
                                            from_fragments, from_rows, new_fragments, new_rows, relayout,
                                            to_fragments, to_rows)
from tile_lsp.codegen.ptx import TOKEN, LoweringError, TileValue, reg_class
from tile_lsp.dialect import types as T


def _fresh_like(lw: KernelLowering, x):
    if isinstance(x, TileValue):
        cls = reg_class(x.elem)
        return TileValue(x.shape, x.elem, [lw.f.reg(cls) for _ in x.regs])
    if isinstance(x, FragmentTile):
        return fresh_like(lw, x)
    if isinstance(x, RowFragments):
        return new_rows(lw, x.shape, x.elem)
    if isinstance(x, RowBroadcast):
        return _fresh_like(lw, broadcast_rows(lw, x))
    return x  # tokens, views: not carried in registers


def _assign(lw: KernelLowering, dst, src) -> None:
    """Move ``src``'s registers into ``dst``'s, converting between the distribution, MMA fragments
    (strided or row-blocked) and fragment rows where the two differ
    (:mod:`tile_lsp.codegen.mma_fragments`, :mod:`tile_lsp.codegen.fragment_layouts`)."""
    if isinstance(src, RowBroadcast):
        src = broadcast_rows(lw, src)
    if isinstance(src, RowFragments) and not isinstance(dst, RowFragments):
        src = from_rows(lw, src)
    if isinstance(dst, RowFragments) and isinstance(src, TileValue):
        src = to_rows(lw, src)
    if isinstance(dst, FragmentTile) and isinstance(src, TileValue):
        src = to_fragments(lw, src, dst.blocked)
    elif isinstance(dst, FragmentTile) and isinstance(src, FragmentTile):
        src = relayout(lw, src, dst.blocked)
    elif isinstance(dst, TileValue) and isinstance(src, FragmentTile):
        src = from_fragments(lw, src)
    if isinstance(dst, (TileValue, FragmentTile, RowFragments)):
        cls = reg_class(dst.elem)
        for d, s in zip(dst.regs, src.regs):
            lw.mov(cls, d, s)


@handler("make_token", "join_tokens")
def _token(lw: KernelLowering, op: Operation) -> None:
    for r in op.results:
        lw.set(r, TOKEN)


@handler("get_tile_block_id", "get_num_tile_blocks")
def _block_ids(lw: KernelLowering, op: Operation) -> None:
    sreg = "%ctaid" if op.name.endswith("get_tile_block_id") else "%nctaid"
    for r, axis in zip(op.results, "xyz"):
        out = lw.new_result(op, op.results.index(r))
        lw.f.emit(f"mov.u32 {out.regs[0]}, {sreg}.{axis}")


@handler("for")
def _for(lw: KernelLowering, op: Operation) -> None:
    f = lw.f
    lb, ub, step = (lw.scalar_int(v, 64 if (op.operands[0].type.element.width == 64) else 32)
                    for v in op.operands[:3])
    w64 = op.operands[0].type.element.width == 64
    inits = [lw.get(v) for v in op.operands[3:]]
    iters = [_fresh_like(lw, x) for x in inits]
    # the iteration values tile-assign-layouts put in MMA fragments (codegen/mma_fragments.py)
    # and those codegen/fragment_layouts.py keeps row-blocked, or as fragment rows
    marked = op.attr("tile_lsp.fragments")
    in_fragments = {a.value for a in marked.elements} if isinstance(marked, A.ArrayAttr) else set()
    blocked, rows = loop_marks(op, "tile_lsp.fragments_blocked"), loop_marks(op, "tile_lsp.fragment_rows")
    for i, x in enumerate(inits):
        if i in in_fragments and isinstance(x, TileValue):
            iters[i] = new_fragments(lw, x.shape, x.elem, i in blocked)
        elif i in rows and isinstance(x, (TileValue, RowFragments)):
            iters[i] = new_rows(lw, x.shape, x.elem)
            if isinstance(x, TileValue) and is_uniform(op.operands[3 + i]):  # every row the same value
                for r in iters[i].regs:
                    lw.mov(reg_class(x.elem), r, x.regs[0])
                inits[i] = iters[i]
    for d, s in zip(iters, inits):
        if d is not s:
            _assign(lw, d, s)
    iv = f.reg("b64" if w64 else "b32")
    f.emit(f"mov.b{64 if w64 else 32} {iv}, {lb}")
    head, latch, done = f.label("for"), f.label("for_next"), f.label("for_end")
    ivt = TileValue((), op.operands[0].type.element, [iv])
    ops = lw.bind_block(op.regions[0], [ivt] + iters)
    cmp = "u" if op.attr("unsignedCmp") is not None else "s"
    # the first iteration's staged copies, issued before the loop; with two stages (codegen/prefetch.py)
    # the body's shared memory is the iteration's stage, swapped with the other at the back edge
    stages = None
    if prefetch_loads(lw, op, lb, ub):
        # this iteration's stage, the other one, their XOR, the bytes from the first to this one, the stride
        stages = tuple(f.reg("b32") for _ in range(5))
        f.emit(f"mov.b32 {stages[0]}, {lw.first_stage_addr()}")
        f.emit(f"mov.b32 {stages[1]}, {lw.second_stage_addr()}")
        f.emit(f"xor.b32 {stages[2]}, {stages[0]}, {stages[1]}")
        f.emit(f"mov.b32 {stages[3]}, 0")
        f.emit(f"sub.s32 {stages[4]}, {stages[1]}, {stages[0]}")
    p = f.reg("pred")
    f.place(head)
    f.emit(f"setp.ge.{cmp}{64 if w64 else 32} {p}, {iv}, {ub}")
    f.emit(f"@{p} bra.uni {done}")
    lw.loop_stack.append({"iters": iters, "results": iters, "head": latch, "end": done,
                          "iv": iv, "step": step, "ub": ub, "cmp": cmp,
                          "other_stage": stages[1] if stages else None})
    with lw.in_stage(*(stages[0], stages[3]) if stages else (lw.shared_base, lw.stage_delta)):
        lw.run_ops(ops)
    lw.loop_stack.pop()
    f.loc = lw.loc_of(op)
    f.wait_async()
    f.place(latch)
    f.emit(f"add.s{64 if w64 else 32} {iv}, {iv}, {step}")
    if stages:
        f.emit(f"xor.b32 {stages[0]}, {stages[0]}, {stages[2]}")
        f.emit(f"xor.b32 {stages[1]}, {stages[1]}, {stages[2]}")
        f.emit(f"xor.b32 {stages[3]}, {stages[3]}, {stages[4]}")
    f.emit(f"bra.uni {head}")
    f.place(done)
    for r, x in zip(op.results, iters):
        lw.set(r, x)


@handler("loop")
def _loop(lw: KernelLowering, op: Operation) -> None:
    f = lw.f
    inits = [lw.get(v) for v in op.operands]
    iters = [_fresh_like(lw, x) for x in inits]
    for d, s in zip(iters, inits):
        _assign(lw, d, s)
    results = []
    for r in op.results:
        if isinstance(r.type, T.TileType):
            results.append(lw.new_tile(r.type))
        else:
            results.append(TOKEN)
    head, done = f.label("loop"), f.label("loop_end")
    ops = lw.bind_block(op.regions[0], iters)
    f.place(head)
    lw.loop_stack.append({"iters": iters, "results": results, "head": head, "end": done})
    lw.run_ops(ops)
    lw.loop_stack.pop()
    f.loc = lw.loc_of(op)
    f.wait_async()
    f.place(done)
    for r, x in zip(op.results, results):
        lw.set(r, x)


@handler("continue")
def _continue(lw: KernelLowering, op: Operation) -> None:
    loop = lw.loop_stack[-1]
    vals = [lw.get(v) for v in op.operands]
    tmp = [_fresh_like(lw, v) for v in vals]  # parallel copy: read all before writing
    for d, s in zip(tmp, vals):
        _assign(lw, d, s)
    for d, s in zip(loop["iters"], tmp):
        _assign(lw, d, s)
    lw.f.wait_async()
    lw.f.emit(f"bra.uni {loop['head']}")


@handler("break")
def _break(lw: KernelLowering, op: Operation) -> None:
    loop = lw.loop_stack[-1]
    for d, v in zip(loop["results"], op.operands):
        _assign(lw, d, lw.get(v))
    lw.f.wait_async()
    lw.f.emit(f"bra.uni {loop['end']}")


@handler("if")
def _if(lw: KernelLowering, op: Operation) -> None:
    f = lw.f
    cond = lw.tile(op.operands[0]).regs[0]
    results = [lw.new_tile(r.type) if isinstance(r.type, T.TileType) else TOKEN for r in op.results]
    other, done = f.label("else"), f.label("endif")
    f.emit(f"@!{cond} bra.uni {other}")
    lw.yield_stack.append(results)
    lw.run_ops(op.regions[0].blocks[0].operations if op.regions[0].blocks else [])
    f.loc = lw.loc_of(op)
    f.wait_async()
    f.emit(f"bra.uni {done}")
    f.place(other)
    if len(op.regions) > 1 and op.regions[1].blocks:
        lw.run_ops(op.regions[1].blocks[0].operations)
        f.wait_async()
    lw.yield_stack.pop()
    f.place(done)
    for r, x in zip(op.results, results):
        lw.set(r, x)


@handler("yield")
def _yield(lw: KernelLowering, op: Operation) -> None:
    if not lw.yield_stack:
        raise LoweringError("'cuda_tile.yield' outside an 'if' is not supported by the lowering")
    for d, v in zip(lw.yield_stack[-1], op.operands):
        _assign(lw, d, lw.get(v))


@handler("return")
def _return(lw: KernelLowering, op: Operation) -> None:
    lw.f.wait_async()
    lw.f.emit("ret")


@handler("gdc_wait_tko", "gdc_launch_dependents_tko")
def _gdc(lw: KernelLowering, op: Operation) -> None:
    for r in op.results:
        lw.set(r, TOKEN)
    if "gdc" in lw.target.features:
        ins = "wait" if "wait" in op.name else "launch_dependents"
        lw.f.emit(f"griddepcontrol.{ins}")


# ---------------------------------------------------------------------------
# printf
# ---------------------------------------------------------------------------

VPRINTF_DECL = (".extern .func (.param .b32 func_retval0) vprintf\n(\n"
                "\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n);")


def _cstring(lw: KernelLowering, text: str) -> str:
    data = text.encode() + b"\0"
    sym = f"__tile_lsp_str_{len(lw.decls)}"
    lw.decls[sym] = f".global .align 1 .b8 {sym}[{len(data)}] = {{{', '.join(str(b) for b in data)}}};"
    return sym


def _vprintf(lw: KernelLowering, fmt_sym: str, args: list[tuple[str, str]]) -> None:
    """Call vprintf with ``args`` ((register, PTX type) pairs) packed in a local buffer (C varargs rules)."""
    f = lw.f
    lw.decls.setdefault("vprintf", VPRINTF_DECL)
    fmt = f.reg("b64")
    f.emit(f"mov.u64 {fmt}, {fmt_sym}")
    f.emit(f"cvta.global.u64 {fmt}, {fmt}")
    buf = f.reg("b64")
    if args:
        size = 8 * len(args)
        key = ("printbuf",)
        if key not in f.cache or f.cache[key] < size:
            f.cache[key] = max(size, f.cache.get(key, 0))
        f.emit(f"mov.u64 {buf}, __tile_lsp_printbuf")
        f.emit(f"cvta.local.u64 {buf}, {buf}")
        for i, (r, ty) in enumerate(args):
            f.emit(f"st.local.{ty} [__tile_lsp_printbuf+{8 * i}], {r}")
    else:
        f.emit(f"mov.u64 {buf}, 0")
    f.body.append("\t{")
    f.body.append("\t.param .b64 param0;\n\t.param .b64 param1;\n\t.param .b32 retval0;")
    f.emit(f"st.param.b64 [param0], {fmt}")
    f.emit(f"st.param.b64 [param1], {buf}")
    f.emit("call.uni (retval0), vprintf, (param0, param1)")
    f.body.append("\t}")


def _print_arg(lw: KernelLowering, tv: TileValue) -> tuple[str, str]:
    f = lw.f
    r = tv.regs[0]
    cls = reg_class(tv.elem)
    name = getattr(tv.elem, "name", None)
    if name is not None and cls in ("f32", "b16", "f64"):
        if cls == "f64":
            return r, "f64"
        d = f.reg("f64")
        f.emit(f"cvt.f64.f32 {d}, {lw.to_f32(r, tv.elem)}")
        return d, "f64"
    if cls == "pred":
        t = f.reg("b32")
        f.emit(f"selp.b32 {t}, 1, 0, {r}")
        return t, "b32"
    if cls == "b64":
        return r, "b64"
    return r, "b32"


@handler("print_tko")
def _print(lw: KernelLowering, op: Operation) -> None:
    """Print once per tile block (thread 0); each argument must be a single-element tile."""
    f = lw.f
    args = [lw.tile(v) for v in op.operands if not str(v.type).endswith("token")]
    for r in op.results:
        lw.set(r, TOKEN)
    for a in args:
        if a.n != 1:
            raise LoweringError("print_tko of a tile with more than one element is not supported by the "
                                "lowering yet")
    text = op.attr("str").value if isinstance(op.attr("str"), A.StringAttr) else ""
    sym = _cstring(lw, text)
    skip = f.label("print_skip")
    p = f.reg("pred")
    f.emit(f"setp.ne.u32 {p}, {lw.tid}, 0")
    f.emit(f"@{p} bra {skip}")
    _vprintf(lw, sym, [_print_arg(lw, a) for a in args])
    f.place(skip)
    f.barrier()


@handler("assert")
def _assert(lw: KernelLowering, op: Operation) -> None:
    """Any false element: the thread holding it prints the message and traps."""
    f = lw.f
    cond = lw.tile(op.operands[0])
    msg = op.attr("message").value if isinstance(op.attr("message"), A.StringAttr) else "assertion failed"
    sym = _cstring(lw, re.sub("%", "%%", msg) + "\n")
    ok = f.label("assert_ok")
    allp = f.reg("pred")
    f.emit(f"mov.pred {allp}, {cond.regs[0]}")
    for r in cond.regs[1:]:
        f.emit(f"and.pred {allp}, {allp}, {r}")
    f.emit(f"@{allp} bra {ok}")
    _vprintf(lw, sym, [])
    f.emit("trap")
    f.place(ok)


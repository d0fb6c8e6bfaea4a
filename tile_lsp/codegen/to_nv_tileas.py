"""Pass ``convert-to-nv-tileas``: view loads and stores, MMA, reductions and scans as nv_tileas ops.

Runs after ``tile-assign-layouts`` and rewrites the entries in place; the
``nv_tileas`` stage prints the result, and ``convert-to-ptx`` lowers it (the
emitter has handlers for the nv_tileas ops, next to their cuda_tile
counterparts).  The rewrites, one row of :data:`REWRITES` per op:

``load_view_tko`` / ``store_view_tko`` on a partition or strided view
    ``nv_tileaa.block_tile`` of the view (once per view and tile type, right
    after the op that makes the view) gives a ``!nv_tileaa.tiled_view<SHAPE x
    ELEM, GMEM>``; each ``tile<i32>`` index becomes an ``index`` through one
    ``arith.index_cast`` after its definition; the access becomes ``nv_tileas.tiled_load`` /
    ``nv_tileas.tiled_store`` with the copy atom, ``mem_semantic`` /
    ``mem_scope`` (weak accesses have no scope), the view's ``padding_value``
    and ``operandSegmentSizes`` (view, coords, offsets, token).  Gather/scatter
    views keep their cuda_tile ops (their index is a tile, not an ``index``).
``mmaf`` / ``mmai``
    A and B staged in shared memory: per operand an ``nv_tileas.alloc_tensor``
    (a ``!nv_tileas.tiled_view<SHAPE x ELEM, SMEM>`` at byte
    ``tile_lsp.smem_offset`` of the staging scratch, A at 0 and B after it,
    :func:`~tile_lsp.codegen.ptx.staged_bytes` per element) and a weak
    whole-tile ``nv_tileas.tiled_store`` at coordinates ``0`` (one
    ``arith.constant 0 : index`` per entry); then ``nv_tileas.dot`` of the two
    buffers and C with the atom ``mma_<A>_<B>_<C>`` (``a_signed`` /
    ``b_signed`` for integers).  nv_tileas' dot accumulates in f32 (spec 000
    "expects c type to be Float32"), so an f16/bf16 accumulator is widened by
    ``ftof`` before and narrowed after: the fallback MMA of the emitter
    accumulates in f32 and rounds once anyway.  f64 MMA stays ``mmaf``.
    An operand defined outside a loop that holds the MMA (FlashAttention's Q)
    is staged once, right before the outermost such loop, in a *pinned*
    buffer below the scratch (negative ``tile_lsp.smem_offset``; the entry's
    ``tile_lsp.smem_pinned`` gives the pinned bytes), which nothing staged in
    the loop overwrites.  An operand of several MMAs of one block that no loop
    holds is staged once too, by the first of them, in a pinned buffer that
    the others read.
``reduce`` / ``scan``
    Each operand staged in shared memory as an MMA operand is, then
    ``nv_tileas.reduce`` / ``nv_tileas.scan`` of the buffers with the same
    attributes and combiner region, its terminator an ``nv_tileas.yield``.
    A ``reduce`` or ``scan`` that ``tile-assign-layouts`` marked
    ``tile_lsp.staging = "shfl"``
    (:func:`~tile_lsp.codegen.reductions.runs_in_registers`) is not staged:
    its nv_tileas op takes the register tiles, and keeps the
    ``tile_lsp.reduction`` / ``tile_lsp.scan`` plan (in-thread fold or slot
    carry, warp shuffles, one cross-warp step).

Every other op stays a cuda_tile op, as elementwise arithmetic does in
NVIDIA's nv_tileas stage.  The rewritten ops keep the source range of the op
they replace, so ``.loc`` still points at the user's line, and the layout
attributes of ``tile-assign-layouts`` (``tile_lsp.slots``, ``tile_lsp.layout``,
``tile_lsp.staging``).  The printed stage parses with tile-lsp's own parser
and passes the nv_tileas verifiers (``tests/test_codegen.py``).
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.core import Operation, OpResult, Region, Use, Value
from tile_lsp.codegen.ptx import staged_bytes
from tile_lsp.codegen.reductions import marked_in_registers
from tile_lsp.dialect import types as T
from tile_lsp.dialect.nv_tileas_types import decode_keyword_attr
from tile_lsp.dialect.registry import lookup

#: cuda_tile ``memory_scope`` -> nv_tileas ``mem_scope`` (docs/nv_tileas.md "Attributes")
MEM_SCOPES = {"tl_blk": "tl_blk", "device": "gpu", "sys": "sys"}
#: view types whose loads and stores become tiled memops (their indices are scalars)
TILED_VIEWS = (T.PartitionViewType, T.StridedViewType)
INDEX = T.IndexType()
F32 = T.FloatType("f32")
I32 = T.IntegerType(32)
#: The atom of the copies this pass makes (``#nv_tileas<atom copy>``).
COPY_ATOM = "copy"


def atom_attr(name: str) -> A.DialectAttr:
    """``#nv_tileas<atom NAME>`` as the builder builds it from text: the attribute with its decoded
    value (:func:`tile_lsp.dialect.nv_tileas_types.decode_keyword_attr`), which the nv_tileas
    verifiers between passes read (spec 002's worked pipeline example spells the atoms so)."""
    body = f"atom {name}"
    return A.DialectAttr("nv_tileas", "", body, decode_keyword_attr("", body))


def _element_word(t: T.Type) -> str:
    return str(t).lower()


class _Rewriter:
    """Rewrites one entry; keeps the ``block_tile`` ops made so far per (view, tile type) and the
    ``index_cast`` ops per index value."""

    def __init__(self) -> None:
        self.block_tiles: dict[tuple[int, str], Value] = {}
        self.casts: dict[int, Value] = {}
        self.entry: Operation | None = None
        self.zero_index: Value | None = None
        #: loop-invariant MMA operands staged once before their loop: (value, loop) -> buffer, and the
        #: buffers' allocations with their offsets in the pinned region
        self.hoisted: dict[tuple[int, int], Value] = {}
        self.pinned: list[tuple[Operation, int]] = []
        self.pinned_bytes = 0
        #: MMA operands staged once for several MMAs of a block (:meth:`shared`): value -> those MMAs
        self.shared_users: dict[int, set[int]] = {}

    # -- IR surgery ----------------------------------------------------------------------------
    @staticmethod
    def make(name: str, operands: list[Value], result_types: list[T.Type], like: Operation,
             attributes: dict | None = None, segments: dict[str, int] | None = None,
             regions: list[Region] | None = None) -> Operation:
        """A new op ``name`` with ``like``'s source range; ``segments``: size per operand group (in order)."""
        op = Operation(name, lookup(name), list(operands), [like.range] * len(operands),
                       attributes=dict(attributes or {}), range=like.range, name_range=like.name_range)
        for i, v in enumerate(operands):
            v.uses.append(Use(op, i, like.range))
        op.results = [OpResult(f"%{i}", t, owner=op, index=i) for i, t in enumerate(result_types)]
        if segments is not None:
            start = 0
            for group, size in segments.items():
                op.operand_segments[group] = (start, size)
                start += size
        elif op.opdef is not None:
            for i, d in enumerate(op.opdef.operands[:len(operands)]):
                op.operand_segments[d.name] = (i, 1)
        if op.opdef is not None:
            for i, d in enumerate(op.opdef.results[:len(result_types)]):
                op.result_segments[d.name] = (i, 1)
        for region in regions or []:
            region.parent = op
            op.add_region(region)
        return op

    @staticmethod
    def replace(old: Operation, new_ops: list[Operation], values: list[Value]) -> None:
        """Put ``new_ops`` where ``old`` is and redirect the uses of ``old``'s results to ``values``."""
        block = old.parent
        at = block.operations.index(old)
        block.operations[at:at + 1] = new_ops
        for op in new_ops:
            op.parent = block
        for v in old.operands:
            v.uses = [u for u in v.uses if u.owner is not old]
        for r, v in zip(old.results, values):
            for u in r.uses:
                u.owner.operands[u.index] = v
                v.uses.append(u)
            r.uses = []

    @staticmethod
    def insert_after(anchor: Operation, op: Operation) -> None:
        block = anchor.parent
        block.operations.insert(block.operations.index(anchor) + 1, op)
        op.parent = block

    @staticmethod
    def layout_attrs(op: Operation) -> dict:
        return {k: v for k, v in op.attributes.items() if k.startswith("tile_lsp.")}

    # -- views ---------------------------------------------------------------------------------
    def block_tile(self, view: Value, tile: T.TileType) -> Value | None:
        """The tiled_view of ``view`` for tiles of type ``tile`` (made once, after the view's op)."""
        key = (id(view), str(tile))
        if key in self.block_tiles:
            return self.block_tiles[key]
        maker = view.defining_op
        if maker is None or maker.parent is None:
            return None
        shape = "x".join(str(d) for d in tile.shape)
        ty = T.OpaqueType(f"!nv_tileaa.tiled_view<{shape}x{tile.element}, GMEM>")
        op = self.make("nv_tileaa.block_tile", [view], [ty], maker)
        self.insert_after(maker, op)
        self.block_tiles[key] = op.results[0]
        return op.results[0]

    def coords(self, index: list[Value]) -> list[Value]:
        """``index`` values of the ``tile<i32>`` indices: one ``arith.index_cast`` per value, right after
        its definition (at the start of its block for a block argument), shared by all its accesses."""
        out = []
        for v in index:
            if id(v) not in self.casts:
                maker = v.defining_op
                like = maker if maker is not None else v.owner.operations[0]
                cast = self.make("arith.index_cast", [v], [INDEX], like)
                if maker is not None:
                    self.insert_after(maker, cast)
                else:
                    v.owner.operations.insert(0, cast)
                    cast.parent = v.owner
                self.casts[id(v)] = cast.results[0]
            out.append(self.casts[id(v)])
        return out

    @staticmethod
    def memory_attrs(op: Operation) -> dict:
        word = op.enum_case("memory_ordering_semantics", "weak")
        out = {"atom": atom_attr(COPY_ATOM), "mem_semantic": A.StringAttr(word)}
        if word != "weak":
            out["mem_scope"] = A.StringAttr(MEM_SCOPES[op.enum_case("memory_scope", "device")])
        return out

    def tiled_access(self, op: Operation, load: bool) -> bool:
        view = op.operand_group("view")[0]
        if not isinstance(view.type, TILED_VIEWS):
            return False
        tile_type = op.results[0].type if load else op.operand_group("tile")[0].type
        tv = self.block_tile(view, tile_type)
        if tv is None:
            return False
        coords = self.coords(op.operand_group("index"))
        token = op.operand_group("token")
        attrs = self.memory_attrs(op)
        pad = getattr(view.type, "padding_value", None)
        if load and pad is not None:
            attrs["padding_value"] = A.StringAttr(pad)
        attrs.update(self.layout_attrs(op))
        if load:
            new = self.make("nv_tileas.tiled_load", [tv, *coords, *token], [r.type for r in op.results], op,
                            attrs, {"view": 1, "coords": len(coords), "offsets": 0, "token": len(token)})
        else:
            value = op.operand_group("tile")[0]
            new = self.make("nv_tileas.tiled_store", [tv, value, *coords, *token], [r.type for r in op.results],
                            op, attrs, {"view": 1, "value": 1, "coords": len(coords), "offsets": 0,
                                        "token": len(token)})
        self.replace(op, [new], list(new.results))
        return True

    # -- compute -------------------------------------------------------------------------------
    def zero(self, like: Operation) -> Value:
        """The entry's ``arith.constant 0 : index`` (made once, first in the entry's body)."""
        if self.zero_index is None:
            block = self.entry.regions[0].blocks[0]
            op = self.make("arith.constant", [], [INDEX], like, {"value": A.IntegerAttr(0, INDEX)})
            block.operations.insert(0, op)
            op.parent = block
            self.zero_index = op.results[0]
        return self.zero_index

    def stage(self, value: Value, offset: int, like: Operation,
              mma_operand: bool = False) -> tuple[list[Operation], Value, int]:
        """Ops staging the register tile ``value`` in shared memory at byte ``offset`` of the scratch:
        ``nv_tileas.alloc_tensor`` (a ``!nv_tileas.tiled_view<SHAPE x ELEM, SMEM>``, its offset in
        ``tile_lsp.smem_offset``) and a weak ``nv_tileas.tiled_store`` of the whole tile at the
        origin.  Returns the ops, the buffer and the next free (8-byte aligned) offset.  An
        ``mma_operand`` of 16- or 32-bit elements at a 128-byte aligned offset and size is swizzled
        (``tile_lsp.swizzle``: :meth:`~tile_lsp.codegen.lower.KernelLowering.swizzled`), so that the
        rows a warp's fragment loads (``ldmatrix``, or tf32's plain loads) read together lie in
        different banks.  8-bit elements (4 or 2 bytes each in the scratch: rows of 256 bytes) are
        not: this swizzle leaves their A loads' 2-way conflict and adds instructions."""
        t = value.type
        shape = "x".join(str(d) for d in t.shape)
        ty = T.OpaqueType(f"!nv_tileas.tiled_view<{shape}x{t.element}, SMEM>")
        size = t.num_elements * staged_bytes(t.element)
        attrs = {"tile_lsp.smem_offset": A.IntegerAttr(offset, I32)}
        if mma_operand and (T.bit_width(t.element) or 0) >= 16 and offset % 128 == 0 and size % 128 == 0:
            attrs["tile_lsp.swizzle"] = A.UnitAttr()
        alloc = self.make("nv_tileas.alloc_tensor", [], [ty], like, attrs, {"operands": 0})
        zeros = [self.zero(like)] * len(t.shape)
        store = self.make("nv_tileas.tiled_store", [alloc.results[0], value, *zeros], [], like,
                          {"atom": atom_attr(COPY_ATOM), "mem_semantic": A.StringAttr("weak")},
                          {"view": 1, "value": 1, "coords": len(zeros), "offsets": 0, "token": 0})
        end = offset + t.num_elements * staged_bytes(t.element)
        return [alloc, store], alloc.results[0], (end + 7) // 8 * 8

    def hoist(self, value: Value, op: Operation) -> Value | None:
        """The pinned buffer of MMA operand ``value`` of ``op`` when ``value`` is defined outside a loop
        that holds ``op`` (the outermost such ``for`` or ``loop``): staged once, right before that
        loop, instead of at every iteration; ``None`` where no loop holds ``op`` without ``value``.

        Pinned buffers lie below the staging scratch (:func:`convert_to_nv_tileas` places them), so
        that nothing staged in the loop overwrites them; 16-bit ones at 128-byte aligned offsets and
        sizes are swizzled like the other MMA operands."""
        loop = None
        for p in self.enclosing(op):
            if p.name in LOOPS and not defined_inside(value, p):
                loop = p
        if loop is None:
            return None
        key = (id(value), id(loop))
        if key not in self.hoisted:
            ops, self.hoisted[key] = self.pin(value, op)
            block = loop.parent
            block.operations[block.operations.index(loop):block.operations.index(loop)] = ops
            for new in ops:
                new.parent = block
        return self.hoisted[key]

    def pin(self, value: Value, op: Operation) -> tuple[list[Operation], Value]:
        """(staging ops, buffer) of MMA operand ``value`` of ``op`` in a new pinned buffer, after the
        ones so far (128-byte aligned where its size is a multiple of 128, so that it may be swizzled);
        the caller places the ops.  :meth:`run` turns the offsets into negative ones."""
        t = value.type
        size = t.num_elements * staged_bytes(t.element)
        at = (self.pinned_bytes + 127) // 128 * 128 if size % 128 == 0 else self.pinned_bytes
        ops, buf, self.pinned_bytes = self.stage(value, at, op, mma_operand=True)
        self.pinned.append((ops[0], at))
        return ops, buf

    def enclosing(self, op: Operation):
        """The ops whose regions hold ``op``, innermost first, up to the entry (left out)."""
        p = op.parent.parent_op if op.parent is not None else None
        while p is not None and p is not self.entry:
            yield p
            p = p.parent.parent_op if p.parent is not None else None

    def shared(self, value: Value, op: Operation) -> tuple[list[Operation], Value | None]:
        """(staging ops, pinned buffer) of MMA operand ``value`` of ``op`` when ``value`` is an operand of
        several MMAs in ``op``'s block, a block that no loop holds: staged once, in a pinned buffer, by
        the first of them (the ops returned there), and read from it by the others.  Re-staged at each
        MMA, the tile's registers stayed live from its definition to the last one (two 64x64x64 f16
        MMAs of one A in 128 threads: ptxas spilled them).  ``([], None)`` where this does not apply."""
        key = id(value)
        if key not in self.shared_users:
            users = {id(u.owner) for u in value.uses
                     if u.owner.name in MMAS and u.index < 2 and u.owner.parent is op.parent}
            in_loop = any(p.name in LOOPS for p in self.enclosing(op))
            self.shared_users[key] = set() if in_loop or len(users) < 2 else users
        if id(op) not in self.shared_users[key]:
            return [], None
        if key in self.hoisted:
            return [], self.hoisted[key]
        ops, self.hoisted[key] = self.pin(value, op)
        return ops, self.hoisted[key]

    def own_buffers(self, op: Operation) -> bool:
        """Whether MMA ``op``'s operands staged at it get buffers of their own (pinned, :meth:`pin`), whose
        stores need no barrier before them (``tile_lsp.readers_done``): ``op`` lies in the body of a
        ``for`` with another MMA.  Each MMA starts with a barrier that makes its operands visible, so
        between an MMA's reads of its buffer and the next iteration's store into it lies the other
        MMA's barrier, which every thread reaches only after its reads: attention's K/V loop has two
        barriers an iteration instead of four.  A buffer of the scratch could not: anything staged
        between them may use its bytes."""
        block = op.parent
        loop = block.parent_op if block is not None else None
        if loop is None or loop.name != "cuda_tile.for":
            return False
        return sum(1 for o in block.operations if o.name in MMAS or o.name == "nv_tileas.dot") >= 2

    def dot(self, op: Operation) -> bool:
        a, b, c = op.operands[:3]
        acc = c.type.element
        if isinstance(acc, T.FloatType) and acc.name == "f64":
            return False
        widen = isinstance(acc, T.FloatType) and acc.name != "f32"
        attrs = {"atom": atom_attr(f"mma_{_element_word(a.type.element)}_{_element_word(b.type.element)}_"
                                   f"{_element_word(F32 if widen else acc)}")}
        if op.short_name == "mmai":
            for side, name in (("a", "signedness_lhs"), ("b", "signedness_rhs")):
                attrs[f"{side}_signed"] = A.BoolAttr(op.enum_case(name, "signed") != "unsigned")
        attrs.update(self.layout_attrs(op))
        new_ops: list[Operation] = []
        a_attr = op.attr("tile_lsp.operand_a")  # A from registers, in fragments (codegen/fragment_layouts.py)
        in_registers = isinstance(a_attr, A.StringAttr) and a_attr.value == "fragments"
        sa, sb, offset = a if in_registers else self.hoist(a, op), self.hoist(b, op), 0
        if sa is None:
            first, sa = self.shared(a, op)
            new_ops += first
        if sb is None:
            first, sb = self.shared(b, op)
            new_ops += first
        own = self.own_buffers(op)
        if sa is None:
            stage_a, sa, offset = self.stage(a, 0, op, mma_operand=True) if not own else (*self.pin(a, op), 0)
            new_ops += stage_a
        if sb is None:
            stage_b, sb, _ = self.stage(b, offset, op, mma_operand=True) if not own else (*self.pin(b, op), 0)
            if "tile_lsp.swizzle" in stage_b[0].attributes and transposes_b(op, b):
                stage_b[0].attributes["tile_lsp.transposed"] = A.UnitAttr()
            new_ops += stage_b
        for staged in new_ops:
            if own and staged.name == "nv_tileas.tiled_store":
                staged.attributes["tile_lsp.readers_done"] = A.UnitAttr()
        if widen:
            wide = T.TileType(c.type.shape, F32)
            widen = self.make("cuda_tile.ftof", [c], [wide], op, self.layout_attrs(op))
            dot = self.make("nv_tileas.dot", [sa, sb, widen.results[0]], [wide], op, attrs)
            narrow = self.make("cuda_tile.ftof", [dot.results[0]], [c.type], op, self.layout_attrs(op))
            new_ops += [widen, dot, narrow]
        else:
            new_ops.append(self.make("nv_tileas.dot", [sa, sb, c], [op.results[0].type], op, attrs))
        self.replace(op, new_ops, list(new_ops[-1].results))
        return True

    def reduction(self, op: Operation) -> bool:
        name = "nv_tileas." + op.short_name
        in_registers = marked_in_registers(op)
        regions = op.regions
        op.regions = []
        staging, buffers, offset = [], [], 0
        for v in op.operands:
            if not in_registers:  # else reduced in registers and warp shuffles: no staging
                ops, v, offset = self.stage(v, offset, op)
                staging += ops
            buffers.append(v)
        new = self.make(name, buffers, [r.type for r in op.results], op,
                        {**op.properties, **op.attributes}, segments={"operands": len(buffers)},
                        regions=regions)
        new.result_segments = {"results": (0, len(op.results))}
        for region in regions:
            for block in region.blocks:
                term = block.terminator
                if term is not None and term.short_name == "yield" and term.dialect == "cuda_tile":
                    y = self.make("nv_tileas.yield", list(term.operands), [], term,
                                  segments={"values": len(term.operands)})
                    self.replace(term, [y], [])
        self.replace(op, staging + [new], list(new.results))
        return True

    def run(self, entry: Operation) -> int:
        """Rewrite ``entry``; returns the number of ops rewritten.  Pinned buffers (:meth:`hoist`) end
        below the staging scratch: the entry's ``tile_lsp.smem_pinned`` gives their bytes (a multiple
        of 128) and each one's ``tile_lsp.smem_offset`` is negative, counted from the scratch."""
        self.entry = entry
        todo = [op for op in entry.walk() if op.dialect == "cuda_tile" and op.short_name in REWRITES]
        done = 0
        for op in todo:
            done += bool(REWRITES[op.short_name](self, op))
        if self.pinned:
            total = (self.pinned_bytes + 127) // 128 * 128
            entry.attributes["tile_lsp.smem_pinned"] = A.IntegerAttr(total, I32)
            for alloc, at in self.pinned:
                alloc.attributes["tile_lsp.smem_offset"] = A.IntegerAttr(at - total, I32)
        return done


def transposes_b(op: Operation, b: Value) -> bool:
    """Whether B of MMA ``op`` is staged as its transpose (``tile_lsp.transposed`` on its buffer,
    ``N x K`` row-major): the MMA runs in fragments (``tile_lsp.fragment = "tile"``, whose B fragments
    ``ldmatrix`` then reads without ``.trans``); B is a ``K x N`` 16-bit tile loaded, through reshapes
    used once, by a ``tiled_load`` of a view that puts the tensor's last dimension on K (attention's
    K^T): copied in the tensor's order (``ops_memory.in_tensor_order``), it moves whole tensor rows,
    16 bytes a thread, instead of one element a lane down a column."""
    mark = op.attr("tile_lsp.fragment")
    t = b.type
    if not (isinstance(mark, A.StringAttr) and mark.value == "tile") or not isinstance(t, T.TileType) \
            or len(t.shape) != 2 or (T.bit_width(t.element) or 0) != 16:
        return False
    v = b  # used by this MMA and its staging store; each value before it once
    while v.defining_op is not None and v.defining_op.name == "cuda_tile.reshape":
        v = v.defining_op.operands[0]
        if len(v.uses) != 1:
            return False
    load = v.defining_op
    if load is None or load.name != "nv_tileas.tiled_load" or any(r.uses for r in load.results[1:]):
        return False
    maker = load.operand_group("view")[0].defining_op
    view = maker.operands[0].type if maker is not None and maker.name == "nv_tileaa.block_tile" else None
    if not isinstance(view, TILED_VIEWS):
        return False
    dims = [i for i, d in enumerate(view.tile_shape) if d != 1]
    rank = len(getattr(view.tensor_view, "shape", ()) or ())
    dim_map = view.dim_map if view.dim_map is not None else tuple(range(len(view.tile_shape)))
    return len(dims) == 2 and rank > 0 and dim_map[dims[0]] == rank - 1 \
        and tuple(view.tile_shape[i] for i in dims) == tuple(t.shape)


#: the loops whose body an MMA operand defined outside them is staged before (:meth:`_Rewriter.hoist`)
LOOPS = ("cuda_tile.for", "cuda_tile.loop")
#: the ops whose A and B operands :meth:`_Rewriter.shared` stages once for several of them
MMAS = ("cuda_tile.mmaf", "cuda_tile.mmai")


def defined_inside(value: Value, op: Operation) -> bool:
    """Whether ``value`` is defined inside ``op``'s regions (by an op in them, or as a block argument)."""
    owner = value.defining_op
    p = owner.parent.parent_op if owner is not None and owner.parent is not None else None
    if owner is None:  # a block argument
        block = getattr(value, "owner", None)
        p = block.parent_op if block is not None else None
    while p is not None:
        if p is op:
            return True
        p = p.parent.parent_op if p.parent is not None else None
    return False


#: cuda_tile op -> its rewrite (returns False where the op stays as it is)
REWRITES = {
    "load_view_tko": lambda rw, op: rw.tiled_access(op, True),
    "store_view_tko": lambda rw, op: rw.tiled_access(op, False),
    "mmaf": _Rewriter.dot,
    "mmai": _Rewriter.dot,
    "reduce": _Rewriter.reduction,
    "scan": _Rewriter.reduction,
}


def convert_to_nv_tileas(entries: list[Operation]) -> int:
    """Run the pass on ``entries`` (``cuda_tile.entry`` ops, rewritten in place).

    Returns the number of cuda_tile ops rewritten.  Never raises on verified
    input: an op the pass cannot rewrite (a view made outside the entry's
    blocks, an f64 MMA) stays a cuda_tile op, which ``convert-to-ptx`` lowers.
    """
    return sum(_Rewriter().run(entry) for entry in entries)

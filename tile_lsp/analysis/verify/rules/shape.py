"""Shape manipulation: permute, reshape, broadcast, cat, extract, select, iota, bitcast, pack, unpack.

Rules of NVIDIA cuda-tile ``lib/Dialect/CudaTile/IR/CudaTile.cpp``
(``XOp::verify``), checked in the order of the C++ code.  The ODS traits of
these ops (``AllRanksMatch``, ``SameOperandsAndResultElementType`` ...) are
run by the framework before these rules.

Shapes stream into MLIR diagnostics as comma-separated sizes (``4, 4``);
types are quoted (``'i8'``).
"""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.ir.diagnostics import Severity
from tile_lsp.analysis.ir.core import Operation
from tile_lsp.analysis.verify.verifier import VerifyContext, rule
from tile_lsp.dialect import types as T

# ``Type::getIntOrFloatBitWidth`` of the element types: MLIR's semantic widths,
# where tf32 has 19 bits (its storage, used for sizes in bytes, is 32).
_SEMANTIC_FLOAT_WIDTHS = {"tf32": 19}


def bit_width(t: T.Type) -> int | None:
    """MLIR ``getIntOrFloatBitWidth`` of an integer or float type (``None`` for others)."""
    if isinstance(t, T.IntegerType):
        return t.width
    if isinstance(t, T.FloatType):
        return _SEMANTIC_FLOAT_WIDTHS.get(t.name, T.FLOAT_WIDTHS.get(t.name))
    return None


def storage_bits(t: T.Type) -> int | None:
    """Bits one element occupies in a packed tile (``verifyPackUnpackTypes``: tf32 counts 32)."""
    if isinstance(t, T.FloatType) and t.name == "tf32":
        return 32
    return bit_width(t)


def shape_text(shape) -> str:
    """An ``ArrayRef<int64_t>`` streamed into a diagnostic: ``4, 4``."""
    return ", ".join(str(d) for d in shape)


def _tiles(*types) -> bool:
    """All types are tiles with static shapes (rules skip unknown or ill-formed types)."""
    return all(isinstance(t, T.TileType) and None not in t.shape for t in types)


def _operand(op: Operation, name: str) -> T.Type:
    group = op.operand_group(name)
    return group[0].type if group else T.UNKNOWN


def _result(op: Operation, name: str = "result") -> T.Type:
    group = op.result_group(name)
    return group[0].type if group else (op.results[0].type if op.results else T.UNKNOWN)


# ---------------------------------------------------------------------------
# permute
# ---------------------------------------------------------------------------


@rule("cuda_tile.permute")
def permute_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``PermuteOp::verify``: rank >= 2, a permutation of the dims, result shape."""
    src, res = _operand(op, "source"), _result(op)
    perm_attr = op.attr("permutation")
    if not _tiles(src, res) or not isinstance(perm_attr, A.DenseArrayAttr):
        return
    rank = src.rank
    perm = [int(v) for v in perm_attr.values]
    if rank < 2:
        ctx.op_error(op, f"expects at least rank 2, but got: {rank}")
    if len(perm) != rank:
        ctx.op_error(op, f"expect permutation size ({len(perm)}) to equal the rank of the source ({rank})")
    if len(set(perm)) != len(perm):
        ctx.op_error(op, "expect permutation elements to be unique")
    for idx, p in enumerate(perm):
        if p < 0 or p >= rank:
            ctx.op_error(op, f"permutation element at index {idx} ({p}) is out of bound [0, {rank})")
    for idx, p in enumerate(perm):
        if idx < res.rank and res.shape[idx] != src.shape[p]:
            ctx.op_error(op, f"result shape invalid at index {idx}, expected: {src.shape[p]}, "
                             f"but got: {res.shape[idx]}")


# ---------------------------------------------------------------------------
# reshape / broadcast / cat
# ---------------------------------------------------------------------------


@rule("cuda_tile.reshape")
def reshape_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``ReshapeOp::verify``: same number of elements."""
    src, res = _operand(op, "source"), _result(op)
    if _tiles(src, res) and src.num_elements != res.num_elements:
        ctx.op_error(op, "expected source tile and result tile to have the same number of elements")


@rule("cuda_tile.broadcast")
def broadcast_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``BroadcastOp::verify``: each source dim equals the result's or is 1."""
    src, res = _operand(op, "source"), _result(op)
    if not _tiles(src, res) or src.rank != res.rank:
        return
    for s, r in zip(src.shape, res.shape):
        if s != r and s != 1:
            ctx.op_error(op, "expects the shape of source tile to be compatible with that of the result "
                             f"tile, but got: {shape_text(src.shape)} and {shape_text(res.shape)}")


@rule("cuda_tile.cat")
def cat_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``CatOp::verify``: dim in range, sizes add up along dim, others agree."""
    lhs, rhs, res = _operand(op, "lhs"), _operand(op, "rhs"), _result(op)
    dim_attr = op.attr("dim")
    if not _tiles(lhs, rhs, res) or not isinstance(dim_attr, A.IntegerAttr):
        return
    if not (lhs.rank == rhs.rank == res.rank):
        return
    dim, rank = dim_attr.value, lhs.rank
    if dim < 0 or dim >= rank:
        ctx.op_error(op, f"expect dim to be [0, {rank}), but got: {dim}")
    total = lhs.shape[dim] + rhs.shape[dim]
    if total != res.shape[dim]:
        ctx.op_error(op, f"invalid concat at position {dim}, expected: {total} but got: {res.shape[dim]}")
    for idx in range(rank):
        if idx == dim:
            continue
        if lhs.shape[idx] != rhs.shape[idx]:
            ctx.op_error(op, f"expect lhs and rhs shapes to match at non-concat position {idx}, "
                             f"expected: {lhs.shape[idx]} but got: {rhs.shape[idx]}")
        if lhs.shape[idx] != res.shape[idx]:
            ctx.op_error(op, f"expect lhs and result shapes to match at non-concat position {idx}, "
                             f"expected: {lhs.shape[idx]} but got: {res.shape[idx]}")


# ---------------------------------------------------------------------------
# extract
# ---------------------------------------------------------------------------


def _splat_int(op: Operation | None) -> int | None:
    """The value of a splat integer ``constant`` (``DenseIntElementsAttr::isSplat``), else ``None``."""
    if op is None or op.name != "cuda_tile.constant":
        return None
    value = op.attr("value")
    if not isinstance(value, A.DenseElementsAttr) or not isinstance(value.element_type, T.IntegerType):
        return None
    flat: list = []

    def walk(v) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        else:
            flat.append(v)

    walk(value.values)
    if not flat or any(isinstance(v, (str, float)) for v in flat):
        return None
    first = flat[0]
    if any(v != first for v in flat):
        return None
    return int(first)


@rule("cuda_tile.extract")
def extract_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``ExtractOp::verify``: element type, rank, divisibility, indices.

    Constant indices out of range are warnings (``extract index ...``), as
    in the C++ code, which emits them with ``mlir::emitWarning`` (no op prefix).
    """
    src, res = _operand(op, "source"), _result(op)
    if not _tiles(src, res):
        return
    if src.element != res.element:
        ctx.op_error(op, "source and result element type do not match")
    if src.rank != res.rank:
        ctx.op_error(op, "source and result must have the same rank")
    for i, (s, r) in enumerate(zip(src.shape, res.shape)):
        if r != 0 and s % r != 0:
            ctx.op_error(op, f"source dimension {i} size ({s}) must be evenly divisible by result "
                             f"dimension {i} size ({r})")
    indices = op.operand_group("indices")
    if len(indices) != src.rank:
        ctx.op_error(op, f"expected {src.rank} indices, but got {len(indices)}")
    for i, index in enumerate(indices):
        t = index.type
        if t == T.UNKNOWN:
            continue
        if not isinstance(t, T.TileType):
            ctx.op_error(op, f"index {i} must be a Tile type")
        if t.rank != 0:
            ctx.op_error(op, f"index {i} must be a scalar tile, got rank {t.rank}")
        if t.element != T.IntegerType(32):
            ctx.op_error(op, f"index {i} must have i32 element type")
        value = _splat_int(index.defining_op)
        if value is None or res.shape[i] == 0:
            continue
        max_valid = src.shape[i] // res.shape[i] - 1
        if value < 0:
            ctx.emit(op, Severity.WARNING,
                     f"extract index {i} has negative value {value}, which may cause undefined behavior", None, None)
        if value > max_valid:
            ctx.emit(op, Severity.WARNING,
                     f"extract index {i} value {value} may be out of bounds (max valid index: {max_valid})",
                     None, None)


# ---------------------------------------------------------------------------
# select / iota / bitcast
# ---------------------------------------------------------------------------


@rule("cuda_tile.select")
def select_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``SelectOp::verify``: no f4E2M1FN elements."""
    res = _result(op)
    if isinstance(res, T.TileType) and res.element == T.FloatType("f4E2M1FN"):
        ctx.op_error(op, "cannot operate on sub-byte type F4E2M1FN")


@rule("cuda_tile.iota")
def iota_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``IotaOp::verify``: a 1-d tile whose size fits the element type."""
    res = _result(op)
    if not isinstance(res, T.TileType):
        return
    if res.rank != 1:
        ctx.op_error(op, "expects result type to be 1-d tile")
    n = res.shape[0]
    width = bit_width(res.element)
    if n is None or width is None:
        return
    if width < 64 and n > (1 << width):
        ctx.op_error(op, f"the number of elements {n} exceeds the maximum value of element type '{res.element}'")


@rule("cuda_tile.bitcast")
def bitcast_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``BitcastOp::verify``: element types of equal bit width."""
    src, res = _operand(op, "source"), _result(op)
    if not isinstance(src, T.TileType) or not isinstance(res, T.TileType):
        return
    a, b = bit_width(src.element), bit_width(res.element)
    if a is None or b is None or a == b:
        return
    ctx.op_error(op, f"types must be equal width, cannot convert '{src}' of width {a} to type '{res}' of width {b}")


# ---------------------------------------------------------------------------
# pack / unpack
# ---------------------------------------------------------------------------


@rule("cuda_tile.pack", "cuda_tile.unpack")
def pack_unpack_verify(op: Operation, ctx: VerifyContext) -> None:
    """NVIDIA CudaTile.cpp ``verifyPackUnpackTypes`` (``PackOp::verify`` / ``UnpackOp::verify``)."""
    src, res = _operand(op, "source"), _result(op)
    if not _tiles(src, res):
        return
    if src.rank != 1:
        ctx.op_error(op, "expects source and result to be rank-1 tiles")
    if bit_width(src.element) == bit_width(res.element):
        ctx.op_error(op, "expects source and result to have different element type widths")
    if storage_bits(src.element) is None or storage_bits(res.element) is None:
        return
    src_bits = storage_bits(src.element) * src.num_elements
    res_bits = storage_bits(res.element) * res.num_elements
    if src_bits % 8:
        ctx.op_error(op, "expects source tile to be byte-aligned")
    if res_bits % 8:
        ctx.op_error(op, "expects result tile to be byte-aligned")
    if src_bits != res_bits:
        ctx.op_error(op, "expects source and result to have the same size in bytes, but got source tile size "
                         f"{src_bits // 8} bytes and result tile size {res_bits // 8} bytes")

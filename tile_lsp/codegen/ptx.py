"""PTX text building blocks: register classes, element types, the function builder.

A lowered tile value lives in registers: a tile of ``N`` elements in a CTA of
``T`` threads has ``max(1, N // T)`` *slots* per thread; slot ``s`` of thread
``t`` holds the element of row-major linear index ``s * T + t`` when
``N >= T``, and element ``t mod N`` when ``N < T`` (small tiles and 0-d
tiles are replicated in every thread, so scalars are uniform and control flow
on them never diverges).  Tile dimensions are powers of two (cuda_tile
verifier), as is ``T``, so one of the two cases always holds exactly.

Register classes follow PTX's fundamental types (PTX ISA "Registers"):
``pred`` (i1), ``b16`` (f16, bf16, and the 8- and 4-bit floats, whose bits sit
in the low byte/nibble), ``b32`` (i8/i16/i32; i8 and i16 are kept
sign-extended), ``b64`` (i64, pointers), ``f32`` (f32, tf32), ``f64``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tile_lsp.dialect import types as T

#: register class -> (PTX declaration type, name prefix)
REG_CLASSES = {
    "pred": (".pred", "%p"),
    "b16": (".b16", "%h"),
    "b32": (".b32", "%r"),
    "b64": (".b64", "%rd"),
    "f32": (".f32", "%f"),
    "f64": (".f64", "%fd"),
}

NARROW_FLOATS = ("f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")


class LoweringError(Exception):
    """The lowering cannot handle an op: ``op`` is the IR operation (for its range)."""

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.message = message
        self.op = op


def reg_class(t: T.Type) -> str:
    """Register class holding one element of type ``t`` (see module docstring)."""
    if isinstance(t, T.PointerType):
        return "b64"
    if isinstance(t, T.IntegerType):
        if t.width == 1:
            return "pred"
        if t.width <= 32:
            return "b32"
        return "b64"
    if isinstance(t, T.FloatType):
        if t.name in ("f32", "tf32"):
            return "f32"
        if t.name == "f64":
            return "f64"
        return "b16"
    raise LoweringError(f"no register class for type {t}")


def storage_bytes(t: T.Type) -> int:
    """Bytes one element of ``t`` takes in memory (i1 as a byte; f4 as half a byte is special-cased)."""
    if isinstance(t, T.PointerType):
        return 8
    w = T.bit_width(t)
    if w is None:
        raise LoweringError(f"no storage size for type {t}")
    return max(1, w // 8)


#: bytes per register class (a predicate as one byte)
REG_BYTES = {"pred": 1, "b16": 2, "b32": 4, "b64": 8, "f32": 4, "f64": 8}


def staged_bytes(t: T.Type) -> int:
    """Bytes one element of ``t`` takes in the shared-memory staging scratch: its register class's
    width (:data:`REG_BYTES`; i8 as 4 bytes, f8 as 2), so a slot is stored and read back as is."""
    return REG_BYTES[reg_class(t)]


def int_width(t: T.Type) -> int:
    return t.width if isinstance(t, T.IntegerType) else 64


def mem_type(t: T.Type) -> str:
    """PTX type suffix of a load/store of one element of ``t``."""
    if isinstance(t, T.PointerType):
        return ".b64"
    w = T.bit_width(t)
    if w in (1, 8, 4):
        return ".b8"
    return f".b{w}"


def num_elements(shape: tuple[int, ...]) -> int:
    """Elements of a static tile shape (1 for a 0-d tile)."""
    n = 1
    for d in shape:
        n *= d
    return n


def row_major_strides(shape: tuple[int, ...]) -> list[int]:
    """Elements between neighbours along each dimension of a row-major tile of ``shape``."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return list(reversed(out))


def unravel(e: int, shape: tuple[int, ...]) -> list[int]:
    """Row-major coordinates of linear element index ``e`` in a tile of ``shape``."""
    out = []
    for d in reversed(shape):
        out.append(e % d)
        e //= d
    return list(reversed(out))


@dataclass
class TileValue:
    """A lowered tile: ``shape``, element type and one register per slot."""

    shape: tuple[int, ...]
    elem: T.Type
    regs: list[str]

    @property
    def n(self) -> int:
        return num_elements(self.shape)


@dataclass
class StagedTile:
    """A tile buffer in the shared-memory staging scratch (``nv_tileas.alloc_tensor`` with SMEM
    residency): ``shape``, element type, byte ``offset`` into the scratch; elements row-major,
    :func:`staged_bytes` each.  ``swizzled``: every access XORs the address's 16-byte chunk with its
    bits 7-9 (:meth:`~tile_lsp.codegen.lower.KernelLowering.swizzled`).  ``transposed``: a 2-d ``K x
    N`` MMA B operand held as its transpose, ``N x K`` row-major (``tile_lsp.transposed``: its load's
    view transposes the tensor, so the copy keeps the tensor's rows whole)."""

    shape: tuple[int, ...]
    elem: T.Type
    offset: int
    swizzled: bool = False
    transposed: bool = False

    @property
    def n(self) -> int:
        return num_elements(self.shape)

    @property
    def end(self) -> int:
        """Byte offset just past the buffer."""
        return self.offset + self.n * staged_bytes(self.elem)


@dataclass
class TensorViewValue:
    """A lowered ``tensor_view``: base pointer register and per-dimension shape/stride (s64 regs or ints)."""

    base: str
    shape: list[str | int]
    strides: list[str | int]
    elem: T.Type


@dataclass
class TileViewValue:
    """A lowered partition/strided/gather_scatter view over a tensor view."""

    kind: str
    tensor: TensorViewValue
    tile_shape: tuple[int, ...]
    dim_map: tuple[int, ...]
    padding: str | None
    steps: tuple[int, ...] = ()
    sparse_dim: int | None = None


@dataclass(frozen=True)
class GlobalTile:
    """A tile of a partition or strided view that is not loaded into registers: a ``tiled_load``
    whose only use is to be staged in shared memory (through reshapes), which the staging store
    copies there directly, in an order of its own (:func:`tile_lsp.codegen.ops_memory.copy_to_staged`).
    ``index``: the access's index values (IR values); ``shape``: the loaded tile's; ``sem``: the
    load's PTX ordering qualifier; ``loc``: the load's source location, which the copy's
    instructions keep (``.loc`` and Show PTX's instruction counts name the load, not the MMA)."""

    view: TileViewValue
    index: tuple
    shape: tuple[int, ...]
    elem: T.Type
    sem: str
    loc: "SourceLoc | None" = None

    @property
    def n(self) -> int:
        return num_elements(self.shape)


@dataclass(frozen=True)
class SourceLoc:
    """Where emitted instructions come from: the start of an op's source range, 0-based ``line`` and
    ``character`` (UTF-16 code units, as :class:`~tile_lsp.analysis.ir.diagnostics.Position`), in the
    PTX ``.file`` numbered ``file``.

    ``str()`` is the PTX ``.loc`` directive, which counts lines and columns from 1 (PTX ISA ".loc":
    ``.loc file_index line_number column_position``): ``SourceLoc(1, 9, 4)`` is ``.loc 1 10 5``.
    """

    file: int
    line: int
    character: int

    def __str__(self) -> str:
        return f".loc {self.file} {self.line + 1} {self.character + 1}"


class Token:
    """A lowered token: nothing at run time (ordering is program order plus fences)."""


TOKEN = Token()


#: placeholder, in the PTX of a kernel being lowered, for the bytes between the two stages of its
#: pipelined copies (``KernelLowering.second_stage_addr``), replaced once the shared memory is known
STAGE_STRIDE = "__tile_lsp_stage_stride"


@dataclass
class Function:
    """The PTX text of one ``.entry`` under construction.

    ``body`` holds instruction lines; ``prologue`` holds the thread-index
    arithmetic shared by the whole kernel (hoisted to the entry block, so it
    dominates every use).  ``counts`` numbers registers per class.

    ``loc``: the :class:`SourceLoc` of the op being lowered (``None``: no
    source position), which :meth:`emit` writes as a ``.loc`` line when it
    changes and by which it counts the instructions it appends in
    ``instructions`` (``SourceLoc`` -> instructions).  The count is static:
    the instructions in the text, so an op in a loop body counts once.
    Labels, ``.loc`` lines, declarations and the :meth:`pro` lines (thread-index
    arithmetic shared by the whole kernel) are not counted.
    """

    name: str
    threads: int
    prologue: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    labels: int = 0
    cache: dict = field(default_factory=dict)
    loc: SourceLoc | None = None
    last_loc: SourceLoc | None = None
    instructions: dict[SourceLoc, int] = field(default_factory=dict)
    smem_bytes: int = 0
    smem_op: object = None  # the Operation that needs smem_bytes of staging
    #: ``cp.async`` copies issued whose completion nothing has waited for yet (:meth:`wait_async`)
    async_pending: bool = False
    #: whether a loop pipelines copies through two stages (``KernelLowering.second_stage_addr``)
    two_stages: bool = False
    #: bytes from the start of the shared memory (pinned buffers included) that such loops use
    stage_bytes: int = 0

    def reg(self, cls: str) -> str:
        """A fresh register of class ``cls`` (a :data:`REG_CLASSES` key)."""
        n = self.counts.get(cls, 0)
        self.counts[cls] = n + 1
        return f"{REG_CLASSES[cls][1]}{n}"

    def label(self, hint: str = "L") -> str:
        self.labels += 1
        return f"$L_{hint}_{self.labels}"

    def emit(self, line: str) -> None:
        """Append one instruction (``;`` added), preceded by the current ``.loc`` when it changed, and
        count it for that ``.loc`` in :attr:`instructions`."""
        if self.loc is not None:
            if self.loc != self.last_loc:
                self.body.append(f"\t{self.loc}")
                self.last_loc = self.loc
            self.instructions[self.loc] = self.instructions.get(self.loc, 0) + 1
        self.body.append(f"\t{line};")

    def wait_async(self) -> None:
        """``cp.async.wait_all`` where copies issued are still pending (:attr:`async_pending`): their
        bytes are in shared memory for this thread after it (PTX ISA ``cp.async.wait_all``).  Called
        before each barrier and where control leaves a region (back edges, the ends of an ``if``'s
        branches, ``ret``), so that every path waits before another thread reads."""
        if self.async_pending:
            self.async_pending = False
            self.emit("cp.async.wait_all")

    def barrier(self) -> None:
        """``bar.sync 0``, after :meth:`wait_async`: a barrier alone does not complete ``cp.async``
        copies, and the one before their readers must find them written."""
        self.wait_async()
        self.emit("bar.sync 0")

    def place(self, label: str) -> None:
        self.body.append(f"{label}:")
        self.last_loc = None

    def pro(self, line: str) -> None:
        self.prologue.append(f"\t{line};")

    def once(self, key: tuple, build):
        """What ``build()`` returns (registers it defines with :meth:`pro`), built the first time ``key``
        is asked for in this kernel and kept in :attr:`cache`: thread-index arithmetic is hoisted to
        the prologue once per kernel, whichever op needs it first."""
        if key not in self.cache:
            self.cache[key] = build()
        return self.cache[key]

    def declarations(self) -> list[str]:
        out = []
        for cls, (ty, prefix) in REG_CLASSES.items():
            if self.counts.get(cls):
                out.append(f"\t.reg {ty} \t{prefix}<{self.counts[cls]}>;")
        return out

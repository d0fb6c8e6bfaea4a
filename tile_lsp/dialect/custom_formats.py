"""Assembly formats of the cuda_tile ops that NVIDIA parses with C++ code.

ODS gives these ops ``hasCustomAssemblyFormat = 1``; their syntax lives in
``lib/Dialect/CudaTile/IR/CudaTile.cpp`` (``XOp::parse``/``XOp::print``) of
NVIDIA's ``cuda-tile`` repository and in the texts ``tileirdisasm`` prints.
tile-lsp writes each of them in the declarative format syntax, with custom
directives of its own (``tile_lsp/analysis/ir/directives.py``: ``DIRECTIVES``),
so that every op has one format entry.  ``tile_lsp.dialect.registry`` merges
these into the op table.
"""

from tile_lsp.dialect.schema import AttrDef

# Attributes that NVIDIA's 13.4+ tools print on these ops (seen in tileirdisasm
# output of ../shared/corpus/kernels) and that the public 13.3 definition lacks.
EXTRA_ATTRIBUTES: dict[str, tuple[AttrDef, ...]] = {
    "load_view_tko": (AttrDef("inbounds", "array", optional=True, since="13.4",
                              doc="per-dimension promise that the access is in bounds"),),
    "store_view_tko": (AttrDef("inbounds", "array", optional=True, since="13.4",
                               doc="per-dimension promise that the access is in bounds"),),
}

CUSTOM_FORMATS: dict[str, str] = {
    # entry @name(%a: T, ...) [-> (T)] [optimization_hints=<...>] { ... } [{attrs}]
    "entry": "$sym_name custom<FunctionSignature>($function_type) custom<OptHints>($optimization_hints) "
             "custom<Region>($body) attr-dict",
    "testing$func": "$sym_name custom<FunctionSignature>($function_type) custom<Region>($body) attr-dict",
    # for [unsigned] %iv in (%lb to %ub, step %s) : T [iter_values(%a = %x, ...) -> (T, ...)] { ... }
    "for": "custom<ForHeader>($lowerBound, $upperBound, $step) custom<ForIterValues>($initValues) "
           "custom<Region>($region) attr-dict",
    # loop [iter_values(%a = %x, ...) : T, ... [-> R, ...]] | [: R, ...] { ... }
    "loop": "custom<LoopHeader>($initValues) custom<Region>($region) attr-dict",
    # load_view_tko SEM [SCOPE] %view[%i, ...] [token = %t] [optimization_hints = <...>] [{attrs}]
    #   : VIEW_T, INDEX_T -> TILE_T, token
    "load_view_tko": "$memory_ordering_semantics ($memory_scope^)? $view custom<IndexList>($index) "
                     "(`token` `=` $token^)? (`inbounds` `=` $inbounds^)? custom<OptHints>($optimization_hints) "
                     "attr-dict-with-keyword `:` custom<CudaTileType>(type($view)) (`,` custom<IndexType>(type($index))^)? "
                     "`->` custom<CudaTileType>(type($tile)) `,` custom<CudaTileType>(type($result_token))",
    # store_view_tko SEM [SCOPE] %tile, %view[%i, ...] [token = %t] [optimization_hints = <...>]
    #   : TILE_T, VIEW_T, INDEX_T -> token
    "store_view_tko": "$memory_ordering_semantics ($memory_scope^)? $tile `,` $view custom<IndexList>($index) "
                      "(`token` `=` $token^)? (`inbounds` `=` $inbounds^)? custom<OptHints>($optimization_hints) "
                      "attr-dict-with-keyword `:` custom<CudaTileType>(type($tile)) `,` custom<CudaTileType>(type($view)) "
                      "(`,` custom<IndexType>(type($index))^)? `->` custom<CudaTileType>(type($result_token))",
    # atomic_red_view_tko SEM [SCOPE] %view[%i, ...], MODE, %value [token = %t]
    #   : VALUE_T, VIEW_T[, INDEX_T...] -> token
    "atomic_red_view_tko": "$memory_ordering_semantics ($memory_scope^)? $view custom<IndexList>($index) `,` "
                           "$mode `,` $value (`token` `=` $token^)? attr-dict-with-keyword "
                           "`:` custom<CudaTileType>(type($value)) `,` custom<CudaTileType>(type($view)) "
                           "(`,` custom<IndexType>(type($index))^)? `->` custom<CudaTileType>(type($result_token))",
    # (get_*_shape parse no attribute dictionary)
    # make_tensor_view %base, shape = [4, %d], strides = [%s, 1] [{attrs}] : [INDEX_T ->] tensor_view<...>
    "make_tensor_view": "$base `,` `shape` `=` custom<ShapeList>($dynamicShape) `,` `strides` `=` "
                        "custom<ShapeList>($dynamicStrides) attr-dict `:` custom<TypeArrowType>(type($result))",
    # make_partition_view %tv [{attrs}] : partition_view<...>
    "make_partition_view": "$tensor_view attr-dict `:` custom<CudaTileType>(type($result))",
    "make_strided_view": "$tensor_view attr-dict `:` custom<CudaTileType>(type($result))",
    "make_gather_scatter_view": "$tensor_view attr-dict `:` custom<CudaTileType>(type($result))",
    # get_index_space_shape %view : VIEW_T -> tile<iN>   (one result per dimension)
    "get_index_space_shape": "$src `:` custom<CudaTileType>(type($src)) `->` custom<UniformType>(type($result))",
    "get_tensor_shape": "$src `:` custom<CudaTileType>(type($src)) `->` custom<UniformType>(type($result))",
}


# Formats that replace the table's for parsing.  ``module`` is both
# ``cuda_tile.module @name {...}`` and MLIR's ``builtin.module`` (``module
# [@name] [attributes {...}] {...}``, the wrapper MLIR files use at the top
# level); one keyword means one grammar rule, so the name is optional there and
# the builder decides which op it is (tile_lsp/analysis/syntax/builder.py).
FORMAT_OVERRIDES: dict[str, str] = {
    "module": "($sym_name^)? attr-dict-with-keyword $body",
}

# Optional operands that NVIDIA's 13.4+ printer writes without their
# predecessor: ``load_ptr_tko weak %p, %pad : tile<Nxptr<f32>>, tile<Nxf32>``
# has a padding value but no mask.  MLIR's generated parser would take %pad as
# the mask; the newer tools tell them apart by type (a mask is a tile of i1).
# op name -> (first optional operand, second, element type the first must have)
OPTIONAL_OPERANDS_BY_TYPE: dict[str, tuple[str, str, str]] = {
    "load_ptr_tko": ("mask", "paddingValue", "i1"),
}


# The short forms of an assume predicate (NVIDIA CudaTile.cpp parseAssumePredicate), and what its
# parser says of another keyword.
ASSUME_PREDICATE_WORDS: tuple[str, ...] = ("div_by", "same_elements", "bounded")
MSG_UNKNOWN_ASSUME_PREDICATE = ("unknown assume predicate attribute: {word} (expected 'div_by', 'same_elements', "
                                "or 'bounded')")

# The element types a typed dense literal (``constant <T: ...>``, ``global``) may name, in the order
# of NVIDIA's message (CudaTile.cpp isValidDenseElementType), and the messages of its type.
DENSE_ELEMENT_TYPES: tuple[str, ...] = ("i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "tf32",
                                        "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
MSG_DENSE_ELEMENT_TYPE = ("expect element type to be one of " + " or ".join(DENSE_ELEMENT_TYPES)
                          + " values, but got '{}'")
#: how MLIR prints a type that failed to parse
NULL_TYPE = "<<NULL TYPE>>"


#: The enum attributes of the memory ops with declarative formats, in text order:
#: (attribute, enum, optional).  An optional one anchors an optional group.
DECLARATIVE_ENUMS: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "load_ptr_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", False),
                     ("memory_scope", "MemoryScope", True)),
    "store_ptr_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", False),
                      ("memory_scope", "MemoryScope", True)),
    "atomic_rmw_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", False),
                       ("memory_scope", "MemoryScope", False), ("mode", "AtomicRMWMode", False)),
    "atomic_cas_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", False),
                       ("memory_scope", "MemoryScope", False)),
}
# the ODS-generated parser of an enum attribute (mlir-tblgen OpFormatGen)
MSG_GENERATED_ENUM = "expected string or keyword containing one of the following enum values for attribute '{attr}' [{cases}]"


# The keywords NVIDIA's C++ parsers of the view ops read and check first (CudaTile.cpp
# parseMemoryAttributes for load_view_tko/store_view_tko, AtomicRedViewTkoOp::parse), and their words.
# parseMemoryAttributes (load_view_tko, store_view_tko)
MSG_ORDERING = ('invalid memory_ordering_semantics attribute specification. Got "{kw}" but expect one of: '
                "weak, relaxed, acquire, release, acq_rel")
MSG_WEAK_SCOPE = ('operation specifies weak memory ordering semantics, but then provides "{kw}" scope, '
                  "expected no memory scope.")
MSG_SCOPE = 'invalid memory_scope attribute specification. Got "{kw}" but expect one of: tl_blk, device, sys'
# AtomicRedViewTkoOp::parse
MSG_RED_ORDERING = "invalid memory_ordering_semantics: '{kw}'; expected one of: weak, relaxed, acquire, release, acq_rel"
MSG_RED_SCOPE = "invalid memory_scope: '{kw}'; expected one of: tl_blk, device, sys"
MSG_RED_MODE = "unknown atomic RMW mode: '{kw}'; expected one of: and, or, xor, add, addf, max, min, umax, umin"
#: op -> ``(attribute, enum, message, message after weak)`` of the keywords it reads first, in text
#: order (the scope may be absent); each is checked as it is read, before anything after it.  The
#: fourth is what the parser says of any scope after ``weak`` (``None``: nothing of its own).
VIEW_KEYWORDS: dict[str, tuple[tuple[str, str, str, str | None], ...]] = {
    "load_view_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", MSG_ORDERING, None),
                      ("memory_scope", "MemoryScope", MSG_SCOPE, MSG_WEAK_SCOPE)),
    "store_view_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", MSG_ORDERING, None),
                       ("memory_scope", "MemoryScope", MSG_SCOPE, MSG_WEAK_SCOPE)),
    "atomic_red_view_tko": (("memory_ordering_semantics", "MemoryOrderingSemantics", MSG_RED_ORDERING, None),
                            ("memory_scope", "MemoryScope", MSG_RED_SCOPE, None)),
}

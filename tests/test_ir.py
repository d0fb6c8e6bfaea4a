"""Grammar and IR builder: real Tile IR text in, structured IR out."""

from __future__ import annotations

from tile_lsp.analysis.ir import attributes as A
from tile_lsp.analysis.api import AnalysisOptions, analyze_text
from tile_lsp.analysis.ir.diagnostics import Position
from tile_lsp.analysis.ir.core import Module, SymbolTable
from tile_lsp.dialect import types as T
from tile_lsp.grammar.parse import parse


def build(text: str) -> Module:
    analysis = analyze_text(text)
    errors = [d for d in analysis.diagnostics if d.severity.value == "error"]
    assert not errors, [(d.message, d.range) for d in errors]
    return analysis.chunks[0].module


def ops(module: Module) -> list:
    return list(module.walk())


KERNEL = """\
cuda_tile.module @m {
  global @g <f32: [1.0, 2.0]> : tile<2xf32>
  entry @k(%p: tile<ptr<f32>>, %n: tile<i32>) {
    %tok = make_token : token
    %c = constant <i32: [[1, 2], [3, 4]]> : tile<2x2xi32>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %s = addi %x, %y overflow<no_signed_wrap> : tile<i32>
    %tv = make_tensor_view %p, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), padding_value = zero, tensor_view<?xf32, strides=[1]>>
    %v, %t = load_view_tko weak %pv[%x] token = %tok : partition_view<tile=(16), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %gp = get_global @g : tile<ptr<f32>>
    return
  }
}
"""


def test_custom_forms_build_operations_with_types_and_attributes():
    m = build(KERNEL)
    names = [op.name for op in ops(m)]
    assert names[:3] == ["cuda_tile.module", "cuda_tile.global", "cuda_tile.entry"]
    assert "cuda_tile.load_view_tko" in names
    by = {op.name: op for op in ops(m)}
    addi = by["cuda_tile.addi"]
    assert [v.name for v in addi.operands] == ["%x", "%y"]
    assert addi.results[0].type == T.TileType((), T.IntegerType(32))
    assert addi.attr("overflow").case == "no_signed_wrap"
    const = by["cuda_tile.constant"]
    value = const.attr("value")
    assert isinstance(value, A.DenseElementsAttr)
    assert value.values == [[1, 2], [3, 4]] and value.shape == (2, 2)
    load = by["cuda_tile.load_view_tko"]
    assert load.attr("memory_ordering_semantics").case == "weak"
    view_t = load.operands[0].type
    assert isinstance(view_t, T.PartitionViewType)
    assert view_t.tile_shape == (16,) and view_t.padding_value == "zero"
    assert view_t.tensor_view == T.TensorViewType((None,), T.FloatType("f32"), (1,))
    assert [str(r.type) for r in load.results] == ["!cuda_tile.tile<16xf32>", "!cuda_tile.token"]
    assert load.operand_group("token")[0].name == "%tok"
    tv = by["cuda_tile.make_tensor_view"]
    assert [v.name for v in tv.operand_group("dynamicShape")] == ["%n"]
    assert tv.operand_group("dynamicStrides") == []


def test_values_know_their_definition_and_uses():
    m = build(KERNEL)
    entry = next(op for op in ops(m) if op.name == "cuda_tile.entry")
    block = entry.regions[0].blocks[0]
    assert [a.name for a in block.arguments] == ["%p", "%n"]
    x = next(op for op in ops(m) if op.name == "cuda_tile.get_tile_block_id").results[0]
    assert x.defining_op.name == "cuda_tile.get_tile_block_id"
    assert sorted(u.owner.name for u in x.uses) == ["cuda_tile.addi", "cuda_tile.load_view_tko"]
    # ranges are 0-based lines and UTF-16 columns
    assert x.range.start == Position(5, 4)


def test_generic_form_and_unregistered_ops():
    text = """\
"cuda_tile.module"() <{sym_name = "m"}> ({
  "cuda_tile.entry"() <{function_type = () -> (), sym_name = "k"}> ({
    %0 = "cond"() : () -> !cuda_tile.tile<i1>
    %1 = "cuda_tile.constant"() <{value = dense<3> : !cuda_tile.tile<i32>}> : () -> !cuda_tile.tile<i32>
    %2 = "cuda_tile.addi"(%1, %1) <{overflow = #cuda_tile.overflow<none>}> : (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> !cuda_tile.tile<i32>
    "cuda_tile.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
"""
    m = build(text)
    names = [op.name for op in ops(m)]
    assert names == ["cuda_tile.module", "cuda_tile.entry", "cond", "cuda_tile.constant", "cuda_tile.addi",
                     "cuda_tile.return"]
    cond = ops(m)[2]
    assert cond.opdef is None and cond.generic
    addi = ops(m)[4]
    assert addi.opdef is not None and addi.operands[0] is ops(m)[3].results[0]
    assert isinstance(addi.attr("overflow"), A.DialectAttr)


def test_prefix_less_top_level_entry_and_debug_locations():
    text = """\
#loc = loc("kernel.py":3:0)
#loc1 = loc("kernel.py":4:8)
entry @k(%a: tile<f32>) {
  %0 = absf %a : tile<f32> loc(#loc1)
  return loc(#loc)
} loc(#loc)
"""
    m = build(text)
    absf = next(op for op in ops(m) if op.name == "cuda_tile.absf")
    assert isinstance(absf.location, A.LocationAttr)
    assert (absf.location.filename, absf.location.line, absf.location.column) == ("kernel.py", 4, 8)


def test_result_groups_and_block_labels():
    text = """\
cuda_tile.module @m {
  entry @k(%v: tile<ptr<i32>>) {
    %t = make_token : token
    %r:2 = load_ptr_tko weak %v : tile<ptr<i32>> -> tile<i32>, token
    %s = addi %r#0, %r#0 : tile<i32>
    %j = join_tokens %r#1, %t : token
    return
  }
}
"""
    m = build(text)
    load = next(op for op in ops(m) if op.name == "cuda_tile.load_ptr_tko")
    addi = next(op for op in ops(m) if op.name == "cuda_tile.addi")
    join = next(op for op in ops(m) if op.name == "cuda_tile.join_tokens")
    assert addi.operands[0] is load.results[0]
    assert join.operands[0] is load.results[1]
    assert [r.name for r in load.results] == ["%r#0", "%r#1"]


def test_symbol_table_of_a_module():
    m = build(KERNEL)
    module_op = m.body.operations[0]
    table = SymbolTable(module_op)
    assert set(table.symbols) == {"g", "k"}
    assert table.lookup("g").name == "cuda_tile.global"


def test_types_print_as_mlir_prints_them():
    assert str(T.TileType((4, 8), T.PointerType(T.FloatType("f32")))) == "!cuda_tile.tile<4x8xptr<f32>>"
    assert T.TileType((4,), T.FloatType("f16")).short() == "tile<4xf16>"
    pv = T.PartitionViewType((2, 2), T.TensorViewType((16, 16), T.FloatType("f32"), (16, 1)), None, (1, 0))
    assert str(pv) == "!cuda_tile.partition_view<tile=(2x2), tensor_view<16x16xf32, strides=[16,1]>, dim_map=[1, 0]>"
    assert str(T.TensorViewType((), T.FloatType("f32"), ())) == "!cuda_tile.tensor_view<f32>"


def test_parse_recovers_at_the_next_operation():
    text = """\
cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %0 = addi %a, %a tile<i32>
    %1 = addi %a, %a : tile<i32>
    return
  }
}
"""
    result = parse(text)
    assert len(result.issues) == 1
    assert result.tree is not None
    m = analyze_text(text).chunks[0].module
    assert [op.name for op in m.walk()].count("cuda_tile.addi") == 1


REGION_HEADER_TYPO = """\
cuda_tile.module @m {
  entry @k() {
    %4 = constant <f32: 1.0> : tile<16x8xf32>
    %r = reduceq %4 dim=0 identities=[0.000000e+00 : f32] : tile<16x8xf32> -> tile<8xf32>
    (%lhs: tile<f32>, %rhs: tile<f32>) {
      %s = addf %lhs, %rhs : tile<f32>
      yield %s : tile<f32>
    }
    %n = negf %4 : tile<16x8xf32> {
    %m = negf %4 : tile<16x8xf32>
    return
  }
}
"""


def test_parse_blanks_a_region_whose_header_fails():
    # the reduce's header fails: its region goes with it (its ops are not read as ops of the entry, nor its `}`
    # as the entry's end); a `{` typed at the end of a line opens nothing: only that line is blanked
    result = parse(REGION_HEADER_TYPO)
    assert [REGION_HEADER_TYPO.count("\n", 0, i.start) for i in result.issues] == [3, 8]
    assert result.issues[0].start == REGION_HEADER_TYPO.index("reduceq")
    analysis = analyze_text(REGION_HEADER_TYPO)
    assert len(analysis.diagnostics) == 2
    entry = next(op for op in analysis.chunks[0].module.walk() if op.name == "cuda_tile.entry")
    body = entry.regions[0].blocks[0].operations
    assert [op.name for op in body] == ["cuda_tile.constant", "cuda_tile.negf", "cuda_tile.return"]
    assert body[1].results[0].name == "%m"


def test_hex_and_typed_literals_in_attributes():
    text = """\
cuda_tile.module @m {
  testing$func @k(%a: tile<4xf32>) {
    %r = reduce %a dim=0 identities=[0xFF800000 : f32] : tile<4xf32> -> tile<f32>
    (%l: tile<f32>, %q: tile<f32>) {
      %mx = maxf %l, %q : tile<f32>
      yield %mx : tile<f32>
    }
    return
  }
}
"""
    m = build(text)
    reduce = next(op for op in m.walk() if op.name == "cuda_tile.reduce")
    ident = reduce.attr("identities")
    assert isinstance(ident, A.ArrayAttr)
    assert ident.elements[0].type == T.FloatType("f32")
    assert [a.name for a in reduce.regions[0].blocks[0].arguments] == ["%l", "%q"]


def test_split_chunks_are_independent_scopes():
    text = "cuda_tile.module @a {\n}\n// -----\ncuda_tile.module @a {\n}\n"
    analysis = analyze_text(text, AnalysisOptions(split_input_file=True))
    assert len(analysis.chunks) == 2
    assert analysis.diagnostics == []
    assert analysis.chunks[1].module.body.operations[0].range.start.line == 3


def test_clone_is_a_separate_ir_with_the_same_text():
    from tile_lsp.analysis.ir.printer import print_module

    text = (
        "cuda_tile.module @m {\n"
        "  entry @e(%a: tile<i32>, %b: tile<i32>) {\n"
        "    %s = addi %a, %b : tile<i32>\n"
        "    %r = for %i in (%a to %b, step %a) : tile<i32> iter_values(%acc = %s) -> (tile<i32>) {\n"
        "      %n = addi %acc, %i : tile<i32>\n"
        "      continue %n : tile<i32>\n"
        "    }\n"
        "    return\n"
        "  }\n"
        "}\n"
    )
    analysis = analyze_text(text)
    assert analysis.diagnostics == []
    module = analysis.chunks[0].module
    copy = module.clone()
    assert print_module(copy) == print_module(module)
    originals = {id(x) for op in module.walk() for x in (op, *op.results, *op.regions)}
    assert not any(id(x) in originals for op in copy.walk() for x in (op, *op.results, *op.regions))
    for op in copy.walk():
        assert op.parent is not None and op.parent.operations.count(op) == 1
        for index, value in enumerate(op.operands):
            assert id(value) not in originals
            assert [u.index for u in value.uses if u.owner is op].count(index) == 1
    # a rewrite of the copy leaves the original as it was
    printed = print_module(module)
    entry = copy.body.operations[0].regions[0].blocks[0].operations[0]
    body = entry.regions[0].blocks[0]
    body.operations[0].attributes["tile_lsp.mark"] = A.UnitAttr()
    body.operations[0].results[0].uses.clear()
    del body.operations[1]
    assert print_module(module) == printed
    assert [len(r.uses) for r in module.walk() for r in r.results if r.name == "%s"] == [1]

"""From the parse tree to the IR: the builder, the custom parsers of NVIDIA's C++ ops (parse rules)
and the type checks MLIR's parsers make while reading.

Architecture invariant: imports :mod:`tile_lsp.grammar` and :mod:`tile_lsp.analysis.ir` only;
a verifier rule, the pipeline or an editor feature is never imported from here.
"""

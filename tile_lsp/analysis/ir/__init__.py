"""The IR and what every layer shares: operations, values, blocks, regions, attributes, types
(from :mod:`tile_lsp.dialect`), diagnostics, the printer, number encoding, analysis options.

Architecture invariant: imports only :mod:`tile_lsp.dialect` and :mod:`tile_lsp.grammar`'s
format and lexical tables; it never parses a text into IR, verifies or serves an editor.
"""

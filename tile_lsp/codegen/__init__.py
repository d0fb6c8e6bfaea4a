"""tile_lsp.codegen."""

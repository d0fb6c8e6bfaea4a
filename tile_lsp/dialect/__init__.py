"""tile_lsp.dialect."""

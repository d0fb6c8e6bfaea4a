"""tile_lsp.grammar."""

"""tile_lsp.analysis."""

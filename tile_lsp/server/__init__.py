"""tile_lsp.server."""

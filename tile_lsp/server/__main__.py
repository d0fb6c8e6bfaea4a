"""``python -m tile_lsp.server``: run the language server over stdio."""

from tile_lsp.server.app import serve_stdio

if __name__ == "__main__":
    serve_stdio()

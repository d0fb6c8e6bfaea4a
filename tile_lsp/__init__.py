"""tile-lsp: language server and editor tooling for NVIDIA's CUDA Tile IR."""

__version__ = "0.1.0"

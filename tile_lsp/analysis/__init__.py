"""The analysis of Tile IR text, in layers (lowest first; each imports only those below it):

* :mod:`~tile_lsp.analysis.ir`: the IR, diagnostics, the printer, options;
* :mod:`~tile_lsp.analysis.syntax`: parse tree -> IR;
* :mod:`~tile_lsp.analysis.verify`: the verifier and its rules;
* :mod:`~tile_lsp.analysis.incremental`: the pipeline, units, the document analysis;
* :mod:`~tile_lsp.analysis.api`: :func:`~tile_lsp.analysis.api.analyze_text`, the entry point;
* :mod:`~tile_lsp.analysis.ide` and :mod:`~tile_lsp.analysis.interpreter`: editor features, and
  the reference interpreter.

``docs/architecture.md`` describes them; ``tests/test_architecture.py`` enforces the order.
"""

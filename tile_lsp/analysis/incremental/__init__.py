"""The analysis of a text: one chunk whole or unit by unit, and one document across its versions.

Architecture invariant: drives the grammar, the builder and the verifier; knows nothing of LSP,
of editor features or of the lowering.  Its results (:mod:`.results`) are what those read.
"""

"""Editor features over a document's analysis: the index (definition, references, rename,
symbols), hover, completion, signature help, semantic tokens, inlay hints, code actions and
formatting.  Each module's docstring names the LSP request it answers.

Architecture invariant: reads analysis results and the IR; imports no LSP library (the server
converts), and nothing below imports it.
"""

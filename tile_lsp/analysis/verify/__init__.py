"""The verifier: the framework (rules registered by op name, traits), the rules of each op, the
verifier layers of spec 003, the frontend contract and ``-verify-diagnostics``.

Architecture invariant: reads the IR (and the syntax layer's parse helpers for attribute text
still kept as text); never imports the pipeline, the incremental analysis or an editor feature.
"""

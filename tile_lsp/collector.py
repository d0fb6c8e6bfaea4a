"""CPython's cyclic garbage collector, paused while an analysis builds its IR.

An analysis allocates millions of objects (parse trees, operations, values,
ranges) and keeps most of them: the IR is the result.  Each full
(generation 2) collection scans every object of the heap, and the
collector starts one each time the heap has grown by a quarter, so building
the IR of a large file ran many of them over an ever larger heap: half of
the time of ``tile-lsp --check`` on a 50,000-line file went to collections
that found nothing to free (``docs/performance.md``).  What an analysis
drops on the way (a parse tree once built) is freed by reference counting;
the cycles (an op and its block point at each other) are collected once the
collector runs again.

:func:`collector_paused` disables the collector for the extent of a
``with`` block and enables it again when the last of the blocks open in the
process (in any thread) ends; the server also collects and freezes the heap
after a long analysis (:mod:`tile_lsp.server.heap`).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable :mod:`gc`'s automatic collections inside the block (nestable, thread-safe).

    Collections are enabled again when every such block has ended, if they
    were enabled when the first began; an explicit :func:`gc.collect`
    inside the block still runs.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()

"""When the server's Python heap is garbage-collected (CPython's cyclic GC).

The IR of a 10,000-line document is a few million objects.  CPython's cyclic
collector scans all of them in each full (generation 2) collection, about
0.4 s on the bench machine, and one falls due every hundred edits or so: a
keystroke that lands on one waits that long for its diagnostics.  The policy
here, measured by ``bench/lsp.py`` (``docs/performance.md``):

* after an analysis that took long (a document's first one), the heap is
  collected once and frozen (:func:`gc.freeze`): the frozen objects are left
  out of later collections, which then only scan what edits created;
* the IR an edit replaces is freed by reference counting, except cycles
  (an op and its parent block point at each other), which a frozen heap keeps;
  so after ``every`` analyses the heap is collected and frozen again, once
  the server has been idle for ``idle_s`` seconds (not while the user types);
* the youngest generation is collected after 10,000 allocations rather than
  CPython's 700 (:func:`configure_collector`): an analysis allocates tens of
  thousands of objects, most freed by reference counting, and with the
  default a large file's first analysis ran 16 full collections (1.8 s)
  and each edit a few young ones; with 10,000, 3 full collections (0.5 s).
"""

from __future__ import annotations

import gc
import time


class HeapPolicy:
    """Counts analyses and says when to collect and refreeze the heap.

    ``long_s``: an analysis at least this long (seconds) is followed by a
    collection at once; ``every``: the number of analyses after which a
    collection is due at the next idle moment; ``idle_s``: how long the
    server must have been idle for it.
    """

    def __init__(self, long_s: float = 0.5, every: int = 200, idle_s: float = 2.0):
        self.long_s = long_s
        self.every = every
        self.idle_s = idle_s
        self.since_collect = 0
        self.last_analysis = time.monotonic()
        self.collections = 0

    def after_analysis(self, seconds: float) -> bool:
        """Note an analysis of ``seconds``; True when the heap should be collected now."""
        self.since_collect += 1
        self.last_analysis = time.monotonic()
        return seconds >= self.long_s

    def idle_collection_due(self) -> bool:
        """True when enough analyses ran since the last collection and the server has been idle long enough."""
        return self.since_collect >= self.every and time.monotonic() - self.last_analysis >= self.idle_s

    def collect(self) -> None:
        """Collect everything (the frozen objects too) and freeze what survives."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.since_collect = 0
        self.collections += 1


#: allocations (less deallocations) that trigger a collection of the youngest generation
YOUNG_THRESHOLD = 10_000


def configure_collector() -> None:
    """Set the collector's thresholds for a server process (see the module's docstring).

    Only the first threshold changes; the others keep their values.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)

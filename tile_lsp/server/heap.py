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
* automatic collections are off (:func:`configure_collector`): the young
  objects an edit's analysis leaves are collected once the server has been
  idle for ``young_idle_s`` (0.1 s: between two keystrokes of fast typing),
  not in the middle of the next keystroke's analysis.  Automatic collections
  of the youngest generation cost 5 to 30 ms after each edit of a
  50,000-line document, and a keystroke typed meanwhile waited for them.  So
  that typing without a pause cannot grow the heap without bound, the young
  objects are collected at once when ``young_limit`` of them are waiting.
"""

from __future__ import annotations

import gc
import time


class HeapPolicy:
    """Counts analyses and says when to collect and refreeze the heap.

    ``long_s``: an analysis at least this long (seconds) is followed by a
    collection at once; ``every``: the number of analyses after which a
    collection is due at the next idle moment; ``idle_s``: how long the
    server must have been idle for it.  ``young_idle_s``: how long after an
    analysis, with none since, the young objects are collected;
    ``young_limit``: how many young objects (:func:`gc.get_count`) are
    collected at once, idle or not.
    """

    def __init__(self, long_s: float = 0.5, every: int = 200, idle_s: float = 2.0, young_idle_s: float = 0.1,
                 young_limit: int = 200_000):
        self.long_s = long_s
        self.every = every
        self.idle_s = idle_s
        self.young_idle_s = young_idle_s
        self.young_limit = young_limit
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

    def young_collection_now(self) -> bool:
        """True when so many young objects wait that they are collected without waiting for an idle moment."""
        return gc.get_count()[0] >= self.young_limit

    @staticmethod
    def collect_young() -> None:
        """Collect the two younger generations (what the analyses since the last collection left)."""
        gc.collect(1)

    def collect(self) -> None:
        """Collect everything (the frozen objects too) and freeze what survives."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.since_collect = 0
        self.collections += 1


def configure_collector() -> None:
    """Turn the collector's automatic collections off for a server process: the server collects
    when idle (see the module's docstring and :class:`HeapPolicy`)."""
    gc.disable()

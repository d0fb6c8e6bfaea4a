"""The parse trees the incremental analysis keeps, by the text parsed (:mod:`.units` reads them).

A parse tree is only read by the builder, and its offsets are relative to
the text parsed, so the same text at another place of the file, or in
another version of it, is built from the same tree.
"""

from __future__ import annotations

import threading


class ParseCache:
    """The parses (``ParseResult`` s) of the last ``size`` texts put, by text; the least recently
    used goes first.  Thread-safe: the server analyses in worker threads."""

    def __init__(self, size: int):
        self.size = size
        self._items: dict[str, object] = {}
        self._lock = threading.Lock()

    def get(self, text: str):
        with self._lock:
            result = self._items.pop(text, None)
            if result is not None:
                self._items[text] = result  # most recently used last
            return result

    def put(self, text: str, result) -> None:
        with self._lock:
            self._items.pop(text, None)
            self._items[text] = result
            while len(self._items) > self.size:
                del self._items[next(iter(self._items))]


#: statements parsed while editing (the few hundred bytes of a statement's tree each)
STATEMENT_PARSES = ParseCache(512)

#: the parses of functions' header and footer lines (their bodies blanked) built last: each keystroke
#: in a function parses them again otherwise.  Kept here rather than with each function: the trees of
#: a 50,000-line file's 977 headers were 12 MB of the server's memory, for the few functions edited
HEADER_PARSES = ParseCache(64)

#: statement texts whose parses one analysis keeps (a file's statements repeat: constants,
#: ``return``, the same kernel at several tile sizes); the trees are freed with the analysis
RUN_PARSES = 4096

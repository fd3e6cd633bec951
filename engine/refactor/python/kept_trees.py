"""Python trees with their LibCST metadata, kept by the file's path and the hash of its content.

Resolving the metadata (positions, parents, scopes, contexts) is most of a Python extract or inline
plan's time, and one plan asks for the same file's tree more than once (the policy to find what
the span is, the pass to plan it); a long-lived engine (the CLI's daemon keeps one) asks again on
every plan of a file that has not changed. A tree depends on nothing but the text, so a kept one
is the same answer for any request; an edited file has another hash and is read afresh. A tree
with its metadata weighs about 220 bytes per character of its source (6.9 MB for cachetools'
891-line ``__init__.py``), so the least recently used go first once the kept trees' sources hold
more than ``limit_chars`` characters in all (about 65 MB); the latest tree is kept whatever its size.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Tree = TypeVar("Tree")


class KeptTrees(Generic[Tree]):
    def __init__(self, limit_chars: int = 300_000) -> None:
        self._limit = limit_chars
        self._held = 0
        self._trees: OrderedDict[tuple[str, str], tuple[Tree, int]] = OrderedDict()
        self._lock = threading.Lock()  # the passes of a plan and a server's thread may both read

    def get(self, key: tuple[str, str], chars: int, build: Callable[[], Tree]) -> Tree:
        """The tree kept for ``key`` ((path, sha256) of a source of ``chars`` characters), else
        ``build()``'s, then kept."""
        with self._lock:
            found = self._trees.get(key)
            if found is not None:
                self._trees.move_to_end(key)
                return found[0]
        built = build()  # outside the lock: a parse of another file need not wait for this one
        with self._lock:
            if key not in self._trees:
                self._trees[key] = (built, chars)
                self._held += chars
            self._trees.move_to_end(key)
            while self._held > self._limit and len(self._trees) > 1:
                self._held -= self._trees.popitem(last=False)[1][1]
        return built

    def clear(self) -> None:
        with self._lock:
            self._trees.clear()
            self._held = 0

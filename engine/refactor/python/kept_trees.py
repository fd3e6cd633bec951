"""Python trees with their LibCST metadata, kept by the file's path and the hash of its content.

Resolving the metadata (positions, parents, scopes, contexts) is most of a Python extract or inline
plan's time, and one plan asks for the same file's tree more than once (the policy to find what
the span is, the pass to plan it); a long-lived engine (the CLI's daemon keeps one) asks again on
every plan of a file that has not changed. A tree depends on nothing but the text, so a kept one
is the same answer for any request; an edited file has another hash and is read afresh. The least
recently used tree goes first once more than ``limit`` are kept (a tree of a large file weighs
megabytes).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Tree = TypeVar("Tree")


class KeptTrees(Generic[Tree]):
    def __init__(self, limit: int = 8) -> None:
        self._limit = limit
        self._trees: OrderedDict[tuple[str, str], Tree] = OrderedDict()
        self._lock = threading.Lock()  # the passes of a plan and a server's thread may both read

    def get(self, key: tuple[str, str], build: Callable[[], Tree]) -> Tree:
        """The tree kept for ``key`` ((path, sha256)), else ``build()``'s, then kept."""
        with self._lock:
            found = self._trees.get(key)
            if found is not None:
                self._trees.move_to_end(key)
                return found
        built = build()  # outside the lock: a parse of another file need not wait for this one
        with self._lock:
            self._trees[key] = built
            self._trees.move_to_end(key)
            while len(self._trees) > self._limit:
                self._trees.popitem(last=False)
        return built

    def clear(self) -> None:
        with self._lock:
            self._trees.clear()

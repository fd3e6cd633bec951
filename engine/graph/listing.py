"""The workspace's file list, kept between the calls of a long-lived engine.

A rename's doctest pass needs every file of the workspace, not only the sources the graph
holds (``.rst`` and ``.txt`` files pytest collects as doctests). Walking the tree for them
on every warm rename was a large share of it. The index walks it anyway when it sweeps,
and its watcher reports every path touched since: a listing is kept while no touched path
appeared or went, and dropped (walked again when next asked) as soon as one did.
"""

from __future__ import annotations

import os
from typing import Iterable


class KeptListing:
    def __init__(self, root: str) -> None:
        self._root = root
        self._files: list[str] | None = None
        self._members: frozenset[str] = frozenset()

    def keep(self, files: list[str]) -> None:
        """The files of a whole-workspace scan just made."""
        self._files = list(files)
        self._members = frozenset(files)

    def files(self) -> list[str] | None:
        """The kept listing (callers must not change it), or None: walk the workspace."""
        return self._files

    def notice(self, touched: Iterable[str]) -> None:
        """Paths touched since (watcher events, the engine's own edits): a path that appeared
        or went makes the listing stale. A touched path the scan ignores (an editor's swap file)
        drops it too: only the scan's rules could say whether it belongs, and rescanning is safe."""
        if self._files is None:
            return
        for path in touched:
            if (path in self._members) != os.path.lexists(f"{self._root}/{path}"):
                self.forget()
                return

    def forget(self) -> None:
        self._files = None
        self._members = frozenset()

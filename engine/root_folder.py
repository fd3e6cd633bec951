"""The workspace root a call starts from: the nearest folder holding a project's marker.

Standard library only (``os``), and no ``enum``: the thin ``graft`` client finds the root with
this alone before it hands the call to the workspace's daemon (frontends.cli.entry).
"""

from __future__ import annotations

import os

#: Files that mark a project root, checked from the start directory upwards.
ROOT_MARKERS = (".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml")


def find_root_folder(start: str) -> str:
    """The nearest ancestor of ``start`` (itself included, resolved, symlinks followed) holding a
    root marker, else ``start``."""
    start = os.path.realpath(start)
    candidate = start
    while True:
        if any(os.path.exists(os.path.join(candidate, marker)) for marker in ROOT_MARKERS):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent

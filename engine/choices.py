"""What a caller chooses before an engine exists: the workspace root, where symbols come from,
and how large a file may be read.

Kept apart, with nothing but the standard library, because the thin ``graft`` client decides
with these alone whether a warm daemon can answer, and must not pay for importing the engine.
"""

from __future__ import annotations

import os
from enum import Enum

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path  # imported where a Path is made: the thin client works on strings

#: Files that mark a project root, checked from the start directory upwards.
ROOT_MARKERS = (".git", "pyproject.toml", "package.json", "go.mod", "Cargo.toml")

DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024


class SourcePreference(str, Enum):
    """Where symbols may come from: ``auto`` is the server when it answers, else the syntax tree, else regex."""

    AUTO = "auto"
    LSP = "lsp"
    AST = "ast"
    REGEX = "regex"


def find_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` (itself included) holding a root marker, else ``start``."""
    from pathlib import Path

    return Path(find_root_folder(os.fspath(start)))


def find_root_folder(start: str) -> str:
    """:func:`find_root` on strings, for the thin client (``start`` resolved, symlinks followed)."""
    start = os.path.realpath(start)
    candidate = start
    while True:
        if any(os.path.exists(os.path.join(candidate, marker)) for marker in ROOT_MARKERS):
            return candidate
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return start
        candidate = parent

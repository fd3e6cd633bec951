"""What a caller chooses before an engine exists: the workspace root, where symbols come from,
and how large a file may be read.

Kept apart, with nothing but the standard library: the daemon's side of a call decides with
these before the engine is imported (frontends.cli.startup). The thin client itself uses
engine.root_folder and the sources' values, without ``enum``.
"""

from __future__ import annotations

import os
from enum import Enum

from engine.root_folder import find_root_folder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path  # imported where a Path is made: the thin client works on strings

DEFAULT_MAX_FILE_BYTES = 4 * 1024 * 1024


class SourcePreference(str, Enum):
    """Where symbols may come from: ``auto`` is the server when it answers, else the syntax tree, else regex."""

    AUTO = "auto"
    LSP = "lsp"
    AST = "ast"
    REGEX = "regex"


def find_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` (itself included) holding a root marker, else ``start``
    (engine.root_folder.find_root_folder, as a Path)."""
    from pathlib import Path

    return Path(find_root_folder(os.fspath(start)))

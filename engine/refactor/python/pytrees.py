"""Python's own syntax trees for the passes that read code as Python sees it (``ast``), and the
one way those passes add edits to a plan."""

from __future__ import annotations

import ast
import threading
import warnings
from collections import OrderedDict
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.answers import TextEdit


_RECENT_TREES = 8
_RECENT_CHARACTERS = 256_000
"""What the kept trees' texts may hold in all: a tree takes about 27 bytes per character of its
text, so at most about 7 MB stays (a warm daemon's memory is held to a budget)."""
_recent: OrderedDict[str, ast.Module | None] = OrderedDict()
_recent_lock = threading.Lock()


def parse_python(text: str) -> ast.Module | None:
    """The tree, or None for text Python does not parse (test data with deliberate errors). The
    project's invalid escapes (``"\\."``) are its business: their warnings are not shown.

    The last few trees are kept by text: a rename's passes parse its defining module several
    times (its doctests' owner class, its repr, its local twins), and a warm daemon's next call
    the same again. Shared: callers must not change a tree."""
    with _recent_lock:  # the MCP server's sessions plan on threads of their own
        if text in _recent:
            _recent.move_to_end(text)
            return _recent[text]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
            tree: ast.Module | None = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    if len(text) > _RECENT_CHARACTERS:
        return tree
    with _recent_lock:
        _recent[text] = tree
        while len(_recent) > _RECENT_TREES or sum(map(len, _recent)) > _RECENT_CHARACTERS:
            _recent.popitem(last=False)
    return tree


def code_points(line: str, byte_column: int) -> int:
    """ast's columns count UTF-8 bytes; positions here count code points."""
    return len(line.encode("utf-8")[:byte_column].decode("utf-8", "replace"))


def with_spans(edit: WorkspaceEdit, hash_of: Callable[[str], str | None], added: dict[str, list[TextEdit]]) -> WorkspaceEdit:
    """``edit`` with more text edits per file, appended to the file's change (made when the edit
    has none, expecting the file's ``hash_of(path)``: its hash as the plan read it)."""
    operations = list(edit.operations)
    for path, spans in added.items():
        if not spans:
            continue
        known = next((op for op in operations if isinstance(op, FileChange) and op.path == path), None)
        if known is None:
            operations.append(FileChange(path, tuple(spans), hash_of(path)))
        else:
            operations[operations.index(known)] = FileChange(path, known.edits + tuple(spans), known.expected_sha256)
    return WorkspaceEdit(tuple(operations), edit.annotations)

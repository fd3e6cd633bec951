"""Python's own syntax trees for the passes that read code as Python sees it (``ast``), and the
one way those passes add edits to a plan."""

from __future__ import annotations

import ast
import warnings
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.answers import TextEdit


def parse_python(text: str) -> ast.Module | None:
    """The tree, or None for text Python does not parse (test data with deliberate errors). The
    project's invalid escapes (``"\\."``) are its business: their warnings are not shown."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


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

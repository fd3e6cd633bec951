"""Dotted paths in strings: the references to code that live in test patches and imports by name."""

from __future__ import annotations

import re

from engine.edits.model import FileChange, WorkspaceEdit
from engine.languages import language_of
from engine.answers import TextEdit
from engine.positions import Position, Range, split_lines
from engine.workspace import Workspace


def retarget_dotted_strings(
    workspace: Workspace, edit: WorkspaceEdit, old: str, new: str, paths: list[str] | None = None
) -> WorkspaceEdit:
    """Strings that name ``old`` by its dotted path (``mock.patch("pkg.mod.name")``,
    ``monkeypatch.setattr("pkg.mod.name", …)``, ``"pkg.mod"`` in ``importlib.import_module``)
    name ``new`` instead: code references no server or import rewriter sees. ``paths`` limits
    the search (the graph's files, rather than a fresh scan of the workspace)."""
    pattern = re.compile(rf"([\"']){re.escape(old)}(?=(?:\.[\w.]*)?\1)")
    changes: dict[str, FileChange] = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    operations = list(edit.operations)
    candidates = paths if paths is not None else workspace.scan().files
    for path in sorted(p for p in candidates if language_of(p) == "python"):
        source = workspace.read(path)
        if old not in source.text:
            continue
        spans = []
        for number, line in enumerate(split_lines(source.text)):
            for match in pattern.finditer(line):
                spans.append(TextEdit(Range(Position(number, match.start() + 1), Position(number, match.end())), new))
        if not spans:
            continue
        existing = changes.get(path)
        if existing is None:
            operations.append(FileChange(path, tuple(spans), source.sha256))
            continue
        lines_edited = {line for e in existing.edits for line in range(e.range.start.line, max(e.range.end.line, e.range.start.line + 1))}
        extra = tuple(s for s in spans if s.range.start.line not in lines_edited)
        merged = FileChange(path, existing.edits + extra, existing.expected_sha256)
        operations[operations.index(existing)] = merged
    return WorkspaceEdit(tuple(operations), edit.annotations)

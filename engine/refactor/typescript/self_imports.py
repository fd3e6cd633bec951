"""A move's destination that imported the moved name: the import goes, with the move.

tsserver's "Move to file" appends the declaration to the destination but leaves the
destination's own import of that name (``import { latest } from "../internal"``, through a
barrel that re-exports the source): the file then both declares and imports it, and tsc fails
(TS2440, immer 10.1.1 in benchmarks/real_projects_ts.toml). The specifier is removed here, the
whole statement when it was the only one; an import the server's edit itself touches is not
rewritten twice: the move is refused with the place instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.positions import Position, Range, line_starts

_NAMED_IMPORT = re.compile(r"^[ \t]*import\s+(?:type\s+)?\{(?P<names>[^}]*)\}\s*from\s*(['\"])[^'\"\n]+\2[ \t]*;?[ \t]*(?:\r\n|\r|\n)?",
                           re.MULTILINE)
_SPECIFIER = re.compile(r"(?:type\s+)?(?P<name>[\w$]+)(?:\s+as\s+(?P<alias>[\w$]+))?")


@dataclass(frozen=True)
class SelfImport:
    """The edit that drops the destination's import of the moved name, or why it cannot be made."""

    edit: TextEdit | None
    conflict: str = ""


def self_import_removals(text: str, server_edits: tuple[TextEdit, ...], name: str, path: str) -> list[SelfImport]:
    """One per named import of ``name`` (as its local name) in the destination's original ``text``."""
    starts = line_starts(text)
    found = []
    for statement in _NAMED_IMPORT.finditer(text):
        names = statement.group("names")
        pieces = [(m.start(), m.end(), m) for m in re.finditer(r"[^,]+", names) if m.group().strip()]
        hits = [i for i, (_s, _e, m) in enumerate(pieces) if _local_name(m.group()) == name]
        if not hits:
            continue
        first_line, last_line = _line_of(starts, statement.start()), _line_of(starts, statement.end() - 1)
        if any(e.range.start.line <= last_line and first_line <= e.range.end.line for e in server_edits):
            found.append(SelfImport(None, f"{path}:{first_line + 1} imports {name}, and the server's move edits that import"))
            continue
        if len(hits) == len(pieces):
            start, end = statement.start(), statement.end()
        else:
            start, end = _specifier_span(names, pieces, hits[0], statement.start("names"))
        found.append(SelfImport(TextEdit(Range(_position(starts, start), _position(starts, end)), "")))
    return found


def _local_name(specifier: str) -> str:
    matched = _SPECIFIER.fullmatch(specifier.strip())
    if matched is None:
        return ""
    return matched.group("alias") or matched.group("name")


def _specifier_span(names: str, pieces: list[tuple[int, int, re.Match[str]]], index: int, offset: int) -> tuple[int, int]:
    """The specifier with the separator after it (before it, when it is the last), so that the
    list keeps its layout: one specifier a line stays one a line."""
    def content(i: int) -> tuple[int, int]:
        start, end, _match = pieces[i]
        piece = names[start:end]
        return start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())

    start, end = content(index)
    if index + 1 < len(pieces):
        return offset + start, offset + content(index + 1)[0]
    return offset + content(index - 1)[1], offset + end


def _line_of(starts: list[int], offset: int) -> int:
    line = 0
    while line + 1 < len(starts) and starts[line + 1] <= offset:
        line += 1
    return line


def _position(starts: list[int], offset: int) -> Position:
    line = _line_of(starts, offset)
    return Position(line, offset - starts[line])


def with_self_imports_removed(edit: WorkspaceEdit, dest: str, text: str, name: str) -> tuple[WorkspaceEdit, list[str], list[str]]:
    """``edit`` with the destination's imports of ``name`` dropped; (edit, notes, conflicts)."""
    change = next((op for op in edit.operations if isinstance(op, FileChange) and op.path == dest), None)
    if change is None:
        return edit, [], []
    removals = self_import_removals(text, change.edits, name, dest)
    conflicts = [r.conflict for r in removals if r.edit is None]
    added = tuple(r.edit for r in removals if r.edit is not None)
    if not added or conflicts:
        return edit, [], conflicts
    updated = FileChange(change.path, tuple(sorted((*change.edits, *added), key=lambda e: (e.range.start.line, e.range.start.column))),
                         change.expected_sha256)
    operations = tuple(updated if op is change else op for op in edit.operations)
    notes = [f"{dest}: its import of {name} removed, as the file now declares it"]
    return WorkspaceEdit(operations, edit.annotations), notes, []

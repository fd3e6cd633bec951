"""Locations made to stand alone: each with the symbol around it, that symbol's kind, and the
line's own text, so that one line of an answer is enough to act on (an agent reads lines, not
ranges)."""

from __future__ import annotations

from dataclasses import dataclass

from engine.answers import Location
from engine.errors import GraftError
from engine.graph import GraphQueries
from engine.positions import split_lines
from engine.workspace import Workspace


@dataclass(frozen=True)
class LocatedLine:
    file: str
    line: int
    """1-based."""
    column: int
    """1-based, in code points."""
    enclosing: str | None
    """The address of the innermost symbol around the line (``pkg/m.py:Order/total``), or None at module level."""
    kind: str | None
    text: str
    """The line as it is in the file, stripped of surrounding whitespace."""

    def render(self) -> str:
        where = f"{self.enclosing} · {self.kind}" if self.enclosing else "module"
        return f"{self.file}:{self.line}:{self.column}  [{where}]  {self.text}"

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column, "enclosing": self.enclosing, "kind": self.kind,
                "text": self.text}


def located(workspace: Workspace, queries: GraphQueries, locations: list[Location]) -> list[LocatedLine]:
    """Each location with its enclosing symbol (from the graph's facts) and its line's text; a file
    outside the workspace or unreadable keeps its position with an empty text."""
    texts: dict[str, list[str]] = {}
    found = []
    for location in locations:
        line = location.range.start.line
        if location.file not in texts:
            try:
                texts[location.file] = split_lines(workspace.read(location.file).text) if location.inside_workspace else []
            except GraftError:
                texts[location.file] = []
        lines = texts[location.file]
        text = lines[line].strip() if 0 <= line < len(lines) else ""
        around = queries.project.enclosing_symbol(location.file, line + 1)
        found.append(LocatedLine(location.file, line + 1, location.range.start.column + 1,
                                 f"{location.file}:{around.name_path}" if around is not None else None,
                                 around.kind.label if around is not None else None, text))
    return found

"""A Go rename must not rename a use whose declaration stays as it is.

Renamed at an interface's method, gopls renames every method that keeps a type satisfying that
interface, and every call through them. When the interface shares the method with one declared
outside the workspace (``String`` with ``fmt.Stringer``), gopls also renames calls made through
that other interface: ``s.String()`` on an ``fmt.Stringer`` becomes ``s.Label()``, which
``fmt.Stringer`` does not have. The build breaks, and gopls says nothing. So every selector the
plan renames (``x.Name``: a method or field reached through a value) is asked of the server
where it leads; one that leads outside the workspace refuses the plan, listed.
"""

from __future__ import annotations

from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import ListingRefusal, Refused
from engine.ports import LanguageServices
from engine.positions import Position
from engine.workspace import Workspace

MOST_ASKED = 2000
"""Selectors asked about at most (a few ms each); past it the rest are named as not checked."""


class RenamesForeignUses(ListingRefusal):
    """The plan renames uses of a declaration outside the workspace, which keeps its name."""

    code = "renames_foreign_uses"
    listed_as = "uses"


def check(edit: WorkspaceEdit, workspace: Workspace, services: LanguageServices, old_name: str, new_name: str) -> list[str]:
    """Raises RenamesForeignUses when a renamed selector leads outside the workspace; returns the
    warnings of what could not be checked."""
    selectors = [(change.path, text_edit.range.start) for change in edit.operations if isinstance(change, FileChange)
                 for text_edit in change.edits if _is_selector(workspace, change.path, text_edit.range.start)]
    foreign: list[str] = []
    unanswered = 0
    for path, position in selectors[:MOST_ASKED]:
        try:
            answer = services.definition(workspace.read(path), position)
        except Refused:
            unanswered += 1
            continue
        outside = [location for location in answer.value if not location.inside_workspace]
        if outside and not any(location.inside_workspace for location in answer.value):
            where = outside[0]
            foreign.append(f"{path}:{position.line + 1}:{position.column + 1} uses the {old_name} declared at "
                           f"{where.file}:{where.range.start.line + 1}")
    if foreign:
        listing = "\n  ".join(foreign)
        raise RenamesForeignUses(
            f"renaming {old_name} to {new_name} would also rename uses of a declaration outside the workspace, which "
            f"keeps its name (an interface of another module that shares the method): the build would break at\n  {listing}\n"
            f"the types that implement both cannot be renamed apart from it; keep the name, or change those uses first", foreign)
    warnings = []
    if unanswered:
        warnings.append(f"{unanswered} renamed selector(s) could not be followed to their declaration (the server did not "
                        "answer): a use of another module's method of the same name may be renamed with them; build to check")
    if len(selectors) > MOST_ASKED:
        warnings.append(f"{len(selectors) - MOST_ASKED} renamed selector(s) past the first {MOST_ASKED} were not followed to "
                        "their declaration: build to check that none is another module's method")
    return warnings


def _is_selector(workspace: Workspace, path: str, start: Position) -> bool:
    """Whether the renamed name follows a ``.`` (whitespace between allowed: a chained call over lines)."""
    source = workspace.read(path)
    starts = source.line_starts
    if start.line >= len(starts):
        return False
    offset = starts[start.line] + start.column - 1
    text = source.text
    while offset >= 0 and text[offset] in " \t\r\n":
        offset -= 1
    return offset >= 0 and text[offset] == "."

"""Engine-side values for what language servers answer: locations, edits, hovers, hierarchies, diagnostics.

``lsp_pool.convert`` is the one place that builds these from LSP types; the
engine and front ends never see ``lsprotocol``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from engine.positions import Range
from engine.symbols import SymbolKind


@dataclass(frozen=True)
class Location:
    file: str
    """Workspace-relative, or an absolute path for files outside the workspace (library code)."""
    range: Range
    inside_workspace: bool = True


@dataclass(frozen=True)
class TextEdit:
    range: Range
    new_text: str


@dataclass(frozen=True)
class FileEdits:
    file: str
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class ServerEdit:
    """A workspace edit proposed by a server (rename, code action), not yet checked or applied."""

    files: tuple[FileEdits, ...] = ()
    created: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()
    deleted: tuple[str, ...] = ()

    @classmethod
    def joined(cls, edits: Sequence[ServerEdit]) -> ServerEdit:
        """Several edits a server sent for one request (each ``workspace/applyEdit`` of a command), as one."""
        return cls(files=tuple(f for edit in edits for f in edit.files), created=tuple(c for edit in edits for c in edit.created),
                   renamed=tuple(r for edit in edits for r in edit.renamed), deleted=tuple(d for edit in edits for d in edit.deleted))


@dataclass(frozen=True)
class Hover:
    text: str
    range: Range | None


@dataclass(frozen=True)
class HierarchyItem:
    """A call- or type-hierarchy item; ``handle`` is the server's own item, passed back for follow-ups."""

    name: str
    kind: SymbolKind
    file: str
    range: Range
    selection_range: Range
    detail: str = ""
    handle: object = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class CallEdge:
    item: HierarchyItem
    call_sites: tuple[Range, ...]


@dataclass(frozen=True)
class Diagnostic:
    file: str
    range: Range
    severity: str
    message: str
    source: str = ""
    code: str = ""


@dataclass(frozen=True)
class CodeAction:
    title: str
    kind: str
    edit: ServerEdit | None
    handle: object = field(default=None, compare=False, repr=False)

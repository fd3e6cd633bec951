"""``delete-file``: remove a file through the journal (one undo brings it back), refused while
other files still import it, unless forced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.edits.model import DeleteFile, WorkspaceEdit
from engine.errors import FileNotInWorkspace, Refused
from engine.refactor.operations.base import FieldKind, PlanContext, RefactorOperation, param
from engine.refactor.plan import RefactorPlan
from engine.symbols import Confidence, Source


class ImportsRemain(Refused):
    code = "imports_remain"


@dataclass(frozen=True)
class FileDelete(RefactorOperation):
    name: ClassVar[str] = "delete-file"
    summary: ClassVar[str] = "delete a file (journaled, undoable); refused while other files import it, unless forced"
    mcp_tool: ClassVar[str] = "delete_file"
    lsp_command: ClassVar[str] = "graft.deleteFile"

    path: str = param(FieldKind.PATH, "the file's workspace path", metavar="FILE")
    even_if_imported: bool = param(FieldKind.FLAG, "delete it even though other files import it (they will fail to import)",
                                   default=False)

    def target(self) -> str:
        return self.path

    def plan(self, context: PlanContext) -> RefactorPlan:
        relative, absolute = context.workspace.resolve(self.path)
        if not absolute.is_file():
            raise FileNotInWorkspace(f"{relative} is not a file of the workspace")
        importers = context.graph().importing_files([relative])
        warnings = [f"checked the graph's import edges: {len(importers)} importer(s)"]
        if importers and not self.even_if_imported:
            raise ImportsRemain(f"{relative} is still imported by {len(importers)} file(s); nothing was deleted:\n  "
                                + "\n  ".join(sorted(importers)), option="even_if_imported")
        if importers:
            warnings.append(f"deleted although imported by: {', '.join(sorted(importers))}")
        return RefactorPlan("delete-file", WorkspaceEdit((DeleteFile(relative),)), Source.AST, Confidence.HIGH, warnings)

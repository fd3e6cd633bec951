"""``delete-file``: remove a file through the journal (one undo brings it back), refused while
other files still import it (by the graph's import edges), unless forced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.edits.model import DeleteFile, WorkspaceEdit
from engine.errors import FileNotInWorkspace, Refused
from engine.refactor.operations.base import PlanContext
from engine.refactor.plan import RefactorPlan
from engine.symbols import Confidence, Source

if TYPE_CHECKING:
    from engine.refactor.operations.delete_file import FileDelete


class ImportsRemain(Refused):
    code = "imports_remain"


def plan(operation: FileDelete, context: PlanContext) -> RefactorPlan:
    relative, absolute = context.workspace.resolve(operation.path)
    if not absolute.is_file():
        raise FileNotInWorkspace(f"{relative} is not a file of the workspace")
    importers = context.graph().importing_files([relative])
    warnings = [f"checked the graph's import edges: {len(importers)} importer(s)"]
    if importers and not operation.even_if_imported:
        raise ImportsRemain(f"{relative} is still imported by {len(importers)} file(s); nothing was deleted:\n  "
                            + "\n  ".join(sorted(importers)), option="even_if_imported")
    if importers:
        warnings.append(f"deleted although imported by: {', '.join(sorted(importers))}")
    return RefactorPlan("delete-file", WorkspaceEdit((DeleteFile(relative),)), Source.AST, Confidence.HIGH, warnings)

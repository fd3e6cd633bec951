"""``rename-file``: move a file and update its importers (the server's willRenameFiles, else
LibCST for Python); the moved module and the Python files updated are import-checked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor import rename_file
from engine.refactor.operations.base import FieldKind, RefactorOperation, PlanContext, param
from engine.refactor.operations.move_symbol import IMPORT_CHECK_HELP, import_checked
from engine.refactor.plan import RefactorPlan


@dataclass(frozen=True)
class FileRename(RefactorOperation):
    name: ClassVar[str] = "rename-file"
    summary: ClassVar[str] = "move or rename a module file and update its importers"
    mcp_tool: ClassVar[str] = "rename_file"
    lsp_command: ClassVar[str] = "graft.renameFile"

    old: str = param(FieldKind.PATH, "the file's workspace path now")
    new: str = param(FieldKind.PATH, "its new workspace path")
    import_check: bool = param(FieldKind.FLAG, IMPORT_CHECK_HELP, default=True)

    def target(self) -> str:
        return f"{self.old} -> {self.new}"

    def plan(self, context: PlanContext) -> RefactorPlan:
        plan = rename_file.plan_rename_file(context.workspace, context.graph(), context.services, context.use_server,
                                            self.old, self.new)
        if not self.import_check or not plan.edit.touched or not self.old.endswith(".py"):
            return plan
        old_path = context.workspace.resolve(self.old)[0]
        return import_checked(context, plan, [p for p in plan.edit.touched if p != old_path], f"renaming {self.old} to {self.new}")

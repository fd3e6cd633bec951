"""``rename-file``: move a file and update its importers; its policy is
engine.refactor.policy.rename_file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import STRICT_HELP, FieldKind, RefactorOperation, param
from engine.refactor.operations.move_symbol import IMPORT_CHECK_HELP


@dataclass(frozen=True)
class FileRename(RefactorOperation):
    name: ClassVar[str] = "rename-file"
    summary: ClassVar[str] = "move or rename a module file and update its importers"
    mcp_tool: ClassVar[str] = "rename_file"
    lsp_command: ClassVar[str] = "graft.renameFile"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = True
    reads_graph: ClassVar[bool] = True

    old: str = param(FieldKind.PATH, "the file's workspace path now")
    new: str = param(FieldKind.PATH, "its new workspace path")
    import_check: bool = param(FieldKind.FLAG, IMPORT_CHECK_HELP, default=True)
    strict: bool = param(FieldKind.FLAG, STRICT_HELP, default=False)
    build_change: bool = param(FieldKind.FLAG, "let a Go file's new name change which builds include it (a _test, "
                                               "_windows or _linux_amd64 suffix added, removed or changed): off refuses "
                                               "such a rename (build_constraints_change), on plans it and says so",
                               default=False)

    def target(self) -> str:
        return f"{self.old} -> {self.new}"

"""``delete-file``: remove a file through the journal; its policy (refused while imported,
unless forced) is engine.refactor.policy.delete_file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param


@dataclass(frozen=True)
class FileDelete(RefactorOperation):
    name: ClassVar[str] = "delete-file"
    summary: ClassVar[str] = "delete a file (journaled, undoable); refused while other files import it, unless forced"
    mcp_tool: ClassVar[str] = "delete_file"
    lsp_command: ClassVar[str] = "graft.deleteFile"
    destructive: ClassVar[bool] = True
    idempotent: ClassVar[bool] = True
    reads_graph: ClassVar[bool] = True

    path: str = param(FieldKind.PATH, "the file's workspace path", metavar="FILE")
    even_if_imported: bool = param(FieldKind.FLAG, "delete it even though other files import it (they will fail to import)",
                                   default=False)

    def target(self) -> str:
        return self.path

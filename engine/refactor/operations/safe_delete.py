"""``delete``: a symbol nothing else refers to; its policy (refused, with every place listed,
while anything outside it does; overloads and accessors go together) is
engine.refactor.policy.delete."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import CodeAction, FieldKind, RefactorOperation, param


@dataclass(frozen=True)
class Delete(RefactorOperation):
    name: ClassVar[str] = "delete"
    summary: ClassVar[str] = "delete a symbol; refused, with every reference listed, while anything else refers to it"
    mcp_tool: ClassVar[str] = "safe_delete_symbol"
    lsp_command: ClassVar[str] = "graft.safeDelete"
    destructive: ClassVar[bool] = True
    idempotent: ClassVar[bool] = True
    reads_graph: ClassVar[bool] = True
    code_action: ClassVar[CodeAction | None] = CodeAction("Safe delete", "refactor")

    address: str = param(FieldKind.ADDRESS, "the symbol to delete")

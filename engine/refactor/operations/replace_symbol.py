"""``replace``: a symbol's whole declaration, decorators included; its policy is
engine.refactor.policy.replace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import CodeAction, FieldKind, RefactorOperation, param


@dataclass(frozen=True)
class Replace(RefactorOperation):
    name: ClassVar[str] = "replace"
    summary: ClassVar[str] = "replace a symbol's whole declaration (decorators included); the text is re-indented to fit"
    mcp_tool: ClassVar[str] = "replace_symbol_body"
    lsp_command: ClassVar[str] = "graft.replaceSymbolBody"
    destructive: ClassVar[bool] = True
    idempotent: ClassVar[bool] = True
    span_only: ClassVar[bool] = True
    code_action: ClassVar[CodeAction | None] = CodeAction("Replace body…", "refactor.rewrite")

    address: str = param(FieldKind.ADDRESS, "the symbol to replace")
    text: str = param(FieldKind.CODE, "the new declaration (re-indented to fit)", cli_flag="--body-file")
    include_doc_comment: bool = param(FieldKind.FLAG, "replace the doc comment above it too", default=False)

"""``replace``: a symbol's whole declaration, decorators included; the new text is re-indented to fit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.names import parse_address
from engine.refactor import symbol_edits
from engine.refactor.operations.base import CodeAction, FieldKind, RefactorOperation, PlanContext, param
from engine.refactor.plan import RefactorPlan


@dataclass(frozen=True)
class Replace(RefactorOperation):
    name: ClassVar[str] = "replace"
    summary: ClassVar[str] = "replace a symbol's whole declaration (decorators included); the text is re-indented to fit"
    mcp_tool: ClassVar[str] = "replace_symbol_body"
    lsp_command: ClassVar[str] = "graft.replaceSymbolBody"
    code_action: ClassVar[CodeAction | None] = CodeAction("Replace body…", "refactor.rewrite")

    address: str = param(FieldKind.ADDRESS, "the symbol to replace")
    text: str = param(FieldKind.CODE, "the new declaration (re-indented to fit)", cli_flag="--body-file")
    include_doc_comment: bool = param(FieldKind.FLAG, "replace the doc comment above it too", default=False)

    def plan(self, context: PlanContext) -> RefactorPlan:
        symbol = context.resolve(parse_address(self.address))
        source = context.workspace.read(symbol.file)
        return symbol_edits.plan_replace(symbol, source, self.text, include_doc_comment=self.include_doc_comment)

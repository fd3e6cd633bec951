"""``extract-variable``: an expression into a variable above its statement, or a module-level
constant; its policy is engine.refactor.policy.extract_variable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param

SPAN_HELP = "FILE:LINE:COL-LINE:COL (1-based, end exclusive), or a name path with lines or match"
LINES_HELP = "FIRST-LAST lines within the name path's symbol"
MATCH_HELP = "text found exactly once within the name path's symbol"


@dataclass(frozen=True)
class ExtractVariable(RefactorOperation):
    name: ClassVar[str] = "extract-variable"
    summary: ClassVar[str] = "extract an expression into a variable (or module constant); TS/Go through the server"
    mcp_tool: ClassVar[str] = "extract_variable"
    lsp_command: ClassVar[str] = "graft.extractVariable"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = False

    address: str = param(FieldKind.SPAN, SPAN_HELP)
    new_name: str = param(FieldKind.NAME, "its name")
    lines: str = param(FieldKind.TEXT, LINES_HELP, default="")
    match: str = param(FieldKind.TEXT, MATCH_HELP, default="")
    constant: bool = param(FieldKind.FLAG, "a module-level constant", default=False)
    allow_reordering: bool = param(FieldKind.FLAG, "even if it changes when the expression is evaluated", default=False)

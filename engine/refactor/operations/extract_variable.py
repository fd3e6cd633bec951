"""``extract-variable``: an expression into a variable above its statement, or a module-level
constant; its policy is engine.refactor.policy.extract_variable."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param

SPAN_HELP = "the code: FILE:LINE:COL-LINE:COL (1-based, end exclusive), or a name path refined by lines or match"
LINES_HELP = "with a name path: the lines of that symbol, FIRST-LAST (1-based, inclusive)"
MATCH_HELP = "with a name path: text that occurs exactly once in that symbol (else refused with each place's range)"


@dataclass(frozen=True)
class ExtractVariable(RefactorOperation):
    name: ClassVar[str] = "extract-variable"
    summary: ClassVar[str] = "extract a Python expression into a variable above its statement (or a module-level constant)"
    mcp_tool: ClassVar[str] = "extract_variable"
    lsp_command: ClassVar[str] = "graft.extractVariable"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = False

    address: str = param(FieldKind.SPAN, SPAN_HELP)
    new_name: str = param(FieldKind.NAME, "the variable's name")
    lines: str = param(FieldKind.TEXT, LINES_HELP, default="")
    match: str = param(FieldKind.TEXT, MATCH_HELP, default="")
    constant: bool = param(FieldKind.FLAG, "bind it at module level, above the top-level statement that holds it", default=False)
    allow_reordering: bool = param(FieldKind.FLAG, "extract even when that changes whether or when the expression is evaluated",
                                   default=False)

"""``inline``: a variable's value in place of each of its uses, then its assignment removed; its
policy is engine.refactor.policy.inline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param
from engine.refactor.operations.extract_variable import LINES_HELP, MATCH_HELP


@dataclass(frozen=True)
class Inline(RefactorOperation):
    name: ClassVar[str] = "inline"
    summary: ClassVar[str] = "inline a Python local variable: its value replaces every use, and its assignment goes"
    mcp_tool: ClassVar[str] = "inline_symbol"
    lsp_command: ClassVar[str] = "graft.inline"
    destructive: ClassVar[bool] = True
    idempotent: ClassVar[bool] = False

    address: str = param(FieldKind.SPAN, "the variable: FILE:LINE:COL on its name (its assignment or a use), or a name "
                                         "path refined by match (the name) or lines")
    lines: str = param(FieldKind.TEXT, LINES_HELP, default="")
    match: str = param(FieldKind.TEXT, MATCH_HELP, default="")
    allow_reordering: bool = param(FieldKind.FLAG, "inline even when that changes when or how often the value is evaluated",
                                   default=False)

"""``inline``: a variable's value in place of each of its uses, then its assignment removed; its
policy is engine.refactor.policy.inline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param
from engine.refactor.operations.extract_variable import MATCH_HELP


@dataclass(frozen=True)
class Inline(RefactorOperation):
    name: ClassVar[str] = "inline"
    summary: ClassVar[str] = "inline a local variable (or Python function; a Go call): its value replaces its uses"
    mcp_tool: ClassVar[str] = "inline_symbol"
    lsp_command: ClassVar[str] = "graft.inline"
    destructive: ClassVar[bool] = True
    idempotent: ClassVar[bool] = False

    address: str = param(FieldKind.SPAN, "FILE:LINE:COL on the variable, or a name path with match")
    match: str = param(FieldKind.TEXT, MATCH_HELP, default="")
    allow_reordering: bool = param(FieldKind.FLAG, "even if it changes when the value is evaluated", default=False)

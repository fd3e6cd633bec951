"""``introduce-parameter``: an expression of a function's body becomes a new parameter, with
the expression as its default or passed at every call; its policy is
engine.refactor.policy.introduce_parameter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param
from engine.refactor.operations.extract_variable import MATCH_HELP, SPAN_HELP


@dataclass(frozen=True)
class IntroduceParameter(RefactorOperation):
    name: ClassVar[str] = "introduce-parameter"
    summary: ClassVar[str] = "a Python function body's expression becomes a new parameter (its default, or passed at calls)"
    mcp_tool: ClassVar[str] = "introduce_parameter"
    lsp_command: ClassVar[str] = "graft.introduceParameter"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = False

    address: str = param(FieldKind.SPAN, SPAN_HELP)
    new_name: str = param(FieldKind.NAME, "its name")
    match: str = param(FieldKind.TEXT, MATCH_HELP, default="")
    pass_at_calls: bool = param(FieldKind.FLAG, "no default: every call passes it", default=False)
    allow_reordering: bool = param(FieldKind.FLAG, "even if it changes when the expression is evaluated", default=False)

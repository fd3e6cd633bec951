"""``extract-function``: whole statements (or, in Python, one expression, which the function
returns) into a new function, or a method when they use ``self``/``cls``; its policy is
engine.refactor.policy.extract_function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param
from engine.refactor.operations.extract_variable import LINES_HELP, MATCH_HELP, SPAN_HELP


@dataclass(frozen=True)
class ExtractFunction(RefactorOperation):
    name: ClassVar[str] = "extract-function"
    summary: ClassVar[str] = "extract statements or an expression into a function (a method if they use self/cls; TS/Go: server's)"
    mcp_tool: ClassVar[str] = "extract_function"
    lsp_command: ClassVar[str] = "graft.extractFunction"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = False

    address: str = param(FieldKind.SPAN, SPAN_HELP)
    new_name: str = param(FieldKind.NAME, "its name")
    lines: str = param(FieldKind.TEXT, LINES_HELP, default="")
    match: str = param(FieldKind.TEXT, MATCH_HELP, default="")

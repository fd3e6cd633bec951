"""``insert-before`` / ``insert-after``: code beside a symbol; its policy is
engine.refactor.policy.insert."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import FieldKind, RefactorOperation, param


@dataclass(frozen=True)
class _Insert(RefactorOperation):
    """The two inserts: the same fields, one side of the symbol each. Not registered itself
    (it has no name); the registry takes the subclasses below."""

    before: ClassVar[bool]
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = False
    span_only: ClassVar[bool] = True

    address: str = param(FieldKind.ADDRESS, "the symbol to insert next to")
    text: str = param(FieldKind.CODE, "the code to insert (re-indented to fit)", cli_flag="--text-file")


@dataclass(frozen=True)
class InsertBefore(_Insert):
    name: ClassVar[str] = "insert-before"
    summary: ClassVar[str] = "insert code before a symbol (above its doc comment), with the language's blank lines"
    mcp_tool: ClassVar[str] = "insert_before_symbol"
    lsp_command: ClassVar[str] = "graft.insertBefore"
    before: ClassVar[bool] = True


@dataclass(frozen=True)
class InsertAfter(_Insert):
    name: ClassVar[str] = "insert-after"
    summary: ClassVar[str] = "insert code after a symbol, with the language's blank lines"
    mcp_tool: ClassVar[str] = "insert_after_symbol"
    lsp_command: ClassVar[str] = "graft.insertAfter"
    before: ClassVar[bool] = False

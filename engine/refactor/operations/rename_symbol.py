"""``rename``: a symbol and every use of it, or the parameter or local at FILE:LINE:COL.

Its policy (which declarations go together, which names it must not take, the Python passes
a server cannot see) is engine.refactor.policy.rename.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import STRICT_HELP, CodeAction, FieldKind, RefactorOperation, param


@dataclass(frozen=True)
class Rename(RefactorOperation):
    name: ClassVar[str] = "rename"
    summary: ClassVar[str] = "rename a symbol across the workspace (name path, or FILE:LINE:COL for parameters and locals)"
    mcp_tool: ClassVar[str] = "rename_symbol"
    lsp_command: ClassVar[str] = "graft.rename"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = True
    reads_graph: ClassVar[bool] = True
    code_action: ClassVar[CodeAction | None] = CodeAction("Rename across workspace (graft)", "refactor")

    address: str = param(FieldKind.ADDRESS, "a name path, or FILE:LINE:COL for parameters and locals")
    new_name: str = param(FieldKind.NAME, "the new name", metavar="NEW_NAME")
    text: bool = param(FieldKind.FLAG, "without a language server (outside Python), rename identifier-bounded "
                                       "occurrences (low confidence)", default=False)
    mirrors: bool = param(FieldKind.FLAG, "also rename mirror modules' own re-bindings (curried, compat twins); off leaves "
                                          "them, each named in a warning", default=True)
    structural: bool = param(FieldKind.FLAG, "TypeScript: also rename it where a class or object fits an interface "
                                             "without `implements`, either way (named in a note); off refuses, listing them",
                             default=True)
    include_docs: bool = param(FieldKind.FLAG, "also edit the .md/.rst code mentions it lists (not prose)", default=False)
    strict: bool = param(FieldKind.FLAG, STRICT_HELP, default=False)

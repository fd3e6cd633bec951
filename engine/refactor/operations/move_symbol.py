"""``move``: a top-level function, class or constant to another module, importers rewritten.

Its policy (stub twins carried along, the import check, other languages' moves) is
engine.refactor.policy.move.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from engine.refactor.operations.base import STRICT_HELP, CodeAction, FieldKind, RefactorOperation, param


IMPORT_CHECK_HELP = ("import the touched modules with the plan applied (in a scratch copy under .graft) and refuse "
                     "a plan that breaks an import")


@dataclass(frozen=True)
class Move(RefactorOperation):
    name: ClassVar[str] = "move"
    summary: ClassVar[str] = "move a top-level function, class or constant to another module; importers are rewritten"
    mcp_tool: ClassVar[str] = "move_symbol"
    lsp_command: ClassVar[str] = "graft.move"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = True
    reads_graph: ClassVar[bool] = True
    code_action: ClassVar[CodeAction | None] = CodeAction("Move to module…", "refactor.move", top_level_only=True)

    address: str = param(FieldKind.ADDRESS, "a top-level function, class or constant")
    dest: str = param(FieldKind.PATH, "the module to move it to (workspace path)", metavar="DEST_FILE")
    create: bool = param(FieldKind.FLAG, "create the destination if it does not exist", default=False)
    shim: bool = param(FieldKind.FLAG, "leave `from DEST import NAME` in the source for backward compatibility (Python)",
                       default=False)
    no_reexport: bool = param(
        FieldKind.FLAG, "a public name (in the source's __all__, or defined in a package __init__) is re-exported from the "
        "source by default, so that `from SOURCE import NAME` keeps working; this drops the re-export (Python)",
        default=False)
    import_check: bool = param(FieldKind.FLAG, IMPORT_CHECK_HELP, default=True)
    strict: bool = param(FieldKind.FLAG, STRICT_HELP, default=False)

"""``move``: a top-level function, class or constant to another module, importers rewritten.

Python moves (engine.refactor.move) carry the symbol's stub declaration along and are
import-checked: the source and destination are imported with the plan applied (in a scratch
copy) and a move that breaks an import is refused. Other languages move through
engine.refactor.move_other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from engine.edits.model import WorkspaceEdit, paths_of
from engine.errors import NotTopLevel, UsageError
from engine.languages import SymbolMoves, profile_of
from engine.names import parse_address
from engine.refactor import move, move_other
from engine.refactor.import_check import check_imports
from engine.refactor.operations.base import CodeAction, FieldKind, RefactorOperation, PlanContext, param
from engine.refactor.plan import RefactorPlan
from engine.symbols import Symbol

IMPORT_CHECK_HELP = ("import the touched modules with the plan applied (in a scratch copy under .graft) before accepting "
                     "it, and refuse a plan that breaks an import; off skips that")


@dataclass(frozen=True)
class Move(RefactorOperation):
    name: ClassVar[str] = "move"
    summary: ClassVar[str] = "move a top-level function, class or constant to another module; importers are rewritten"
    mcp_tool: ClassVar[str] = "move_symbol"
    lsp_command: ClassVar[str] = "graft.move"
    code_action: ClassVar[CodeAction | None] = CodeAction("Move to module…", "refactor.move", top_level_only=True)

    address: str = param(FieldKind.ADDRESS, "a top-level function, class or constant")
    dest: str = param(FieldKind.PATH, "the module to move it to (workspace path)", metavar="DEST_FILE")
    create: bool = param(FieldKind.FLAG, "create the destination if it does not exist", default=False)
    shim: bool = param(FieldKind.FLAG, "leave `from DEST import NAME` in the source for backward compatibility (Python)",
                       default=False)
    import_check: bool = param(FieldKind.FLAG, IMPORT_CHECK_HELP, default=True)

    def plan(self, context: PlanContext) -> RefactorPlan:
        symbol = context.resolve_binding(parse_address(self.address))[-1]  # an overload stack moves whole
        if len(symbol.path) != 1:
            raise NotTopLevel(f"{symbol.address} is not top-level; only top-level functions, classes and constants can move")
        kind = profile_of(symbol.file)
        if kind is None or kind.symbol_moves is not SymbolMoves.PYTHON:
            if self.shim:
                raise UsageError("a shim is for Python moves")
            return move_other.plan_other_move(context.workspace, context.services, context.use_server, symbol, self.dest,
                                              create=self.create)
        stub, twins = _stub_twins(context, symbol)
        request = move.MoveRequest(symbol, self.dest, create=self.create, shim=self.shim, stub_moved=bool(twins))
        plan = move.plan_move(context.workspace, context.graph(), request)
        dest_path = context.workspace.resolve(self.dest)[0]
        if twins:
            plan = _with_stub_moved(context, plan, twins[-1], stub, dest_path[:-3] + ".pyi")
        if not self.import_check:
            return plan
        return import_checked(context, plan, [symbol.file, dest_path], f"moving {symbol.address} to {self.dest}")


def import_checked(context: PlanContext, plan: RefactorPlan, paths: list[str], what: str) -> RefactorPlan:
    """The plan, refused when importing ``paths`` with it applied fails where it did not before."""
    checked = check_imports(context.workspace, context.graph(), context.tools, plan.edit, paths, what)
    return replace(plan, warnings=[*plan.warnings, checked.note]) if checked.note else plan


def _stub_twins(context: PlanContext, symbol: Symbol) -> tuple[str, list[Symbol]]:
    """The source's ``.pyi`` stub and its top-level declarations of the symbol's name (an overload stack: several)."""
    stub = symbol.file[:-3] + ".pyi"
    if not symbol.file.endswith(".py") or not (context.workspace.root / stub).is_file():
        return stub, []
    return stub, [s for s in context.outline(stub).symbols if s.name == symbol.name]


def _with_stub_moved(context: PlanContext, plan: RefactorPlan, twin: Symbol, stub: str, dest_stub: str) -> RefactorPlan:
    """The move plus the stub declaration's own move into the destination's stub (made when
    missing, since the source has one). Importers are the main plan's (it rewrote the .pyi
    ones with the .py ones); only the two stubs come from this one."""
    stub_plan = move.plan_move(context.workspace, context.graph(), move.MoveRequest(twin, dest_stub, create=True))
    own = [op for op in stub_plan.edit.operations if set(paths_of(op)) <= {stub, dest_stub}]
    return replace(
        plan, edit=WorkspaceEdit((*plan.edit.operations, *own), plan.edit.annotations),
        warnings=[*plan.warnings, f"its stub declaration moved too: {stub} -> {dest_stub}", *stub_plan.warnings],
    )

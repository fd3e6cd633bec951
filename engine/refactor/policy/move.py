"""``move``: a top-level function, class or constant to another module, importers rewritten.

Python moves (engine.refactor.python.move) carry the symbol's stub declaration along and are
import-checked: the source and destination are imported with the plan applied (in a scratch
copy) and a move that breaks an import is refused. Other languages move through
engine.refactor.move_other.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.edits.model import FileChange, WorkspaceEdit, paths_of
from engine.errors import NotTopLevel, UsageError
from engine.languages import SymbolMoves, profile_of
from engine.names import parse_address
from engine.refactor import language_passes, move_other, skipped_files
from engine.refactor.python import move
from engine.refactor.plan import RefactorPlan
from engine.refactor.policy.import_checks import import_checked
from engine.refactor.typescript.visibility import files_to_show
from engine.symbols import Symbol

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.move_symbol import Move


def plan(operation: Move, context: PlanContext) -> RefactorPlan:
    symbol = context.resolve_binding(parse_address(operation.address))[-1]  # an overload stack moves whole
    if len(symbol.path) != 1:
        raise NotTopLevel(f"{symbol.address} is not top-level; only top-level functions, classes and constants can move")
    made = skipped_files.checked(context, symbol.file, [symbol.name], f"moving {symbol.address} to {operation.dest}",
                                 operation.strict, lambda: _planned(operation, context, symbol))
    return language_passes.finished(made, context, operation, symbol.file)


def _planned(operation: Move, context: PlanContext, symbol: Symbol) -> RefactorPlan:
    kind = profile_of(symbol.file)
    if kind is None or kind.symbol_moves is not SymbolMoves.PYTHON:
        if operation.shim or operation.no_reexport:
            raise UsageError(f"{'a shim' if operation.shim else 'no_reexport'} is for Python moves")
        return move_other.plan_other_move(context.workspace, context.services, context.use_server, symbol, operation.dest,
                                          create=operation.create,
                                          importers=files_to_show(context, [symbol.name], context.graph().importing_files))
    stub, twins = _stub_twins(context, symbol)
    request = move.MoveRequest(symbol, operation.dest, create=operation.create, shim=operation.shim,
                              reexport=not operation.no_reexport, stub_moved=bool(twins))
    planned = move.plan_move(context.workspace, context.graph(), request)
    dest_path = context.workspace.resolve(operation.dest)[0]
    planned = _with_entry_points(context, planned, symbol, dest_path)
    if twins:
        planned = _with_stub_moved(context, planned, twins[-1], stub, dest_path[:-3] + ".pyi", reexport=not operation.no_reexport)
    if not operation.import_check:
        return planned
    return import_checked(context, planned, [symbol.file, dest_path], f"moving {symbol.address} to {operation.dest}")


def _with_entry_points(context: PlanContext, planned: RefactorPlan, symbol: Symbol, dest_path: str) -> RefactorPlan:
    """Entry points naming the symbol in its module (``tool = "pkg.cli:main"``) name the
    destination module after the move: the installed command imports its target by that path.
    One naming it through a package that re-exports it keeps working (its import is rewritten)."""
    from engine.refactor.python.module_mentions import entry_point_edits, entry_point_references

    project = context.graph().project
    new_module = project.module_name_for(dest_path)
    naming = [reference for reference in entry_point_references(context.workspace)
              if project.module_file(reference.module) == symbol.file]
    if new_module is None or not naming:
        return planned
    changes, places = entry_point_edits(context.workspace, naming, (symbol.name,), None, new_module)
    if not changes:
        return planned
    # A packaging file the move already edits gets one change with both sets of edits.
    touched = {change.path: change for change in changes}
    operations = [FileChange(op.path, tuple(sorted((*op.edits, *touched.pop(op.path).edits), key=lambda e: e.range.start)),
                             op.expected_sha256) if isinstance(op, FileChange) and op.path in touched else op
                  for op in planned.edit.operations]
    return replace(planned, edit=WorkspaceEdit((*operations, *touched.values()), planned.edit.annotations),
                   warnings=[*planned.warnings, f"entry points now name {new_module}: {', '.join(places)}"])


def _stub_twins(context: PlanContext, symbol: Symbol) -> tuple[str, list[Symbol]]:
    """The source's ``.pyi`` stub and its top-level declarations of the symbol's name (an overload stack: several)."""
    stub = symbol.file[:-3] + ".pyi"
    if not symbol.file.endswith(".py") or not (context.workspace.root / stub).is_file():
        return stub, []
    return stub, [s for s in context.outline(stub).symbols if s.name == symbol.name]


def _with_stub_moved(
    context: PlanContext, planned: RefactorPlan, twin: Symbol, stub: str, dest_stub: str, *, reexport: bool,
) -> RefactorPlan:
    """The move plus the stub declaration's own move into the destination's stub (made when
    missing, since the source has one). Importers are the main plan's (it rewrote the .pyi
    ones with the .py ones); only the two stubs come from this one."""
    stub_plan = move.plan_move(context.workspace, context.graph(), move.MoveRequest(twin, dest_stub, create=True, reexport=reexport))
    own = [op for op in stub_plan.edit.operations if set(paths_of(op)) <= {stub, dest_stub}]
    return replace(
        planned, edit=WorkspaceEdit((*planned.edit.operations, *own), planned.edit.annotations),
        warnings=[*planned.warnings, f"its stub declaration moved too: {stub} -> {dest_stub}", *stub_plan.warnings],
    )

"""``rename-file``: move a file and update its importers (the server's willRenameFiles, else
LibCST for Python); the moved module and the Python files updated are import-checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.refactor import language_passes, rename_file, skipped_files
from engine.refactor.plan import RefactorPlan
from engine.refactor.policy.import_checks import import_checked
from engine.refactor.typescript.visibility import files_to_show

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.move_file import FileRename


def plan(operation: FileRename, context: PlanContext) -> RefactorPlan:
    # Importers name the module by its file's stem (``import pkg.core``, ``from "./core"``).
    made = skipped_files.checked(context, operation.old, [stem_of(operation.old)], f"renaming {operation.old} to {operation.new}",
                                 operation.strict, lambda: _planned(operation, context))
    return language_passes.finished(made, context, operation, operation.old)


def stem_of(path: str) -> str:
    return path.rstrip("/").rpartition("/")[2].partition(".")[0]


def _planned(operation: FileRename, context: PlanContext) -> RefactorPlan:
    planned = rename_file.plan_rename_file(context.workspace, context.graph(), context.services, context.use_server,
                                           operation.old, operation.new,
                                           importers=files_to_show(context, [stem_of(operation.old)], context.graph().importing_files))
    if not operation.import_check or not planned.edit.touched or not operation.old.endswith(".py"):
        return planned
    old_path = context.workspace.resolve(operation.old)[0]
    return import_checked(context, planned, [p for p in planned.edit.touched if p != old_path],
                          f"renaming {operation.old} to {operation.new}")

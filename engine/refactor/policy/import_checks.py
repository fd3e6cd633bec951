"""The import check that Python moves and file renames share: a plan is refused when importing
the touched modules with it applied (in a scratch copy) fails where it did not before."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.refactor.python.import_check import check_imports
from engine.refactor.plan import RefactorPlan

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext


def import_checked(context: PlanContext, plan: RefactorPlan, paths: list[str], what: str) -> RefactorPlan:
    """The plan, refused when importing ``paths`` with it applied fails where it did not before."""
    checked = check_imports(context.workspace, context.graph(), context.tools, plan.edit, paths, what)
    return replace(plan, warnings=[*plan.warnings, checked.note]) if checked.note else plan

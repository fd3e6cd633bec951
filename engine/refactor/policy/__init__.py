"""How each operation of the registry (engine.refactor.operations) plans: one module per
operation, holding its ``plan(operation, context)`` (which declarations go together, stub
twins, import checks, what refuses) and the passes it calls.

This package joins the two: an operation is a value that imports no policy, and
:func:`plan` finds the operation's policy module by its name in :data:`POLICIES`, importing
only that one when the operation plans. The registry is imported by ``graft --help`` and by
every front end's start, and the policies pull in LibCST, the graph (networkx), jedi and
tree-sitter: a rename's plan imports no move policy, nor LibCST through it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext, RefactorOperation
    from engine.refactor.plan import RefactorPlan

POLICIES: dict[str, str] = {
    "rename": "engine.refactor.policy.rename",
    "move": "engine.refactor.policy.move",
    "rename-file": "engine.refactor.policy.rename_file",
    "delete-file": "engine.refactor.policy.delete_file",
    "replace": "engine.refactor.policy.replace",
    "insert-before": "engine.refactor.policy.insert",
    "insert-after": "engine.refactor.policy.insert",
    "delete": "engine.refactor.policy.delete",
    "extract-variable": "engine.refactor.policy.extract_variable",
    "extract-function": "engine.refactor.policy.extract_function",
    "inline": "engine.refactor.policy.inline",
    "introduce-parameter": "engine.refactor.policy.introduce_parameter",
}
"""An operation's name (engine.refactor.operations.OPERATIONS) → the module whose ``plan``
plans it. A new operation adds its line here (tests/test_operation_parity.py checks that every
operation has one)."""


def plan(operation: RefactorOperation, context: PlanContext) -> RefactorPlan:
    """The edit ``operation`` would make, planned by its policy; nothing is written."""
    module = POLICIES.get(operation.name)
    if module is None:
        raise TypeError(f"the operation {operation.name} has no policy: add its module to engine.refactor.policy.POLICIES")
    planned: RefactorPlan = import_module(module).plan(operation, context)
    return planned

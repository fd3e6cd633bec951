"""Imports an edit leaves unused: a module-level import that the module read before the edit
and no longer reads after it (it was used only by the code the edit removed) goes.

An import nothing read before the edit is left alone (a re-export, an import for its side
effects), as are ``__all__`` names, ``X as X`` re-exports, star and ``__future__`` imports.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace

import libcst as cst
from libcst.metadata import GlobalScope, ImportAssignment, Scope

from engine.edits.materialize import materialize
from engine.edits.model import FileChange, WorkspaceEdit
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.cst_edits import all_names, alias_as, bound_name, dotted, file_change, pruned_import_line
from engine.refactor.python.span_nodes import read_tree
from engine.refactor.python.tree_metadata import scopes_of
from engine.workspace import SourceFile, Workspace


def pruned(workspace: Workspace, planned: RefactorPlan, source: SourceFile) -> RefactorPlan:
    """``planned`` (an edit of ``source``) also without the imports it left unused, named in a warning."""
    if not source.path.endswith((".py", ".pyi")):
        return planned
    states = [state for state in materialize(planned.edit, workspace) if state.path == source.path]
    if len(states) != 1 or states[0].after is None:
        return planned
    after = states[0].after.decode("utf-8")
    try:
        kept = read_tree(source)  # the plan read it: its scopes are resolved already
        cleaned, dropped = without_imports_left_unused(_import_reads(kept.module, kept.scopes), after)
    except cst.ParserSyntaxError:
        return replace(planned, warnings=[*planned.warnings, f"{source.path} could not be parsed after the edit: imports the "
                                          "removed code alone used (if any) are left; check them"])
    if not dropped:
        return planned
    change = file_change(source, cleaned)
    others = tuple(op for op in planned.edit.operations if not (isinstance(op, FileChange) and op.path == source.path))
    operations = (*others, *([change] if change is not None else []))
    return replace(planned, edit=WorkspaceEdit(operations, planned.edit.annotations),
                   warnings=[*planned.warnings, f"imports only the removed code used are removed from {source.path}: {', '.join(sorted(dropped))}"])


def without_imports_left_unused(used_before: Counter[str], after: str) -> tuple[str, set[str]]:
    """``after`` without the module-level imports read before the edit (``used_before``,
    _import_reads's count) and not in ``after``; and their names."""
    tree = cst.parse_module(after)
    dropped: set[str] = set()
    # Twice over: a `TYPE_CHECKING` block emptied by the first pass leaves its own import unread.
    for _ in range(2):
        exported = set(all_names(tree) or [])
        reads = _import_reads(tree)
        gone = {name for name, count in reads.items() if count == 0 and used_before.get(name, 0) > 0 and name not in exported}
        if not gone:
            break
        dropped |= gone
        first = tree.body[0] if tree.body else None
        tree = tree.visit(_ImportRemover(gone))
        if tree.body and first is not None and tree.body[0] is not first:
            # What was below the removed first import is first now: no blank lines above it.
            lines = list(tree.body[0].leading_lines)
            while lines and lines[0].comment is None:
                lines.pop(0)
            tree = tree.with_changes(body=[tree.body[0].with_changes(leading_lines=lines), *tree.body[1:]])
    return tree.code, dropped


def _import_reads(tree: cst.Module, scopes: Mapping[cst.CSTNode, Scope | None] | None = None) -> Counter[str]:
    """Module-level import bindings (top level, or in a top-level ``if``) → how often they are read
    (``scopes``: the tree's, when resolved already)."""
    scope = (scopes if scopes is not None else scopes_of(tree)).get(tree)
    reads: Counter[str] = Counter()
    if not isinstance(scope, GlobalScope):
        return reads
    for assignment in scope.assignments:
        if isinstance(assignment, ImportAssignment):
            name = assignment.name.split(".")[0]  # `import a.b` binds `a` (LibCST names it `a.b`)
            node = assignment.node
            if isinstance(node, (cst.Import, cst.ImportFrom)) and _reexported(node, name):
                continue  # kept whatever reads it
            reads[name] += len(assignment.references)
    return reads


class _ImportRemover(cst.CSTTransformer):
    """Removes the aliases binding ``gone`` from module-level imports (and a top-level ``if``
    block, ``TYPE_CHECKING``'s, left with nothing in it)."""

    def __init__(self, gone: set[str]) -> None:
        self.gone = gone
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Try(self, node: cst.Try) -> bool:
        return False  # an import under `try` is a fallback: emptying a block there breaks the module

    def visit_With(self, node: cst.With) -> bool:
        return False

    def visit_For(self, node: cst.For) -> bool:
        return False

    def visit_While(self, node: cst.While) -> bool:
        return False

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        drops = [None if isinstance(small, (cst.Import, cst.ImportFrom)) and _kept_always(small) else self.gone
                 for small in updated.body]
        return pruned_import_line(updated, drops)

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If | cst.RemovalSentinel:
        body = updated.body
        if isinstance(body, cst.IndentedBlock) and not body.body:
            # Emptied: it goes, unless an `else` keeps it (then its imports stay, not an empty body).
            return cst.RemovalSentinel.REMOVE if updated.orelse is None else original
        return updated


def _kept_always(statement: cst.Import | cst.ImportFrom) -> bool:
    return isinstance(statement, cst.ImportFrom) and (
        isinstance(statement.names, cst.ImportStar) or dotted(statement.module) == "__future__")


def _reexported(statement: cst.Import | cst.ImportFrom, name: str) -> bool:
    """``import X as X`` / ``from m import X as X``: the explicit re-export form."""
    names = statement.names if not isinstance(statement.names, cst.ImportStar) else ()
    return any(bound_name(a) == name and alias_as(a) == dotted(a.name) for a in names)

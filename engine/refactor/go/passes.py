"""Go's passes over a refactoring's plan (the module engine.refactor.language_passes calls)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.errors import GraftError, Refused, ServiceUnavailable
from engine.names import SymbolAddress, parse_address
from engine.languages.go_builds import default_build
from engine.refactor.corpus import Corpus
from engine.refactor.language_passes import replaced_name
from engine.refactor.go import (assembly, build_constraints, extract_checks, foreign_uses, gofmt, implementations, other_builds,
                               qualified_uses, rename_checks)
from engine.refactor.operations.extract_function import ExtractFunction
from engine.refactor.operations.move_file import FileRename
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.plan import RefactorPlan
from engine.refactor.selection import select
from engine.symbols import Source, SymbolKind

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext, RefactorOperation


def finish(plan: RefactorPlan, context: PlanContext, operation: RefactorOperation) -> RefactorPlan:
    if isinstance(operation, FileRename):
        warning = build_constraints.checked_file_rename(operation.old, operation.new, operation.build_change)
        plan = replace(plan, warnings=[*plan.warnings, warning]) if warning else plan
    if isinstance(operation, Rename) and plan.source is Source.LSP:
        plan = _server_rename_checked(plan, context, operation)
    if isinstance(operation, ExtractFunction) and plan.source is Source.LSP:
        span = select(context, operation.address, operation.lines, operation.match)
        extract_checks.refuse_copied_values(plan, context, span.text, operation.new_name)
    return gofmt.keep_gofmt(plan, context.workspace, context.tools)


def server_refusal(error: ServiceUnavailable, old_name: str, new_name: str) -> Refused | None:
    return rename_checks.server_refusal(error, old_name, new_name)


def _server_rename_checked(plan: RefactorPlan, context: PlanContext, operation: Rename) -> RefactorPlan:
    """gopls's rename, checked for what it cannot see: uses of another module's declaration it
    renamed, implementations of a renamed interface method it did not (types that meet the
    interface only at run time), uses in assembly files it cannot rename, and uses in files
    outside its build configuration it did not."""
    old_name = replaced_name(plan, context) or "the name"
    if context.services is not None and _may_rename_through_interfaces(context, operation):
        unchecked = foreign_uses.check(plan.edit, context.workspace, context.services, old_name, operation.new_name)
        plan = replace(plan, warnings=[*plan.warnings, *unchecked]) if unchecked else plan
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())
    implementations.check(plan.edit, corpus, old_name, operation.new_name)
    assembly.check(corpus, {path.rpartition("/")[0] for path in plan.edit.touched}, old_name, operation.new_name)
    touched = set(plan.edit.touched)
    # An unexported name is seen by its own package only: the folders the rename edited.
    folders = None if old_name[:1].isupper() else {path.rpartition("/")[0] for path in touched}
    build = default_build()
    uses = [use for use in other_builds.uses_outside(corpus, old_name, folders, build) if use.path not in touched]
    address = parse_address(operation.address)
    if uses and isinstance(address, SymbolAddress) and address.file is not None:  # a name path: its file declares it
        plan, uses = qualified_uses.renamed(plan, corpus, uses, address.file, old_name, operation.new_name)
    return other_builds.checked(plan, uses, old_name, operation.new_name, build, operation.strict)


def _may_rename_through_interfaces(context: PlanContext, operation: Rename) -> bool:
    """Whether the renamed declaration is a member of a type (a method, a field), the only kind
    gopls renames through the interfaces it meets. A package-level declaration's selectors are all
    ``pkg.Name``, leading to the declaration itself: asking the server where each leads (one request
    per use) made most of a warm plan's time. Unresolved here, it is treated as a member."""
    try:
        symbol = context.resolve(parse_address(operation.address))
    except GraftError:
        return True
    return len(symbol.path) > 1 or symbol.kind in (SymbolKind.METHOD, SymbolKind.FIELD)

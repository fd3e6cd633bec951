"""TypeScript's and JavaScript's passes over a refactoring's plan (the module
engine.refactor.language_passes calls): a rename that would make a name clash is refused, and a
move's new import specifiers follow the project's style."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from engine.edits.model import CreateFile, FileChange
from engine.errors import Refused, ServiceUnavailable
from engine.names import PositionAddress, parse_address
from engine.refactor.move_other import MoveUnavailable
from engine.refactor.operations.move_symbol import Move
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.plan import RefactorPlan
from engine.refactor.language_passes import replaced_name
from engine.refactor.rename import NameClash
from engine.refactor.typescript import met_interfaces, structural_renames
from engine.refactor.typescript.barrels import stale_re_exports
from engine.refactor.typescript.clashes import ParsedFiles, rename_clashes
from engine.refactor.typescript.shorthands import destructured_local_reaches, keep_shorthand_keys
from engine.refactor.typescript.self_imports import with_self_imports_removed
from engine.refactor.typescript.specifiers import aliased_specifiers, relative_specifiers
from engine.refactor.corpus import Corpus
from engine.refactor.typescript.visibility import LANGUAGE_IDS, refuse_unseen_mentions, unseen_mentions
from engine.symbols import Source

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext, RefactorOperation


class PreparedRename:
    """The passes of one rename, which read the files that hold the old name (and the tables of
    their exports) while the server computes: its answer edits those files."""

    def __init__(self, context: PlanContext, old_name: str, new_name: str) -> None:
        self.context, self.old_name, self.new_name = context, old_name, new_name
        self.parsed = ParsedFiles(context.workspace)
        self.unseen: list[tuple[str, str]] | None = None
        """:func:`unseen_mentions` of the old name, once worked out."""

    def meanwhile(self, answered: Callable[[], bool]) -> None:
        context = self.context
        corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())
        for language in LANGUAGE_IDS:
            for path in corpus.mentioning(self.old_name, language):
                if answered():
                    return
                self._read_ahead(path)
        if not answered():
            self.unseen = unseen_mentions(context, [self.old_name])

    def _read_ahead(self, path: str) -> None:
        """What the passes ask of a file the answer will edit that the answer does not change:
        its table, whether it holds the new name, where the old name's words may declare a member
        (kept by content: a name renamed for the first time is looked for here, not after the answer)."""
        self.parsed.read_ahead(path)
        self.parsed.holds(path, self.new_name)
        source = self.parsed.source(path)
        if source is not None:
            met_interfaces.read_ahead(source, self.old_name)

    def finish(self, plan: RefactorPlan, context: PlanContext, operation: RefactorOperation) -> RefactorPlan:
        return finish(plan, context, operation, self.parsed, {self.old_name: self.unseen} if self.unseen is not None else {})


def prepare_rename(context: PlanContext, old_name: str, new_name: str) -> PreparedRename:
    """The passes of a rename, begun before the server's answer (engine.refactor.language_passes)."""
    return PreparedRename(context, old_name, new_name)


def finish(plan: RefactorPlan, context: PlanContext, operation: RefactorOperation,
           parsed: ParsedFiles | None = None, unseen: dict[str, list[tuple[str, str]]] | None = None) -> RefactorPlan:
    """``parsed``: the files read already, and ``unseen``: the unseen mentions of an old name
    worked out already (a rename's, while the server computed)."""
    if isinstance(operation, Move) and plan.source is Source.LSP:
        _refuse_stale_re_exports(plan, context, operation)
        plan = _without_the_destinations_own_import(plan, context, operation)
        created = {op.path for op in plan.edit.operations if isinstance(op, CreateFile)}
        edit, notes = relative_specifiers(context.workspace.root, plan.edit, created)
        edit, aliased = aliased_specifiers(context.workspace.root, edit, created)
        notes += aliased
        return replace(plan, edit=edit, warnings=[*plan.warnings, *notes]) if notes else plan
    if not isinstance(operation, Rename):
        return plan
    old_name = replaced_name(plan, context)
    if old_name is None:
        return plan
    parsed = parsed or ParsedFiles(context.workspace)  # each file parsed once for every pass
    # First: the members it adds go through the checks below with the rest.
    plan = structural_renames.follow(plan, context, old_name, operation.new_name, parsed, structural=operation.structural)
    clashes = rename_clashes(context.workspace, plan.edit, old_name, operation.new_name, context.graph().importing_files, parsed)
    if clashes:
        listing = "\n  ".join(clash.message() for clash in clashes)
        raise NameClash(f"renaming {old_name} to {operation.new_name} would clash:\n  {listing}\n"
                        "nothing was changed; choose another name, or rename the other binding first")
    edited = {op.path for op in plan.edit.operations if isinstance(op, FileChange)}
    refuse_unseen_mentions(context, [old_name], edited, f"renaming {old_name} to {operation.new_name}",
                           (unseen or {}).get(old_name))
    _refuse_a_property_renamed_through_a_local(plan, context, operation, old_name)
    edit, notes = keep_shorthand_keys(context.workspace, plan.edit, old_name, operation.new_name, parsed)
    return replace(plan, edit=edit, warnings=[*plan.warnings, *notes]) if notes else plan


def _refuse_stale_re_exports(plan: RefactorPlan, context: PlanContext, operation: Move) -> None:
    symbol = context.resolve_binding(parse_address(operation.address))[-1]
    dest = context.workspace.resolve(operation.dest)[0]
    stale = stale_re_exports(context.workspace, plan.edit, symbol.file, dest, symbol.name, context.graph().importing_files)
    if stale:
        listing = "\n  ".join(stale)
        raise MoveUnavailable(f"moving {symbol.name} to {dest} would leave re-exports of it pointing at {symbol.file}, which "
                              f"the server does not update (tsc: TS2305, or the name silently gone from a barrel):\n  {listing}\n"
                              f"nothing was changed: codegraft does not point those re-exports at {dest} yet; move it by hand and "
                              "update them")


def _without_the_destinations_own_import(plan: RefactorPlan, context: PlanContext, operation: Move) -> RefactorPlan:
    symbol = context.resolve_binding(parse_address(operation.address))[-1]
    dest = context.workspace.resolve(operation.dest)[0]
    if not (context.workspace.root / dest).is_file():
        return plan
    edit, notes, conflicts = with_self_imports_removed(plan.edit, dest, context.workspace.read(dest).text, symbol.name)
    if conflicts:
        raise MoveUnavailable(f"moving {symbol.name} to {dest} would leave {dest} importing the name it now declares "
                              f"(tsc: TS2440):\n  " + "\n  ".join(conflicts) + "\nnothing was changed; remove that import "
                              "first, then move")
    return replace(plan, edit=edit, warnings=[*plan.warnings, *notes]) if notes else plan


class RenameReachesProperty(Refused):
    code = "rename_reaches_property"


def _refuse_a_property_renamed_through_a_local(plan: RefactorPlan, context: PlanContext, operation: Rename, old: str) -> None:
    address = parse_address(operation.address)
    if not isinstance(address, PositionAddress) or address.column is None:
        return
    beyond = destructured_local_reaches(context.workspace, plan.edit, address.file, address.line, address.column)
    if beyond:
        raise RenameReachesProperty(
            f"{old} at {operation.address} is a local destructured from a property ({{ {old} }} = …): the server renames "
            f"the property itself, everywhere ({', '.join(beyond[:8])}{' …' if len(beyond) > 8 else ''}); nothing was "
            f"changed. Write the destructuring as {{ {old}: {operation.new_name} }} to rename the local alone, or rename "
            "the property by its name path")


def server_refusal(error: ServiceUnavailable, old_name: str, new_name: str) -> Refused | None:
    return None  # tsserver renames without checking: the checks above are codegraft's

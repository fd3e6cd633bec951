"""An interface member's rename followed to the classes that satisfy the interface structurally.

Neither TypeScript server (tsserver, TypeScript 7's ``tsc --lsp``) renames, with an interface's
member, the member of a class (or of a module's untyped object constant) that fits the interface
without ``implements``: tsc then breaks wherever an instance meets the interface. The plan finds
them (engine.refactor.typescript.implementers: the interface's other required members, and a
file that names both), asks the server to rename each such member at its declaration to the same
new name, and merges those renames into the plan: the same edit twice is kept once, two different
edits of the same text refuse. A followed member's rename may reach another interface (one the
class declares it implements): its structural implementers are followed in turn, a few rounds at
most. What cannot be followed refuses the plan (``implementations_left_behind``), saying why:
- a fit that says little: the interface has no other required member (any class with a member of
  that name would fit), or it extends other types, whose members are not compared;
- a member the class gets from a base that does not fit the interface itself (renaming the
  base's member would change every class below it);
- an object's shorthand key (``{ area }``: the server would rename the variable it reads);
- a member the server will not rename, or whose rename overlaps the plan's other edits.
The other way round, a class member's rename (or an object constant's) whose class fits an
interface without ``implements`` (engine.refactor.typescript.met_interfaces; a class below it that
inherits the member counts too) renames the interface's member through the server as well, as both
servers do for an ``implements`` class; the interface's other fits then follow as above. A fit that
says little, or a rename the server refuses there, refuses the plan; an interface declared outside
the workspace, which cannot be renamed, refuses it too (engine.refactor.typescript.outside_interfaces).
Which members were followed is said in a note, and the plan is at most ``medium``: fitting an
interface by structure is a judgement (a class may have the same members by chance).
``--no-structural`` (``structural=false``) refuses such a rename instead, listing them.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.edits.model import FileChange, OverlappingEdits, WorkspaceEdit
from engine.edits.verification import capped
from engine.errors import GraftError
from engine.languages import language_of
from engine.positions import Position
from engine.refactor.corpus import Corpus
from engine.refactor.leftovers import Leftovers
from engine.refactor.pass_protocol import merge
from engine.refactor.plan import RefactorPlan
from engine.refactor.typescript import implementers, met_interfaces, outside_interfaces
from engine.refactor.typescript.clashes import ParsedFiles
from engine.symbols import Confidence

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_ROUNDS = 4
"""How many times a followed rename may reach a further interface whose implementers follow in turn."""


def follow(plan: RefactorPlan, context: PlanContext, old: str, new: str, parsed: ParsedFiles, *,
           structural: bool) -> RefactorPlan:
    """``plan`` with the structural implementers' members renamed too, or refused (see the module's text)."""
    edit, followed, interfaces = plan.edit, list[implementers.Fit](), list[implementers.RenamedInterface]()
    raised: list[met_interfaces.Met] = []
    starts = implementers.edit_starts(edit)  # the server's edit's: each pass below reads them until a rename is merged
    members = met_interfaces.renamed_members(edit, old, parsed, starts)
    outside = (outside_interfaces.check(context, members, old, new, parsed, met_interfaces.mentioning_in(context))
               if members else [])
    for _round in range(_ROUNDS + 1):
        met = met_interfaces.find(context, edit, old, parsed, members if _round == 0 else None)
        if met:
            edit = _with_interfaces_renamed(context, edit, met, old, new, structural=structural, last=_round == _ROUNDS)
            raised += met
        found = implementers.find(context, edit, old, parsed, starts if edit is plan.edit else None)
        interfaces += [interface for interface in found.interfaces if interface not in interfaces]
        if not found:
            if met:
                continue  # the interfaces just renamed may have been reached through a class's other interfaces
            break
        if not structural:
            raise implementers.refusal(list(found.interfaces), [*(fit.member.label(old) for fit in found.fits),
                                                                *found.inherited], old, new, followable=not found.inherited)
        if _round == _ROUNDS:
            raise implementers.refusal(interfaces, [fit.member.label(old, f"still left after {_ROUNDS} rounds of following "
                                                                      "renamed interfaces") for fit in found.fits], old, new,
                                       followable=False)
        unfollowable = list(found.inherited)
        for fit in found.fits:
            edit, why = _with_member_renamed(context, edit, fit, new)
            if why is None:
                followed.append(fit)
            else:
                unfollowable.append(fit.member.label(old, why))
        if unfollowable:
            raise implementers.refusal(interfaces, sorted(unfollowable), old, new, followable=False)
    if not followed and not raised:
        return replace(plan, warnings=[*plan.warnings, *outside]) if outside else plan
    plan = _with_notes(plan, context, edit, followed, raised, old)
    return replace(plan, warnings=[*plan.warnings, *outside]) if outside else plan


def _with_interfaces_renamed(context: PlanContext, edit: WorkspaceEdit, met: list[met_interfaces.Met], old: str,
                             new: str, *, structural: bool, last: bool) -> WorkspaceEdit:
    """``edit`` with the member of each interface a renamed class member fits renamed by the
    server at its declaration (and so the interface's ``implements`` classes and uses), or refused."""
    if not structural or last:
        why = f"still left after {_ROUNDS} rounds of following renamed interfaces" if last else ""
        raise met_interfaces.refusal(met, [fit.label(old, why) for fit in met], old, new, followable=not last)
    unfollowable = []
    renamed: set[tuple[str, int, int]] = set()
    for fit in met:
        interface = fit.declared.interface
        line, column = min(fit.declared.at)
        if interface.unjudged():
            unfollowable.append(fit.label(old, interface.unjudged()))
        elif (interface.path, line, column) not in renamed:
            edit, failure = _merged_rename(context, edit, interface.path, Position(line, column), new)
            renamed.add((interface.path, line, column))
            if failure is not None:
                unfollowable.append(fit.label(old, f"{interface.name}.{old}: {failure}"))
    if unfollowable:
        raise met_interfaces.refusal(met, sorted(unfollowable), old, new, followable=False)
    return edit


def _with_member_renamed(context: PlanContext, edit: WorkspaceEdit, fit: implementers.Fit,
                         new: str) -> tuple[WorkspaceEdit, str | None]:
    """``edit`` with the server's rename of ``fit``'s member merged in, or ``edit`` and why it cannot be."""
    member = fit.member
    if fit.interface.unjudged():
        return edit, fit.interface.unjudged()
    if member.shorthand:
        return edit, "a shorthand key, whose rename would rename the variable it reads; write it `key: value` first"
    return _merged_rename(context, edit, member.path, Position(member.line, member.column), new)


def _merged_rename(context: PlanContext, edit: WorkspaceEdit, path: str, position: Position,
                   new: str) -> tuple[WorkspaceEdit, str | None]:
    """``edit`` with the server's rename at ``position`` of ``path`` merged in, or ``edit`` and why it cannot be."""
    if context.services is None:
        return edit, "no language server to rename it"
    try:
        source = context.workspace.read(path)
        answer = context.services.rename(source, position, new)
    except GraftError as error:
        return edit, f"the server would not rename it: {error.message}"
    server_edit = answer.value
    if server_edit.created or server_edit.renamed or server_edit.deleted:
        return edit, "the server's rename there also creates, moves or deletes files"
    if not server_edit.files:
        return edit, "the server found nothing to rename there"
    outside = [files.file for files in server_edit.files if os.path.isabs(files.file)]
    if outside:
        return edit, f"the server's rename there edits files outside the workspace ({', '.join(outside[:3])})"
    try:
        changes = tuple(FileChange(files.file, files.edits, context.workspace.read(files.file).sha256)
                        for files in server_edit.files)
        return merge([edit, WorkspaceEdit(changes)]), None
    except OverlappingEdits as error:
        return edit, f"its rename overlaps the plan's other edits ({error.message})"


def _with_notes(plan: RefactorPlan, context: PlanContext, edit: WorkspaceEdit, followed: list[implementers.Fit],
                raised: list[met_interfaces.Met], old: str) -> RefactorPlan:
    """The merged plan, its leftovers said again for the merged edit, and what was followed."""
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())
    leftovers = Leftovers(corpus, old, language_of((followed[0].member if followed else raised[0].member).path))
    stale = set(leftovers.found(plan.edit)[1])
    notes = [_raised_note(raised, old)] if raised else []
    if followed:
        names = ", ".join(sorted({fit.interface.name for fit in followed}))
        listing = "; ".join(f"{fit.member.path}:{fit.member.line + 1} {fit.member.class_name}.{old} ({fit.named_in} names "
                            f"{fit.member.class_name} and {fit.interface.name})" for fit in followed)
        notes.append(f"also renamed, as members of what satisfies {names} structurally (no `implements {names}`, no type): "
                     f"{listing}. A judgement: each has {names}'s other required members and some file names both; "
                     "--no-structural (structural=false) refuses instead")
    warnings = [warning for warning in plan.warnings if warning not in stale]
    return replace(plan, edit=edit, confidence=capped(plan.confidence, Confidence.MEDIUM),
                   warnings=[*warnings, *notes, *leftovers.found(edit)[1]])


def _raised_note(raised: list[met_interfaces.Met], old: str) -> str:
    listing = "; ".join(sorted({f"{fit.declared.interface.path}:{min(fit.declared.at)[0] + 1} {fit.declared.interface.name}.{old} "
                                f"({fit.fitter} fits it without `implements`; {fit.named_in} names both)"
                                for fit in raised}))
    return (f"also renamed, as members of interfaces a renamed class or object satisfies structurally, with their uses and "
            f"implementers, as the server does for an `implements` class: {listing}. A judgement: each class has the "
            "interface's other required members and some file names both; --no-structural (structural=false) refuses instead")

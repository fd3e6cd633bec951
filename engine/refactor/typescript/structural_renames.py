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
from engine.refactor.typescript import implementers
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
    for _round in range(_ROUNDS + 1):
        found = implementers.find(context, edit, old, parsed)
        interfaces += [interface for interface in found.interfaces if interface not in interfaces]
        if not found:
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
    if not followed:
        return plan
    return _with_notes(plan, context, edit, followed, old)


def _with_member_renamed(context: PlanContext, edit: WorkspaceEdit, fit: implementers.Fit,
                         new: str) -> tuple[WorkspaceEdit, str | None]:
    """``edit`` with the server's rename of ``fit``'s member merged in, or ``edit`` and why it cannot be."""
    member = fit.member
    if fit.interface.unjudged():
        return edit, fit.interface.unjudged()
    if member.shorthand:
        return edit, "a shorthand key, whose rename would rename the variable it reads; write it `key: value` first"
    if context.services is None:
        return edit, "no language server to rename it"
    try:
        source = context.workspace.read(member.path)
        answer = context.services.rename(source, Position(member.line, member.column), new)
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
                old: str) -> RefactorPlan:
    """The merged plan, its leftovers said again for the merged edit, and what was followed."""
    corpus = Corpus(context.workspace, list(context.graph().project.facts), context.workspace_files, context.file_words())
    leftovers = Leftovers(corpus, old, language_of(followed[0].member.path))
    stale = set(leftovers.found(plan.edit)[1])
    names = ", ".join(sorted({fit.interface.name for fit in followed}))
    listing = "; ".join(f"{fit.member.path}:{fit.member.line + 1} {fit.member.class_name}.{old} ({fit.named_in} names "
                        f"{fit.member.class_name} and {fit.interface.name})" for fit in followed)
    note = (f"also renamed, as members of what satisfies {names} structurally (no `implements {names}`, no type): "
            f"{listing}. A judgement: each has {names}'s other required members and some file names both; "
            "--no-structural (structural=false) refuses instead")
    warnings = [warning for warning in plan.warnings if warning not in stale]
    return replace(plan, edit=edit, confidence=capped(plan.confidence, Confidence.MEDIUM),
                   warnings=[*warnings, note, *leftovers.found(edit)[1]])

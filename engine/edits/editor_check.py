"""The check of an edit an editor writes (``graft lsp``): the errors before, taken before the edit
is sent, compared with the errors after, once the editor has saved the files.

A refactoring command of the language server plans the edit and sends it through
``workspace/applyEdit``: the editor applies it to its buffers and writes the files when they are
saved, so there is no apply of the engine's and no journal transaction. The check follows that
order: :func:`prepare` takes the errors of the check's scope (the edited files and their
importers, as an apply's check has it) from the files as they are, before the edit is sent;
once the editor has saved the files, :func:`keep` hands the comparison to the machinery that
finishes an apply's check (engine.edits.pending_checks), and ``EditSession.check_last`` compares
the files after. Until then nothing is kept: ``graft check --last`` never compares the files
before the edit with themselves.
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from engine.edits import pending_checks
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.pending_checks import PendingCheck
from engine.edits.renamed_names import renamed_names
from engine.edits.session import EditSession
from engine.edits.verification import CheckMode, Unchecked, Verification

UNSAVED = "not compared yet: the editor has not saved the edited files (compared once it has)"


@dataclass(frozen=True)
class EditorCheck:
    id: str
    """Names the check where an apply's transaction would (``editor-…``): there is no journal entry to undo."""
    verification: Verification
    """The scope and who checked before the edit: ``pending`` are the files compared once saved."""
    before: PendingCheck | None
    """The errors before the edit, per file with a baseline; None when there is nothing to compare."""
    saved_first: frozenset[str]
    """The files the editor must save before the check compares them (the files it edits in buffers)."""

    def as_sent(self) -> Verification:
        """The check as the command's answer has it: nothing compared yet, and why."""
        waiting = tuple(Unchecked(path, UNSAVED) for path in self.verification.pending)
        return replace(self.verification, pending=(), unchecked=(*self.verification.unchecked, *waiting))


def prepare(session: EditSession, edit: WorkspaceEdit, mode: CheckMode) -> EditorCheck:
    """The errors before ``edit``, over the scope an apply's check has, within the session's
    diagnostics budget (``full``: however long it takes)."""
    started = time.monotonic()
    check_id = f"editor-{uuid.uuid4().hex[:12]}"
    saved_first = frozenset(op.path for op in edit.operations if isinstance(op, FileChange))
    touched = [p for p in edit.touched if (session.workspace.root / p).is_file()]
    if mode is CheckMode.NONE:
        return EditorCheck(check_id, Verification(mode, tuple(touched), ()), None, saved_first)
    found_scope, scope_unknown = session.scope_for(edit, touched)
    scope = [*touched, *found_scope.importers]
    budget = math.inf if mode is CheckMode.FULL else session.diagnostics_budget
    # The before half of an apply's check, with the budget an apply gives it (half, the first file more).
    found = session.errors_before(scope, started + budget / 2, budget, first_wait=budget * 0.75)
    unchecked = dict(found.unchecked)
    for path in scope:
        if path not in found.found and path not in unchecked:
            unchecked[path] = "no baseline: the budget ran out before the edit was sent"
    compared = [p for p in scope if p in found.found]
    verification = Verification(mode, tuple(scope), (), pending=tuple(compared),
                                unchecked=tuple(Unchecked(p, r) for p, r in unchecked.items()), beyond_scope=found_scope.beyond,
                                by=tuple(sorted(found.servers)), seconds=time.monotonic() - started, scope_unknown=scope_unknown,
                                not_affected=found_scope.not_affected)
    before = PendingCheck(check_id, dict(found.found), {}, compared, [p for p in scope if p not in found.found],
                          renamed_names(edit, session.workspace)) if compared else None
    return EditorCheck(check_id, verification, before, saved_first)


def keep(root: Path, check: EditorCheck) -> None:
    """Once the editor has saved the files: the comparison kept as an apply's unfinished check is,
    for ``EditSession.check_last`` (and ``graft check --last``) to finish."""
    pending_checks.save(root, check.before)
    pending_checks.save_last(root, check.id, check.verification)

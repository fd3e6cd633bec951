"""Applying an edit with everything around it: diagnostics before and after, servers told, the graph
told of the files written, the verify command run, and the whole transaction undone when either check fails."""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Callable

from engine.edits import check_scope, go_compiled, pending_checks
from engine.edits.baseline_fill import BaselineFill
from engine.edits.check_scope import Scope
from engine.edits.kept_baseline import KeptBaseline, workspace_state
from engine.edits.apply import ApplyOptions, Transactions, VerifyFailed
from engine.edits.diff import FileSummary
from engine.edits.outcome import EditOutcome
from engine.edits.pending_checks import PendingCheck
from engine.edits.renamed_names import renamed_names, renaming
from engine.edits.model import WorkspaceEdit
from engine.edits.materialize import FileState
from engine.edits.verification import SCOPE_LIMIT, CheckMode, Unchecked, Verification
from engine.errors import GraftError, Refused, ServiceUnavailable
from engine.answers import Diagnostic
from engine.ports import LanguageServices, Tools
from engine.workspace import Workspace


class NewErrors(Refused):
    code = "new_errors"


@dataclass(frozen=True)
class EditOptions:
    allow_dirty: bool = False
    allow_syntax_errors: bool = False
    fail_on_new_errors: bool = False
    verify: str | None = None
    own_changes: frozenset[str] = frozenset()
    """Files whose uncommitted changes the caller made itself (a batch's earlier steps)."""
    force: bool = False
    """Write files whose mode denies writing (read-only files are refused otherwise)."""
    request: str | None = None
    """The caller's id for this request (a CLI call), recorded in the journal with every
    transaction written under it (engine.edits.apply.Transactions.request_state)."""
    check: CheckMode = CheckMode.FAST
    """How much of the check after the write to wait for (engine.edits.verification). ``none`` for
    a write whose check nobody reads: a batch's steps in its scratch copy (the batch's net effect
    is checked where it is applied, and a fleet's by its verify command). ``fail_on_new_errors``
    checks the whole scope regardless."""


DIAGNOSTICS_BUDGET = 3.0
"""Seconds the before-and-after diagnostics of one apply may take by default ([tool.graft]
diagnostics_budget): the server type-checks every touched file and its importers twice, which for
a large rename takes far longer than a caller should wait. Past it, the apply is kept and the check is incomplete: the
outcome names the files not compared, and they are compared later (engine.edits.pending_checks)."""


@dataclass
class _Comparison:
    """What the after half of an apply's checks found."""

    after: dict[str, list[Diagnostic]] | None = None
    new: list[Diagnostic] = field(default_factory=list)
    verify_output: str = ""
    unchecked: dict[str, str] = field(default_factory=dict)
    servers: set[str] = field(default_factory=set)
    renamed: dict[str, str] = field(default_factory=dict)


@dataclass
class _Pass:
    """One pass of diagnostics over files: each file's errors, or why it has none."""

    found: dict[str, list[Diagnostic]] = field(default_factory=dict)
    unchecked: dict[str, str] = field(default_factory=dict)
    """Files no server can check (no server for the language, still analysing), and why."""
    left_out: str = ""
    """Why the pass stopped early (the budget), naming how many files it left."""
    servers: set[str] = field(default_factory=set)
    current: set[str] = field(default_factory=set)
    """Files whose answer was for exactly the changes sent before it (``Answered.current``)."""


_LEAST_WAIT = 0.5
"""Seconds a file's diagnostics may take even when the budget is spent before it is asked."""

_FIRST_FILE_SHARE = 0.75
"""Of the budget, what the first file before the write may take, where the rest of the before
pass has half of it: a cold server's first answer carries the type evaluation of everything the
file imports (on a real project, most of that half), and cut at half the budget it was thrown away
with nothing compared. The after pass has what the budget has left, so the check stays within it."""


class EditSession:
    def __init__(
        self, workspace: Workspace, transactions: Transactions, services: LanguageServices | None,
        tools: Tools | None, files_edited: Callable[[list[str]], None] | None = None,
        importers: Callable[[list[str], int], tuple[list[str], int]] | None = None,
        diagnostics_budget: float = DIAGNOSTICS_BUDGET,
        dependents: Callable[[list[str]], list[str]] | None = None,
        importers_unknown: Callable[[list[str]], list[str]] | None = None,
        kept: KeptBaseline | None = None,
        content_hashes: Callable[[], dict[str, str]] | None = None,
        fill: BaselineFill | None = None,
    ) -> None:
        self.workspace = workspace
        self.transactions = transactions
        self.services = services
        self.tools = tools
        self.files_edited = files_edited
        """Told which files each apply or undo wrote (the engine re-reads them into its graph)."""
        self.importers = importers
        """The files importing given ones, transitively, nearest first, at most N, and how many
        more (from the project graph): an error in an untouched importer is what a missed
        reference looks like, so they are compared too."""
        self.dependents = dependents
        """The files that see given ones directly (from the project graph): with it, the importers
        compared are those that can see what the edit changed (engine.edits.check_scope), and
        ``importers`` is not asked."""
        self.importers_unknown = importers_unknown
        """Those of given files whose importers the graph cannot know (it follows no imports in
        their language): the check says so, since it cannot reach what reads them."""
        self.diagnostics_budget = diagnostics_budget
        self.kept = kept
        """Errors earlier checks had, per file and workspace state (a long-lived engine's): the
        before pass takes a file's from there when nothing changed since, and every pass adds to it."""
        self.content_hashes = content_hashes
        """Every indexed file's content hash (from the project graph): the workspace's state."""
        self._server_of: dict[str, str] = {}
        """The server whose errors of each file a pass last had."""
        self.fill = fill
        """Where a preview starts asking for the errors before its edit (engine.edits.baseline_fill)."""

    def preview(self, edit: WorkspaceEdit) -> list[FileState]:
        return [s for s in self.transactions.preview(edit) if s.changed]

    def dry_run(self, edit: WorkspaceEdit, options: EditOptions = EditOptions()) -> tuple[list[FileState], GraftError | None]:
        """What the edit would write, and what an apply with these options would refuse (syntax,
        uncommitted changes, protected paths), found without writing."""
        return self.transactions.dry_run(edit, _apply_options(options))

    def fill_baseline(self, edit: WorkspaceEdit) -> bool:
        """Start asking, in the background, for the errors before ``edit`` that its apply's check
        would ask for and that are not kept yet; whether a fill started. The scope and the
        workspace state are taken now, as the apply will take them."""
        if self.fill is None or not self.fill.enabled or self.kept is None:
            return False
        touched = [p for p in edit.touched if (self.workspace.root / p).is_file()]
        state = self._state() if touched else None
        if state is None:
            return False
        hashes, workspace = state
        scope, _unknown = self.scope_for(edit, touched)
        missing = [p for p in [*touched, *scope.importers] if p in hashes and self.kept.get(p, hashes[p], workspace) is None]
        if not missing:
            return False

        def work() -> None:
            found = self._errors(missing, time.monotonic() + self.diagnostics_budget, self.diagnostics_budget,
                                 first_wait=self.diagnostics_budget * _FIRST_FILE_SHARE)
            unchanged = {p: errors for p, errors in found.found.items() if self._hash_of(p) == hashes[p]}
            self._keep(state, unchanged)

        return self.fill.start(work)

    def _hash_of(self, path: str) -> str | None:
        try:
            return self.workspace.read(path).sha256
        except GraftError:
            return None

    def apply(self, edit: WorkspaceEdit, options: EditOptions = EditOptions()) -> EditOutcome:
        """Write the edit as one transaction, with the errors before and after compared over the
        check's scope. With ``fail_on_new_errors`` or ``verify``, those conditions are settled
        before the transaction commits: a failed one, or a crash while one runs, rolls the whole
        edit back."""
        # The paths the edit names are enough here; the plan's bytes are computed once, under the locks.
        started = time.monotonic()
        # --fail-on-new-errors decides from the check: it waits for all of it.
        mode = CheckMode.FULL if options.fail_on_new_errors else options.check
        budget = math.inf if mode is CheckMode.FULL else self.diagnostics_budget
        touched = [p for p in edit.touched if (self.workspace.root / p).is_file()]
        scope, scope_unknown = self.scope_for(edit, touched) if mode is not CheckMode.NONE else (Scope([], 0), "")
        compared = [*touched, *scope.importers]
        state = self._state() if mode is not CheckMode.NONE else None
        before: dict[str, list[Diagnostic]] | None = None  # no baseline: nothing is compared after the write either
        renamed: dict[str, str] = {}
        comparison = _Comparison()

        def baseline() -> None:
            # Once the apply's own checks (syntax, uncommitted changes) have passed, under its
            # locks and before the write: a refused edit never waits for a server's diagnostics.
            nonlocal before, renamed, comparison
            if mode is CheckMode.NONE:
                return
            if self.fill is not None:
                self.fill.settle(budget / 2)  # a preview's fill asks what this pass would: its answers are kept
            # Half the budget before the write (its first file may take more), and what is left after
            # it: the after pass compares the same files, and on a warm server it is the slower one.
            first = self._errors(compared, started + budget / 2, budget, first_wait=budget * _FIRST_FILE_SHARE, state=state)
            before = first.found if first.found or first.left_out else None
            renamed = renamed_names(edit, self.workspace) if before else {}
            comparison = _Comparison(unchecked=dict(first.unchecked), servers=set(first.servers), renamed=renamed)

        written: list[str] = []
        rewritten: list[str] = []  # edited in place: existing files, for the servers' sake

        def settle(files: list[FileSummary]) -> None:
            written.extend(f.path for f in files)
            rewritten.extend(f.path for f in files if f.status == "modified")
            self._after_write(written, rewritten)
            # The state after the write may be one a check has had (an edit undone by hand, a rename
            # back): the errors kept for it are taken, as the pass before the write takes them.
            after_state = self._state_after(state, files) if state is not None else None
            self._compare(before, files, renamed, started + budget, budget, comparison, state=after_state)
            self._check_conditions(options, comparison)

        conditional = options.fail_on_new_errors or bool(options.verify)
        try:
            applied = self.transactions.apply(edit, _apply_options(options), settle=settle if conditional else None,
                                              before_write=baseline)
        except (NewErrors, VerifyFailed):
            self._after_write(written, rewritten)  # the journal put the old files back: the servers and the graph see them again
            raise
        if not conditional:
            settle(applied.files)  # informational only: the transaction is committed already
        if state is not None:
            self._keep(state, before or {})
            self._keep(self._state_after(state, applied.files), comparison.after or {})
        return self._outcome(applied, mode, compared, scope, scope_unknown, before, comparison, renamed, started)

    def _outcome(
        self, applied: EditOutcome, mode: CheckMode, compared: list[str], scope: Scope, scope_unknown: str,
        before: dict[str, list[Diagnostic]] | None, comparison: _Comparison, renamed: dict[str, str], started: float,
    ) -> EditOutcome:
        """The applied edit's outcome with its check, the check kept for ``graft check``."""
        checked = before is not None and comparison.after is not None
        pending = self._unfinished(applied.transaction, before, comparison, compared, renamed)
        verification = replace(self._verification(mode, compared, scope.beyond, before, comparison, pending, applied.files,
                                                   time.monotonic() - started),
                               scope_unknown=scope_unknown, not_affected=scope.not_affected)
        not_kept = self._kept_for_later(applied.transaction, pending, verification)
        # What the budget left out is in the summary already; only a failure to keep it is added.
        note = verification.summary() + (f"; {not_kept}" if not_kept else "")
        return replace(applied, new_diagnostics=comparison.new, diagnostics_checked=checked, verify_output=comparison.verify_output,
                       diagnostics_note=note, diagnostics_complete=pending is None, verification=verification)

    def _check_conditions(self, options: EditOptions, comparison: _Comparison) -> None:
        """``fail_on_new_errors`` and ``verify``, settled before the transaction commits: a failed
        one raises, and the transaction rolls the edit back."""
        if comparison.new and options.fail_on_new_errors:
            listing = "\n  ".join(f"{d.file}:{d.range.start.line + 1}: {d.message}" for d in comparison.new)
            raise NewErrors(f"the edit introduced {len(comparison.new)} error(s), so it was rolled back:\n  {listing}")
        if options.verify:
            if self.tools is None:
                raise VerifyFailed("cannot run the verify command: no process support is installed; the edit was rolled back")
            status, comparison.verify_output = self.tools.run(options.verify)
            if status != 0:
                raise VerifyFailed(f"`{options.verify}` failed with status {status}, so the edit was rolled back:\n"
                                   f"{comparison.verify_output}")

    def _kept_for_later(self, transaction: str | None, pending: PendingCheck | None, verification: Verification) -> str:
        """Keeps the rest of the check (``graft check``) and this one (``graft check --last``);
        what could not be kept, or ''. The edit is written: losing the check is not worth failing it."""
        not_kept = ""
        try:
            pending_checks.save(self.workspace.root, pending)
        except (OSError, GraftError) as error:
            not_kept = f"the rest of the check could not be kept for later ({getattr(error, 'message', error)})"
        if transaction is not None:
            try:
                pending_checks.save_last(self.workspace.root, transaction, verification)
            except (OSError, GraftError) as error:
                not_kept = f"the check could not be kept for `graft check --last` ({getattr(error, 'message', error)})"
        return not_kept

    def scope_for(self, edit: WorkspaceEdit, touched: list[str]) -> tuple[Scope, str]:
        """The importers the check after ``edit`` compares besides the ``touched`` files, and why
        they could not be found ('' when they were)."""
        if not touched:
            return Scope([], 0), ""
        try:
            if self.dependents is not None:
                written = [(state.path, state.before, state.after) for state in self.preview(edit)]
                scope = check_scope.scope_of(written, self.dependents, self._text, SCOPE_LIMIT)
                unknown = self.importers_unknown(touched) if self.importers_unknown is not None else []
                if unknown:
                    listed = ", ".join(unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
                    return scope, f"the project graph follows no imports in the language of {listed}, so what reads it is not known"
                return scope, ""
            if self.importers is not None:
                return Scope(*self.importers(touched, SCOPE_LIMIT)), ""
        except Exception as error:  # the graph could not be loaded (a full disk, a damaged cache): said, not fatal
            return Scope([], 0), f"the project graph could not be loaded ({getattr(error, 'message', None) or error})"
        return Scope([], 0), ""

    def _state(self) -> tuple[dict[str, str], str] | None:
        """Every indexed file's content hash and the workspace state they make; None when no
        errors are kept here (no long-lived engine) or the graph cannot say."""
        if self.kept is None or self.content_hashes is None:
            return None
        try:
            hashes = self.content_hashes()
        except Exception:  # the graph could not be loaded: said by the scope; nothing is reused
            return None
        return hashes, workspace_state(self.workspace.root, hashes)

    def _state_after(self, state: tuple[dict[str, str], str], files: list[FileSummary]) -> tuple[dict[str, str], str]:
        """The workspace state once ``files`` are written: their new contents' hashes in place of the old."""
        hashes = dict(state[0])
        for summary in files:
            hashes.pop(summary.path, None)
            if summary.status not in ("deleted", "renamed-away"):
                try:
                    hashes[summary.path] = self.workspace.read(summary.path).sha256
                except GraftError:
                    pass  # not a source file the graph indexes (too large, binary): nothing kept for it
        return hashes, workspace_state(self.workspace.root, hashes)

    def _keep(self, state: tuple[dict[str, str], str], found: dict[str, list[Diagnostic]]) -> None:
        hashes, workspace = state
        for path, errors in found.items():
            if path in hashes and self.kept is not None:
                self.kept.put(path, hashes[path], workspace, errors, self._server_of.get(path, ""))

    def _text(self, path: str) -> str | None:
        try:
            return self.workspace.read(path).text
        except GraftError:
            return None

    def _verification(self, mode: CheckMode, compared: list[str], beyond: int, before: dict[str, list[Diagnostic]] | None,
                      comparison: "_Comparison", pending: PendingCheck | None, files: list[FileSummary],
                      seconds: float) -> Verification:
        """The check as data: its scope, what was compared, found, left for later and not checkable."""
        created = [f.path for f in files if f.status == "created" and f.path not in compared]
        deleted = {f.path for f in files if f.status == "deleted"}
        in_scope = [p for p in [*compared, *created] if p not in deleted]
        after = comparison.after or {}
        baseline = before or {}
        checked = [p for p in in_scope if p in after and (p in baseline or p in created)]
        unchecked = dict(comparison.unchecked)
        if pending is not None:
            for path in pending.without_baseline:
                unchecked.setdefault(path, "no baseline: the budget ran out before the write")
        elif before is None and mode is not CheckMode.NONE:
            for path in in_scope:
                unchecked.setdefault(path, "no language server answered for it")
        # Files a later check will compare; with the check off none will be.
        left = [] if mode is CheckMode.NONE else [p for p in in_scope if p not in checked and p not in unchecked]
        return Verification(
            mode, tuple(in_scope), tuple(checked), tuple(comparison.new),
            tuple(_fixed_errors({p: baseline.get(p, []) for p in checked}, {p: after[p] for p in checked}, comparison.renamed)),
            tuple(left), tuple(Unchecked(p, r) for p, r in unchecked.items() if p in in_scope), beyond,
            tuple(sorted(comparison.servers)), seconds,
        )

    def finish_diagnostics(self) -> tuple[PendingCheck, list[Diagnostic]] | None:
        """Finish the comparison the last apply left within its budget (the files it had a
        baseline for): the check as it then stands and the new errors over every file compared,
        or None when the last apply finished its own check."""
        pending = pending_checks.load(self.workspace.root)
        if pending is None:
            return None
        if not pending.finished:
            after = self._errors(pending.to_compare, math.inf, math.inf).found
            if after:  # else no server to ask: still to compare
                pending.after.update(after)
                pending.to_compare = [p for p in pending.to_compare if p not in after]
                pending_checks.save(self.workspace.root, pending)
        before = {p: d for p, d in pending.before.items() if p in pending.after}
        return pending, _new_errors(before, pending.after, pending.renamed)

    def check_last(self) -> tuple[str, Verification] | None:
        """The last apply's check, finished first where its budget left files to compare: its
        transaction and what it covered. None when no apply here kept one."""
        kept = pending_checks.load_last(self.workspace.root)
        if kept is None:
            return None
        transaction, verification = kept
        if verification.pending:
            started = time.monotonic()
            finished = self.finish_diagnostics()
            if finished is not None and finished[0].transaction == transaction:
                check, new = finished
                already = {(d.file, d.message, d.code) for d in verification.new_errors}
                verification = verification.finished_with(
                    [p for p in verification.pending if p in check.after],
                    [d for d in new if (d.file, d.message, d.code) not in already], time.monotonic() - started)
                pending_checks.save_last(self.workspace.root, transaction, verification)
        return transaction, verification

    def _compare(self, before: dict[str, list[Diagnostic]] | None, files: list[FileSummary], renamed: dict[str, str],
                 deadline: float, budget: float, comparison: "_Comparison",
                 state: tuple[dict[str, str], str] | None = None) -> None:
        """The after pass and its recheck, until ``deadline`` (what the budget has left); ``state``:
        the workspace's after the write, whose kept errors are taken (see :meth:`_errors`)."""
        if before is None:
            return
        deleted = {f.path for f in files if f.status == "deleted"}
        after_paths = [p for p in before if p not in deleted] + [f.path for f in files if f.status == "created"]
        second = self._errors(after_paths, deadline, budget, state=state)
        comparison.servers |= second.servers
        for path, reason in second.unchecked.items():
            comparison.unchecked.setdefault(path, reason)
        comparison.after = self._settled(second.found, {f.path for f in files} | second.current, deadline, budget)
        if comparison.after is not None:
            # Only files compared on both sides: one the after pass left out has no new errors known.
            comparison.new = _new_errors({p: d for p, d in before.items() if p in comparison.after}, comparison.after, renamed)

    def _unfinished(self, transaction: str | None, before: dict[str, list[Diagnostic]] | None, comparison: "_Comparison",
                    compared: list[str], renamed: dict[str, str]) -> PendingCheck | None:
        """What the budget left out, kept to be finished later; None when the check is whole
        (or there was none: no server)."""
        if before is None or comparison.after is None or transaction is None:
            return None
        to_compare = [p for p in before if p not in comparison.after and (self.workspace.root / p).is_file()]
        without_baseline = [p for p in compared if p not in before]
        if not to_compare and not without_baseline:
            return None
        return PendingCheck(transaction, before, comparison.after, to_compare, without_baseline, renamed)

    def undo(self, transaction: str | None = None, *, request: str | None = None) -> EditOutcome:
        undone = self.transactions.undo(transaction, request=request)
        self._after_write([f.path for f in undone.files], [f.path for f in undone.files if f.status == "modified"])
        return undone

    def redo(self, transaction: str | None = None, *, request: str | None = None) -> EditOutcome:
        redone = self.transactions.redo(transaction, request=request)
        self._after_write([f.path for f in redone.files], [f.path for f in redone.files if f.status == "modified"])
        return redone

    def _after_write(self, paths: list[str], rewritten: list[str] | None = None) -> None:
        if self.services is not None:
            self.services.files_changed(paths, rewritten or ())
        if self.files_edited is not None:
            self.files_edited(paths)

    def _settled(self, after: dict[str, list[Diagnostic]] | None, settled: set[str], deadline: float,
                 budget: float) -> dict[str, list[Diagnostic]] | None:
        """The after pass asked once more for the untouched importers: a server that pushes
        diagnostics re-checks a file's dependents after a change on its own schedule, and under
        load its first answer for an importer could still be the one from before the write. Both
        ways wrong: an error missed (six importers broken by one rename, five reported) or one
        invented (an old error whose message still quotes the old name, taken as new). Files in
        ``settled`` are not asked again: those written, and those whose answer was pulled for the
        changes sent before it (``Answered.current``)."""
        if after is None:
            return after
        importers = [p for p in after if p not in settled]
        if not importers:
            return after
        again = self._errors(importers, deadline, budget, recheck=True)
        return {**after, **again.found}

    def errors_before(self, paths: list[str], deadline: float, budget: float, *, first_wait: float = _LEAST_WAIT) -> _Pass:
        """The before half of a check, for an edit this session does not write (an editor's:
        engine.edits.editor_check): :meth:`_errors` as an apply's before pass calls it."""
        return self._errors(paths, deadline, budget, first_wait=first_wait)

    def _errors(self, paths: list[str], deadline: float, budget: float | None = None, *, recheck: bool = False,
                first_wait: float = _LEAST_WAIT, state: tuple[dict[str, str], str] | None = None) -> _Pass:
        """Error diagnostics per file, each from a server that had finished analysing; a file no
        server can check is named with the reason and the others go on. Files past the deadline
        are left out, and the pass says how many. The first file may take ``first_wait`` seconds
        whatever the deadline, the others at least ``_LEAST_WAIT``. With the workspace's
        ``state``, a file whose errors an earlier check had in that state is not asked again."""
        done = _Pass()
        if self.services is None:
            return self._compiled(done, {path: "no language servers are installed" for path in paths})
        if state is not None and self.kept is not None:
            hashes, workspace = state
            for path in paths:
                kept = self.kept.get(path, hashes[path], workspace) if path in hashes else None
                if kept is not None:
                    done.found[path] = list(kept.errors)
                    done.current.add(path)  # a server's answer for exactly this workspace state: no re-check can change it
                    done.servers.add(kept.server)
                    self._server_of[path] = kept.server
            paths = [p for p in paths if p not in done.found]
        refused: dict[str, str] = {}
        for index, path in enumerate(paths):
            left_out = f"{len(paths) - index} file(s) left out after the {budget or self.diagnostics_budget:g} s budget"
            remaining = deadline - time.monotonic()
            if done.found and remaining < 0:
                done.left_out = left_out
                return self._compiled(done, refused)
            try:
                # Compared like with like: each answer from a server that has finished analysing.
                # One answer may wait on a server (its readiness, a publish after a change): the
                # budget bounds that wait too, and the first file gets at least a moment.
                least = max(first_wait, _LEAST_WAIT) if index == 0 else _LEAST_WAIT
                answer = self.services.diagnostics(self.workspace.read(path), when_ready=True, recheck=recheck and index == 0,
                                                   timeout=None if math.isinf(remaining) else max(remaining, least))
            except TimeoutError:
                done.left_out = left_out
                return self._compiled(done, refused)
            except ServiceUnavailable as error:
                # No server for its language, or its server would not answer for it (gopls: "no package metadata").
                refused[path] = error.message
                continue
            except GraftError:
                continue  # unreadable now (deleted meanwhile, too large): nothing to compare there
            if not answer.complete:
                # A server still analysing gives a partial list: compared with a complete one
                # later, every error it had not reached yet would look new.
                done.unchecked[path] = f"{answer.server} had not finished analysing it"
                continue
            done.servers.add(answer.server)
            self._server_of[path] = answer.server
            done.found[path] = [d for d in answer.value if d.severity == "error"]
            if answer.current:
                done.current.add(path)
        return self._compiled(done, refused)

    def _compiled(self, done: _Pass, refused: dict[str, str]) -> _Pass:
        """``done`` with the files no server answered for: Go ones compiled by the go command
        (engine.edits.go_compiled), the others named unchecked with the reason."""
        go_files = {path: reason for path, reason in refused.items() if path.endswith(".go")}
        done.unchecked.update({path: reason for path, reason in refused.items() if path not in go_files})
        if not go_files:
            return done
        if self.tools is None:
            done.unchecked.update(go_files)
            return done
        found = go_compiled.compiled(self.tools, self.workspace, go_files)
        done.unchecked.update(found.unchecked)
        done.found.update(found.found)
        done.servers.update(found.checker.values())
        self._server_of.update(found.checker)
        return done


def _new_errors(
    before: dict[str, list[Diagnostic]], after: dict[str, list[Diagnostic]], renamed: dict[str, str] | None = None,
) -> list[Diagnostic]:
    """After minus before, per file, by message and code (lines move when code is inserted above);
    a message from before counts with the edit's renamed names in it."""
    as_renamed = renaming(renamed or {})
    new = []
    for path, diagnostics in after.items():
        remaining = Counter((_headline(as_renamed(d.message)), d.code) for d in before.get(path, []))
        for diagnostic in diagnostics:
            key = (_headline(diagnostic.message), diagnostic.code)
            if remaining[key]:
                remaining[key] -= 1
            else:
                new.append(diagnostic)
    return new


def _headline(message: str) -> str:
    """A message's first line: what it says is wrong. The lines under it explain, and a server
    words them after the order it happened to evaluate types in (basedpyright on werkzeug: the
    same override error with "Any" below it in one pass and "type[Any]" in the next)."""
    return message.partition("\n")[0]


def _fixed_errors(before: dict[str, list[Diagnostic]], after: dict[str, list[Diagnostic]],
                  renamed: dict[str, str]) -> list[Diagnostic]:
    """Before minus after: the errors the edit took away (as the new ones, by message and code,
    a message from before read with the renamed names)."""
    as_renamed = renaming(renamed)
    fixed = []
    for path, diagnostics in before.items():
        remaining = Counter((_headline(d.message), d.code) for d in after.get(path, []))
        for diagnostic in diagnostics:
            key = (_headline(as_renamed(diagnostic.message)), diagnostic.code)
            if remaining[key]:
                remaining[key] -= 1
            else:
                fixed.append(diagnostic)
    return fixed


def _apply_options(options: EditOptions) -> ApplyOptions:
    return ApplyOptions(options.allow_dirty, options.allow_syntax_errors, options.own_changes, options.force, options.request)

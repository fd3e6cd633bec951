"""One connection's client of a workspace's :class:`Engine`: the path every front end's edits take.

A front end (MCP server, LSP server, batch CLI) parses a request into these calls, makes
one call, and renders the value it gets back. A client holds what is per connection: the
files it has read (so a write over unseen or changed content is refused). Every change
is a plan first; ``apply=False`` returns its diff, ``apply=True`` writes it through the
journaled apply (syntax check, new diagnostics, graph refresh) and returns the same
fields plus the transaction.
"""

from __future__ import annotations

from dataclasses import replace

from engine import files
from engine.api import Engine
from engine.edits.diff import summarize, unified_diff
from engine.edits.model import WorkspaceEdit
from engine.edits.outcome import EditOutcome
from engine.edits.verification import capped
from engine.edits.session import EditOptions
from engine.errors import Refused
from engine.refactor.operations import RefactorOperation
from engine.refactor.plan import RefactorPlan
from engine.symbols import Confidence, Source


class NotThisClientsTransaction(Refused):
    code = "not_yours"


class EngineClient:
    def __init__(self, engine: Engine, *, own_undo_only: bool = False) -> None:
        """``own_undo_only``: one of several clients of a shared engine (MCP sessions): it undoes
        only what it applied itself, so one session never reverts another's work."""
        self.engine = engine
        self.ledger = files.ReadLedger()
        self.own_undo_only = own_undo_only
        self.applied: list[str] = []
        """Transactions this client applied and has not undone, oldest first."""
        self.undone: list[tuple[str, str | None]] = []
        """This client's undos not yet redone, oldest first, each (the undo, the transaction it
        reverted): its redo stack; a new edit empties it."""

    # -- changes ---------------------------------------------------------------------

    def run(self, plan: RefactorPlan, *, apply: bool = False, options: EditOptions | None = None) -> EditOutcome:
        """Preview or apply a refactoring plan."""
        return self._run(plan.operation, plan.edit, apply, options, plan.source, plan.confidence, plan.warnings)

    def run_operation(self, operation: RefactorOperation, *, apply: bool = False, options: EditOptions | None = None) -> EditOutcome:
        """Plan an operation from the registry, then preview or apply it: a preview reads the
        files the plan read unchanged from the plan's reads (engine.read_memo)."""
        with self.engine.workspace.remembering_reads():
            return self.run(self.engine.plan(operation), apply=apply, options=options)

    def checked_plan(self, operation: RefactorOperation, options: EditOptions | None = None) -> RefactorPlan:
        """The operation's plan, refused as an apply of it with these options would be (syntax
        errors, uncommitted changes, protected paths, a stale plan), writing nothing: for a front
        end whose edit another program writes (an editor applies the LSP server's edit itself), so
        it passes the same guards as every apply."""
        with self.engine.workspace.remembering_reads():
            plan = self.engine.plan(operation)
            _states, refusal = self.engine.edits().dry_run(plan.edit, options or self.default_options())
        if refusal is not None:
            raise refusal
        return plan

    def default_options(self) -> EditOptions:
        """The options of a call that sets none: the workspace's settings'."""
        return EditOptions(allow_dirty=self.engine.settings.allow_dirty)

    def run_edit(self, operation: str, edit: WorkspaceEdit, *, apply: bool = False, options: EditOptions | None = None) -> EditOutcome:
        """Preview or apply a plain file edit."""
        return self._run(operation, edit, apply, options, Source.TEXT, Confidence.HIGH, [])

    def _run(
        self, operation: str, edit: WorkspaceEdit, apply: bool, options: EditOptions | None,
        source: Source, confidence: Confidence, warnings: list[str],
    ) -> EditOutcome:
        session = self.engine.edits()
        chosen = options or self.default_options()
        if not apply:
            states, refusal = session.dry_run(edit, chosen)
            if refusal is None:
                session.fill_baseline(edit)  # the apply that may follow finds its errors before kept
            return EditOutcome(operation, False, summarize(states), None, edit.edit_count, unified_diff(states), source, confidence,
                               list(warnings), would_refuse=refusal.to_json() if refusal is not None else None)
        diff = unified_diff(session.preview(edit))
        outcome = session.apply(edit, chosen)
        if outcome.transaction is not None:
            self.applied.append(outcome.transaction)
            self.undone.clear()
        for written in outcome.files:
            if written.status != "deleted":
                # The client has seen what it wrote: its next edit of the file needs no new read.
                self.ledger.record(written.path, self.engine.workspace.read(written.path).sha256)
        if outcome.verification is not None:
            # What the check covered bounds what the answer may claim (engine.edits.verification);
            # the check's own line says why.
            confidence = capped(confidence, outcome.verification.label()[0])
        return replace(outcome, operation=operation, diff=diff, source=source, confidence=confidence, warnings=list(warnings))

    def undo(self, transaction: str | None = None, *, request: str | None = None) -> EditOutcome:
        """Undo the latest transaction not yet undone (this client's own with ``own_undo_only``), or
        the one named; again, the one before. ``request``: the caller's id for this request,
        recorded in the journal."""
        if self.own_undo_only:
            if transaction is None and not self.applied:
                raise NotThisClientsTransaction("this session has applied nothing it could undo; another session's "
                                                "changes are undone from that session (or with `graft undo ID`)")
            if transaction is not None and transaction not in self.applied:
                raise NotThisClientsTransaction(f"transaction {transaction} was not applied by this session: undo it from "
                                                "the session that applied it (or with `graft undo ID`)")
            transaction = transaction or self.applied[-1]
        undone = self.engine.edits().undo(transaction, request=request)
        # The answer's transaction is the undo's own; what it reverted leaves this client's stack
        # (keeping it there pointed the next undo at a transaction already undone).
        if undone.reverted in self.applied:
            self.applied.remove(undone.reverted)
        if undone.transaction is not None:
            self.undone.append((undone.transaction, undone.reverted))
        self._saw(undone)
        return undone

    def redo(self, transaction: str | None = None, *, request: str | None = None) -> EditOutcome:
        """Re-apply the latest undone transaction (this client's own undo with ``own_undo_only``),
        or the one named (the undo, or the transaction it undid)."""
        if self.own_undo_only:
            if transaction is None and not self.undone:
                raise NotThisClientsTransaction("this session has undone nothing it could redo since its last edit")
            if transaction is not None and all(transaction not in pair for pair in self.undone):
                raise NotThisClientsTransaction(f"transaction {transaction} is not an undo of this session's since its last "
                                                "edit: redo it from the session that undid it (or with `graft redo ID`)")
            transaction = transaction or self.undone[-1][0]
        redone = self.engine.edits().redo(transaction, request=request)
        done = {transaction, redone.reverted} - {None}
        self.undone = [pair for pair in self.undone if not done & set(pair)]
        if redone.transaction is not None:
            self.applied.append(redone.transaction)  # undoable again, as an edit of this client's
        self._saw(redone)
        return redone

    def _saw(self, outcome: EditOutcome) -> None:
        for restored in outcome.files:
            if restored.status != "deleted" and (self.engine.workspace.root / restored.path).is_file():
                # The client knows what its undo or redo wrote: its next edit needs no new read.
                self.ledger.record(restored.path, self.engine.workspace.read(restored.path).sha256)

    # -- file tools ------------------------------------------------------------------

    def read_file(self, path: str, *, start: int = 1, end: int | None = None, outline: bool = False) -> files.FileView:
        return files.read(self.engine.workspace, self.ledger, path, start=start, end=end,
                          outline=self._outline_lines if outline else None)

    def write_file(self, path: str, content: str, *, overwrite_changed: bool = False, apply: bool = False,
                   options: EditOptions | None = None) -> EditOutcome:
        edit = files.plan_write(self.engine.workspace, self.ledger, path, content, overwrite_changed=overwrite_changed)
        return self.run_edit("write_file", edit, apply=apply, options=options)

    def edit_file(self, request: files.EditRequest, *, apply: bool = False, options: EditOptions | None = None) -> EditOutcome:
        return self.run_edit("edit_file", files.plan_edit(self.engine.workspace, self.ledger, request), apply=apply, options=options)

    def find_replace(self, query: str, replacement: str, *, regex: bool = False, glob: str = "*", apply: bool = False,
                     options: EditOptions | None = None) -> EditOutcome:
        edit, skipped = files.plan_find_replace(self.engine.workspace, query, replacement, regex=regex, glob=glob)
        return self._run("find_replace", edit, apply, options, Source.TEXT, Confidence.HIGH, files.skipped_notes(skipped))

    def search(self, query: str, *, regex: bool = False, glob: str = "*", limit: int = 200) -> tuple[list[files.Hit], int]:
        found = self.search_files(query, regex=regex, glob=glob, limit=limit)
        return found.hits, found.total

    def search_files(self, query: str, *, regex: bool = False, glob: str = "*", limit: int = 200) -> files.SearchResult:
        """:meth:`search` with the files the scan left out (dangling symlinks, loops), and why."""
        project = self.engine.graph().project
        return files.search(self.engine.workspace, query, regex=regex, glob=glob, limit=limit, enclosing=project.enclosing_name)

    def find_files(self, pattern: str) -> list[str]:
        return files.find_files(self.engine.workspace, pattern)

    def _outline_lines(self, path: str) -> list[str]:
        listing = self.engine.outline(path)
        return [f"{'  ' * (len(s.path) - 1)}{s.kind.label} {s.name_path} (line {s.range.first_line})"
                for top in listing.symbols for s in top.walk()]

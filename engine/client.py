"""The facade every front end talks to: one client of one workspace's :class:`Engine`.

A front end (MCP server, LSP server, batch CLI) parses a request into these calls, makes
one call, and renders the value it gets back. A client holds what is per connection: the
files it has read (so a write over unseen or changed content is refused). Every change
is a plan first; ``apply=False`` returns its diff, ``apply=True`` writes it through the
journaled apply (syntax check, new diagnostics, graph refresh) and returns the same
fields plus the transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine import files
from engine.api import Engine
from engine.edits.diff import summarize, unified_diff
from engine.edits.model import WorkspaceEdit
from engine.edits.session import EditOptions
from engine.errors import Refused
from engine.refactor.plan import RefactorPlan


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str
    added: int
    removed: int


@dataclass(frozen=True)
class EditResult:
    """What a change did (applied) or would do (dry run)."""

    operation: str
    applied: bool
    diff: str
    files: list[ChangedFile]
    edits: int
    source: str = "text"
    """Where the facts behind it came from: lsp, ast, regex, or text for plain file edits."""
    confidence: str = "high"
    warnings: list[str] = field(default_factory=list)
    transaction: str | None = None
    new_syntax_errors: list[str] = field(default_factory=list)
    new_diagnostics: list[str] = field(default_factory=list)
    """``file:line: message`` of errors the servers report that were not there before."""

    def to_json(self) -> dict[str, object]:
        """The shape the CLI's ``--json`` and the MCP tools return."""
        return {
            "operation": self.operation, "applied": self.applied, "diff": self.diff,
            "files": [vars(f) for f in self.files], "edits": self.edits, "source": self.source,
            "confidence": self.confidence, "warnings": self.warnings, "transaction": self.transaction,
            "new_diagnostics": self.new_diagnostics, "new_syntax_errors": self.new_syntax_errors,
        }

    def summary(self) -> str:
        head = f"{self.operation}: {'applied as ' + str(self.transaction) if self.applied else 'dry run'}; " \
               f"{len(self.files)} file(s), {self.edits} edit(s) from {self.source} ({self.confidence})"
        rows = [f"  {f.status:<9} {f.path}  +{f.added} -{f.removed}" for f in self.files]
        notes = [f"note: {w}" for w in self.warnings] + [f"new error: {d}" for d in self.new_diagnostics]
        return "\n".join([head, *rows, *notes])


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

    # -- changes ---------------------------------------------------------------------

    def run(self, plan: RefactorPlan, *, apply: bool = False, options: EditOptions | None = None) -> EditResult:
        """Preview or apply a refactoring plan."""
        return self._run(plan.operation, plan.edit, apply, options, plan.source.value, plan.confidence.value, plan.warnings)

    def run_edit(self, operation: str, edit: WorkspaceEdit, *, apply: bool = False, options: EditOptions | None = None) -> EditResult:
        """Preview or apply a plain file edit."""
        return self._run(operation, edit, apply, options, "text", "high", [])

    def _run(
        self, operation: str, edit: WorkspaceEdit, apply: bool, options: EditOptions | None,
        source: str, confidence: str, warnings: list[str],
    ) -> EditResult:
        session = self.engine.edits()
        states = session.preview(edit)
        diff = unified_diff(states)
        if not apply:
            changed = [ChangedFile(f.path, f.status, f.added, f.removed) for f in summarize(states)]
            return EditResult(operation, False, diff, changed, edit.edit_count, source, confidence, list(warnings))
        chosen = options or EditOptions(allow_dirty=self.engine.settings.allow_dirty)
        outcome = session.apply(edit, chosen)
        self.applied.append(outcome.applied.transaction)
        written = [ChangedFile(f.path, f.status, f.added, f.removed) for f in outcome.applied.files]
        for written_file in written:
            if written_file.status != "deleted":
                # The client has seen what it wrote: its next edit of the file needs no new read.
                self.ledger.record(written_file.path, self.engine.workspace.read(written_file.path).sha256)
        notes = [*warnings, outcome.diagnostics_note] if outcome.diagnostics_note else list(warnings)
        return EditResult(
            operation, True, diff, written, edit.edit_count, source, confidence, notes,
            outcome.applied.transaction, list(outcome.applied.new_syntax_errors),
            [f"{d.file}:{d.range.start.line + 1}: {d.message}" for d in outcome.new_diagnostics],
        )

    def undo(self, transaction: str | None = None) -> EditResult:
        if self.own_undo_only:
            if transaction is None and not self.applied:
                raise NotThisClientsTransaction("this session has applied nothing it could undo; another session's "
                                                "changes are undone from that session (or with `graft undo ID`)")
            if transaction is not None and transaction not in self.applied:
                raise NotThisClientsTransaction(f"transaction {transaction} was not applied by this session: undo it from "
                                                "the session that applied it (or with `graft undo ID`)")
            transaction = transaction or self.applied[-1]
        undone = self.engine.edits().undo(transaction)
        if undone.transaction in self.applied:
            self.applied.remove(undone.transaction)
        changed = [ChangedFile(f.path, f.status, f.added, f.removed) for f in undone.files]
        for restored in changed:
            if restored.status != "deleted" and (self.engine.workspace.root / restored.path).is_file():
                # The client knows what its undo restored: its next edit needs no new read.
                self.ledger.record(restored.path, self.engine.workspace.read(restored.path).sha256)
        return EditResult("undo", True, "", changed, 0, transaction=undone.transaction)

    # -- file tools ------------------------------------------------------------------

    def read_file(self, path: str, *, start: int = 1, end: int | None = None, outline: bool = False) -> files.FileView:
        return files.read(self.engine.workspace, self.ledger, path, start=start, end=end,
                          outline=self._outline_lines if outline else None)

    def write_file(self, path: str, content: str, *, overwrite_changed: bool = False, apply: bool = False) -> EditResult:
        edit = files.plan_write(self.engine.workspace, self.ledger, path, content, overwrite_changed=overwrite_changed)
        return self.run_edit("write_file", edit, apply=apply)

    def edit_file(self, request: files.EditRequest, *, apply: bool = False) -> EditResult:
        return self.run_edit("edit_file", files.plan_edit(self.engine.workspace, self.ledger, request), apply=apply)

    def find_replace(self, query: str, replacement: str, *, regex: bool = False, glob: str = "*", apply: bool = False) -> EditResult:
        edit = files.plan_find_replace(self.engine.workspace, query, replacement, regex=regex, glob=glob)
        return self.run_edit("find_replace", edit, apply=apply)

    def search(self, query: str, *, regex: bool = False, glob: str = "*", limit: int = 200) -> tuple[list[files.Hit], int]:
        project = self.engine.graph().project
        return files.search(self.engine.workspace, query, regex=regex, glob=glob, limit=limit, enclosing=project.enclosing_name)

    def find_files(self, pattern: str) -> list[str]:
        return files.find_files(self.engine.workspace, pattern)

    def _outline_lines(self, path: str) -> list[str]:
        listing = self.engine.outline(path)
        return [f"{'  ' * (len(s.path) - 1)}{s.kind.label} {s.name_path} (line {s.range.first_line})"
                for top in listing.symbols for s in top.walk()]

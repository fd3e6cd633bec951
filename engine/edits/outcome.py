"""What a change did, or would do: the one outcome value every edit path returns.

The journal's apply and undo, the apply with its checks (differential diagnostics, verify),
a refactoring previewed or applied through the client, and a batch all answer with an
:class:`EditOutcome`; each layer fills in what it knows (the journal: the transaction and the
files; the session: the checks; the client: the operation, its diff and provenance). Every
front end renders this one value, so ``graft rename --apply --json`` and the MCP rename
return the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.edits.diff import FileSummary
from engine.edits.verification import Verification
from engine.answers import Diagnostic
from engine.symbols import Confidence, Source


@dataclass(frozen=True)
class StepOutcome:
    """One step of a batch: what it acted on and what it touched."""

    index: int
    op: str
    target: str
    source: Source
    confidence: Confidence
    files: list[str]
    warnings: list[str]
    transaction: str | None = None
    verification: Verification | None = None
    """The check after this step's own apply (a batch run step by step); None when the steps were
    planned together and the batch's net change was checked as one."""

    def to_json(self) -> dict[str, object]:
        return {"step": self.index, "op": self.op, "target": self.target, "source": self.source.value,
                "confidence": self.confidence.value, "files": self.files, "warnings": self.warnings,
                "transaction": self.transaction,
                "verified": self.verification.to_json() if self.verification is not None else None}


@dataclass(frozen=True)
class EditOutcome:
    operation: str
    applied: bool
    files: list[FileSummary]
    transaction: str | None = None
    """The journal entry written (applied), else None."""
    edits: int = 0
    diff: str = ""
    source: Source = Source.TEXT
    """Where the facts behind the change came from; ``text`` for plain file edits."""
    confidence: Confidence = Confidence.HIGH
    warnings: list[str] = field(default_factory=list)
    new_syntax_errors: list[str] = field(default_factory=list)
    """Touched files that parsed before and do not now (written only when syntax errors were allowed)."""
    diagnostics_checked: bool = False
    """Whether a language server compared the touched files' errors before and after."""
    new_diagnostics: list[Diagnostic] = field(default_factory=list)
    diagnostics_note: str = ""
    """What the differential diagnostics compared, how long they took, what they left out and why."""
    diagnostics_complete: bool = True
    """False when the budget left files uncompared (the note names them; they are compared later)."""
    verify_output: str = ""
    """The tail of what the verify command printed, when it ran."""
    verification: Verification | None = None
    """What the check after an apply covered and found (None: nothing was written, or no check)."""
    steps: list[StepOutcome] = field(default_factory=list)
    """A batch's steps, in order."""
    would_refuse: dict[str, object] | None = None
    """A dry run's verdict: the refusal an apply with the same options would meet (its ``code``,
    ``message`` and ``option``), found by the same checks; None when it would be written."""
    reverted: str | None = None
    """An undo's: the transaction it reverted; a redo's: the transaction it re-applied."""

    def to_json(self) -> dict[str, object]:
        """The shape every front end's JSON has (the CLI's ``--json``, MCP's structured content)."""
        return {
            "operation": self.operation, "applied": self.applied, "transaction": self.transaction, "reverted": self.reverted,
            "files": [{"path": f.path, "status": f.status, "added": f.added, "removed": f.removed} for f in self.files],
            "edits": self.edits, "source": self.source.value, "confidence": self.confidence.value, "warnings": self.warnings,
            "new_syntax_errors": self.new_syntax_errors, "diagnostics_checked": self.diagnostics_checked,
            "new_diagnostics": [{"file": d.file, "line": d.range.start.line + 1, "message": d.message, "source": d.source,
                                 "code": d.code} for d in self.new_diagnostics],
            "diagnostics_note": self.diagnostics_note, "diagnostics_complete": self.diagnostics_complete,
            "verify_output": self.verify_output,
            "verified": self.verification.to_json() if self.verification is not None else None,
            "steps": [step.to_json() for step in self.steps], "would_refuse": self.would_refuse, "diff": self.diff,
        }

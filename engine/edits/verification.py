"""What an apply's check covered, as data, and how far that lets its answer be trusted.

The check after an apply compares each file's errors before and after the write, over a known
scope: the files written and every file that imports them, transitively (tests that reach a
module through a re-exporting package included), nearest first, up to :data:`SCOPE_LIMIT`;
where the project graph says what imports what, only the importers that can see a name the edit
changed (engine.edits.check_scope), the others counted (``not_affected``).
A :class:`Verification` says how much of that scope was compared, what it found, what is still
to be compared (``pending``: the budget ran out; the rest is finished later) and what cannot be
(``unchecked``, with the reason), and who checked (``by``: the servers that answered, or
``syntax only``). The answer's confidence follows that coverage (:meth:`Verification.label`):
``high`` only when every file in scope was compared with no new error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from engine.answers import Diagnostic
from engine.positions import Position, Range
from engine.symbols import Confidence

SCOPE_LIMIT = 200
"""Importers compared at most, nearest first; the rest are counted and lower the confidence."""

SYNTAX_ONLY = "syntax only"


class CheckMode(str, Enum):
    NONE = "none"
    """No comparison at all: the answer says so, and is not ``high``."""
    FAST = "fast"
    """Within the diagnostics budget; past it the apply is kept and the rest is finished later."""
    FULL = "full"
    """The whole scope, however long it takes (``--fail-on-new-errors`` implies it)."""


@dataclass(frozen=True)
class Unchecked:
    path: str
    reason: str
    """Why it cannot be compared: no checking server for its language, no baseline had before the
    write, the server had not finished analysing it."""


@dataclass(frozen=True)
class Verification:
    mode: CheckMode
    in_scope: tuple[str, ...]
    """The files written, then their importers, nearest first (at most SCOPE_LIMIT importers)."""
    checked: tuple[str, ...]
    """Of those, the files compared before and after the write."""
    new_errors: tuple[Diagnostic, ...] = ()
    fixed_errors: tuple[Diagnostic, ...] = ()
    pending: tuple[str, ...] = ()
    """In scope, with a baseline, not compared yet: the budget ran out (finished later)."""
    unchecked: tuple[Unchecked, ...] = ()
    beyond_scope: int = 0
    """Importers past SCOPE_LIMIT, never compared."""
    by: tuple[str, ...] = ()
    """The servers that answered; none: only the syntax was checked."""
    seconds: float = 0.0
    scope_unknown: str = ""
    """Why the importers could not be found (the project graph could not be loaded, or follows no
    imports in a written file's language); '' when they were."""
    not_affected: int = 0
    """Importers of the written files, transitively, left out of the scope: they use none of the
    names the edit changed (engine.edits.check_scope)."""

    @property
    def complete(self) -> bool:
        """Every file in scope compared by a server."""
        return (self.mode is not CheckMode.NONE and bool(self.by) and not self.pending and not self.unchecked
                and not self.beyond_scope and not self.scope_unknown and len(self.checked) == len(self.in_scope))

    @property
    def checker(self) -> str:
        return ", ".join(self.by) if self.by else SYNTAX_ONLY

    def label(self) -> tuple[Confidence, str]:
        """The most this check lets an answer claim, and why it is not more ('' for ``high``)."""
        if self.mode is CheckMode.NONE:
            return Confidence.MEDIUM, "not verified: the check was turned off (--check none)"
        if self.new_errors:
            return Confidence.LOW, f"{len(self.new_errors)} new error(s) in {_listed(sorted({d.file for d in self.new_errors}))}"
        missing = [] if self.by else [f"{SYNTAX_ONLY}: no language server checked these files"]
        if self.scope_unknown:
            missing.append(f"importers not checked: {self.scope_unknown}")
        if self.pending:
            # One short clause on every apply that outruns the budget: the files are in the JSON's
            # `pending`, and what the user does about them is one command.
            missing.append(f"{len(self.pending)} file(s) not checked yet: budget (`graft check --last` when done)")
        if self.unchecked:
            missing.append(f"{len(self.unchecked)} file(s) not checked: {self._unchecked_reason()}")
        if self.beyond_scope:
            missing.append(f"{self.beyond_scope} importer(s) past the {SCOPE_LIMIT}-file scope not checked")
        accounted = {*self.checked, *self.pending, *(u.path for u in self.unchecked)}
        unanswered = [p for p in self.in_scope if p not in accounted]
        if unanswered:
            missing.append(f"{len(unanswered)} file(s) not checked: no diagnostics were had for them ({_listed(unanswered)})")
        if missing:
            return Confidence.MEDIUM, "; ".join(missing)
        return Confidence.HIGH, ""

    def summary(self) -> str:
        """One line: ``checked N of N file(s): no new errors (CHECKER, SECONDS s)``."""
        if self.mode is CheckMode.NONE:
            return "not verified (--check none)"
        total = len(self.in_scope) + self.beyond_scope
        found = f"{len(self.new_errors)} new error(s)" if self.new_errors else "no new errors"
        if self.fixed_errors:
            found += f", {len(self.fixed_errors)} fixed"
        line = f"checked {len(self.checked)} of {total} file(s): {found} ({self.checker}, {self.seconds:.1f} s)"
        if self.not_affected:
            line += f"; {self.not_affected} more importer(s) use none of the names it changed"
        _confidence, reason = self.label()
        return f"{line}; {reason}" if reason and not self.new_errors else line

    def _unchecked_reason(self) -> str:
        reasons: dict[str, list[str]] = {}
        for item in self.unchecked:
            reasons.setdefault(item.reason, []).append(item.path)
        return "; ".join(f"{reason} ({_listed(paths)})" for reason, paths in reasons.items())

    def finished_with(self, compared: list[str], new_errors: list[Diagnostic], seconds: float) -> Verification:
        """This check once ``compared`` of its pending files were compared later, finding ``new_errors``."""
        done = set(compared)
        return replace(self, checked=tuple([*self.checked, *(p for p in self.pending if p in done)]),
                       pending=tuple(p for p in self.pending if p not in done),
                       new_errors=tuple([*self.new_errors, *new_errors]), seconds=self.seconds + seconds)

    @staticmethod
    def from_json(data: Any) -> Verification:
        """The value :meth:`to_json` wrote (with the paths in full); ValueError when it is not one."""
        try:
            return Verification(
                CheckMode(data["mode"]), tuple(map(str, data["scope"])), tuple(map(str, data["checked"])),
                tuple(_diagnostic_from_json(d) for d in data["new_errors"]),
                tuple(_diagnostic_from_json(d) for d in data["fixed_errors"]), tuple(map(str, data["pending"])),
                tuple(Unchecked(str(u["path"]), str(u["reason"])) for u in data["unchecked"]), int(data["beyond_scope"]),
                tuple(map(str, data["servers"])), float(data["seconds"]), str(data.get("scope_unknown", "")),
                int(data.get("not_affected", 0)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"not a kept check: {error}") from None

    def to_json(self) -> dict[str, object]:
        confidence, reason = self.label()
        return {
            "mode": self.mode.value, "by": self.checker, "servers": list(self.by), "scope": list(self.in_scope),
            "checked": list(self.checked), "files_in_scope": len(self.in_scope) + self.beyond_scope,
            "files_checked": len(self.checked), "complete": self.complete,
            "new_errors": [_diagnostic_json(d) for d in self.new_errors],
            "fixed_errors": [_diagnostic_json(d) for d in self.fixed_errors],
            "pending": list(self.pending), "unchecked": [{"path": u.path, "reason": u.reason} for u in self.unchecked],
            "beyond_scope": self.beyond_scope, "scope_unknown": self.scope_unknown, "not_affected": self.not_affected,
            "seconds": round(self.seconds, 3),
            "confidence": confidence.value, "reason": reason,
        }


_ORDER = {Confidence.HIGH: 2, Confidence.MEDIUM: 1, Confidence.LOW: 0}


def capped(confidence: Confidence, cap: Confidence) -> Confidence:
    """The lower of the two."""
    return confidence if _ORDER[confidence] <= _ORDER[cap] else cap


def _diagnostic_json(diagnostic: Diagnostic) -> dict[str, object]:
    return {"file": diagnostic.file, "line": diagnostic.range.start.line + 1, "column": diagnostic.range.start.column + 1,
            "message": diagnostic.message, "source": diagnostic.source, "code": diagnostic.code}


def _diagnostic_from_json(data: Any) -> Diagnostic:
    start = Position(int(data["line"]) - 1, int(data.get("column", 1)) - 1)
    return Diagnostic(str(data["file"]), Range(start, start), "error", str(data["message"]), str(data["source"]), str(data["code"]))


def _listed(paths: list[str], shown: int = 3) -> str:
    more = len(paths) - shown
    return ", ".join(paths[:shown]) + (f" and {more} more" if more > 0 else "")

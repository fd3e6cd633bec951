"""An :class:`~engine.edits.outcome.EditOutcome` as text: one rendering for the CLI and MCP.

The JSON shape is the outcome's own (``EditOutcome.to_json``). The text is short because agents
read it in a context window: a head line (what, applied or dry run, how many edits, from which
source; the file too when there is one), the diff of a dry run, one row per file when there are
more (``path +added -removed``), and a tail that says how to write it in the front end showing it.
Warnings, new errors and the checks' notes go to ``notes`` (stderr in the CLI).
"""

from __future__ import annotations

from typing import Callable

from engine.api_surface import EditOutcome, FileSummary, paint, Verification
from frontends.render.terminal import Painted, printable


def outcome_text(
    outcome: EditOutcome, *, target: str = "", apply_hint: str = "", colour: bool = False,
    option_hint: Callable[[str | None], str] = lambda option: "", finish_hint: str = "",
) -> tuple[str, str]:
    """(text, notes). ``apply_hint`` says how to write a dry run here (``pass --apply``);
    ``option_hint`` how to set an option a refusal names, in this front end's terms;
    ``finish_hint`` how to finish a diagnostics check the budget cut short."""
    what = f"{outcome.operation} {target}".strip()
    state = f"applied as transaction {outcome.transaction}" if outcome.applied else "dry run"
    rows = [f"step {s.index}: {s.op} {s.target}  [{s.source.value} · {s.confidence.value}]  {len(s.files)} file(s)"
            for s in outcome.steps]
    files = [_file_row(f) for f in outcome.files]
    one_file = len(files) == 1 and not rows  # its row fits on the head line
    if outcome.operation in ("undo", "redo"):  # before-images written back: no edits, no facts behind them
        done = f"{'undid' if outcome.operation == 'undo' else 'redid'} {outcome.reverted}; " if outcome.reverted else ""
        head = f"{what}: {state}; {done}" + (f"restored {files[0]}" if one_file else f"{len(files)} file(s) restored")
    else:
        head = (f"{what}: {state}; {outcome.edits} edit(s) from {outcome.source.value} ({outcome.confidence.value})"
                + (_one_file(outcome.files[0], target) if one_file else ""))
    if not one_file:
        rows += [f"  {row}" for row in files]
    diff = outcome.diff if not outcome.applied else ""
    tail = "" if outcome.applied else "dry run: nothing written" + (f" ({apply_hint})" if apply_hint else "")
    refusal = outcome.would_refuse
    if refusal is not None:
        option = refusal.get("option")
        tail = (f"dry run: an apply would be refused: {refusal['code']}: {refusal['message']}"
                f"{option_hint(option if isinstance(option, str) else None)}")
    diff = diff.rstrip("\n")
    if colour:  # file names made printable first: only the colours' own escapes reach the terminal
        head, rows, tail = printable(head), [printable(row) for row in rows], printable(tail)
        diff = paint(printable(diff))
    text = "\n".join(part for part in [head, diff, *rows, tail] if part)
    return (Painted(text) if colour else text), notes_text(outcome, finish_hint)


def _one_file(summary: FileSummary, target: str) -> str:
    """The one file's row for the head line; the path is left out where the target names it."""
    if summary.status == "modified" and target.partition(":")[0] == summary.path:
        return f", +{summary.added} -{summary.removed}"
    return f" in {_file_row(summary)}"


def _file_row(summary: FileSummary) -> str:
    """``path +3 -1``; a status only where it is not the usual ``modified``."""
    status = "" if summary.status == "modified" else f"{summary.status} "
    return f"{status}{summary.path} +{summary.added} -{summary.removed}"


def notes_text(outcome: EditOutcome, finish_hint: str = "") -> str:
    notes = [f"note: {warning}" for warning in outcome.warnings]
    notes += [f"warning: {path} no longer parses (syntax errors were allowed)" for path in outcome.new_syntax_errors]
    notes += [f"new error: {d.file}:{d.range.start.line + 1}: {d.message}" for d in outcome.new_diagnostics]
    if outcome.diagnostics_note:
        unfinished = not outcome.diagnostics_complete and finish_hint
        notes.append(f"note: {outcome.diagnostics_note}" + (f" ({finish_hint})" if unfinished else ""))
    if outcome.verify_output.strip():
        notes.append(f"verify passed: {outcome.verify_output.strip().splitlines()[-1]}")
    return "\n".join(notes)


def last_check(result: tuple[str, Verification] | None) -> tuple[dict[str, object], str, str]:
    """``graft check --last`` (and MCP's ``check_edit``): (JSON, text, notes)."""
    if result is None:
        return {"transaction": None, "verified": None}, "no apply in this workspace has kept a check", ""
    transaction, verification = result
    rows = [f"  new error: {d.file}:{d.range.start.line + 1}: {d.message}" for d in verification.new_errors]
    rows += [f"  fixed: {d.file}:{d.range.start.line + 1}: {d.message}" for d in verification.fixed_errors]
    confidence, reason = verification.label()
    notes = [f"note: confidence {confidence.value}: {reason}"] if reason else []
    notes += [f"note: not checked: {u.path}: {u.reason}" for u in verification.unchecked]
    text = "\n".join([f"transaction {transaction}: {verification.summary()}", *rows])
    return {"transaction": transaction, "verified": verification.to_json()}, text, "\n".join(notes)

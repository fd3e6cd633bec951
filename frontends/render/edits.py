"""An :class:`~engine.edits.outcome.EditOutcome` as text: one rendering for the CLI and MCP.

The JSON shape is the outcome's own (``EditOutcome.to_json``). The text is a head line
(what, applied or dry run, how many files and edits, from which source), the diff of a dry
run, one row per file, and a tail that says how to write it in the front end showing it.
Warnings, new errors and the checks' notes go to ``notes`` (stderr in the CLI).
"""

from __future__ import annotations

from typing import Callable

from engine.edits.diff import paint
from engine.edits.outcome import EditOutcome


def outcome_text(
    outcome: EditOutcome, *, target: str = "", apply_hint: str = "", colour: bool = False,
    option_hint: Callable[[str | None], str] = lambda option: "",
) -> tuple[str, str]:
    """(text, notes). ``apply_hint`` says how to write a dry run here (``pass --apply``);
    ``option_hint`` how to set an option a refusal names, in this front end's terms."""
    what = f"{outcome.operation} {target}".strip()
    state = f"applied as transaction {outcome.transaction}" if outcome.applied else "dry run"
    if outcome.operation == "undo":  # before-images written back: no edits, no facts behind them
        head = f"{what}: {state}; {len(outcome.files)} file(s) restored"
    else:
        head = f"{what}: {state}; {len(outcome.files)} file(s), {outcome.edits} edit(s) from {outcome.source.value} ({outcome.confidence.value})"
    rows = [f"step {s.index}: {s.op} {s.target}  [{s.source.value} · {s.confidence.value}]  {len(s.files)} file(s)"
            for s in outcome.steps]
    rows += [f"  {f.status:<9} {f.path}  +{f.added} -{f.removed}" for f in outcome.files]
    diff = (paint(outcome.diff) if colour else outcome.diff) if not outcome.applied else ""
    tail = "" if outcome.applied else "dry run: nothing written" + (f" ({apply_hint})" if apply_hint else "")
    refusal = outcome.would_refuse
    if refusal is not None:
        option = refusal.get("option")
        tail = (f"dry run: an apply would be refused: {refusal['code']}: {refusal['message']}"
                f"{option_hint(option if isinstance(option, str) else None)}")
    text = "\n".join(part for part in [head, diff.rstrip("\n"), *rows, tail] if part)
    return text, notes_text(outcome)


def notes_text(outcome: EditOutcome) -> str:
    notes = [f"note: {warning}" for warning in outcome.warnings]
    notes += [f"warning: {path} no longer parses (syntax errors were allowed)" for path in outcome.new_syntax_errors]
    notes += [f"new error: {d.file}:{d.range.start.line + 1}: {d.message}" for d in outcome.new_diagnostics]
    if outcome.diagnostics_note:
        notes.append(f"note: {outcome.diagnostics_note}")
    if outcome.verify_output.strip():
        notes.append(f"verify passed: {outcome.verify_output.strip().splitlines()[-1]}")
    return "\n".join(notes)

"""``graft apply``, ``graft undo``, ``graft redo``, ``graft history``, ``graft recover``, and the refactoring commands (operation_commands)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from engine.api_surface import edits_without_base, Engine, EngineClient, from_lsp, MalformedEdit, PositionEncoding
from frontends.cli import operation_commands
from frontends.render.edits import outcome_text

Result = tuple[dict[str, object], str, str]

def run_apply(engine: Engine, args: argparse.Namespace) -> Result:
    try:
        data = json.loads(Path(args.edit_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MalformedEdit(f"cannot read {args.edit_file} as JSON: {error}") from None
    edit = from_lsp(data, engine.workspace, PositionEncoding(args.encoding))
    outcome = EngineClient(engine).run_edit("apply", edit, apply=args.write, options=operation_commands.edit_options(engine, args))
    unbased = edits_without_base(data, engine.workspace)
    if unbased:
        # Nothing says which content the positions were computed on: they apply to the files as they are now.
        warning = (f"no base for {', '.join(unbased)}: the edit carries no graft:sha256 for it, so it applies to the file "
                   "as it is now (a file on disk has no document version to check)")
        outcome = replace(outcome, warnings=[*outcome.warnings, warning])
    colour = sys.stdout.isatty() and not args.json
    text, notes = outcome_text(outcome, target=args.edit_file, apply_hint=operation_commands.APPLY_HINT, option_hint=operation_commands.option_hint, colour=colour,
                               finish_hint=operation_commands.FINISH_HINT)
    return outcome.to_json(), text, notes


def run_undo(engine: Engine, args: argparse.Namespace) -> Result:
    undone = EngineClient(engine).undo(args.transaction, request=getattr(args, "request", None))
    text, _notes = outcome_text(undone, target=args.transaction or "")
    return undone.to_json(), text, _quarantine_notes(engine)


def run_redo(engine: Engine, args: argparse.Namespace) -> Result:
    redone = EngineClient(engine).redo(args.transaction, request=getattr(args, "request", None))
    text, _notes = outcome_text(redone, target=args.transaction or "")
    return redone.to_json(), text, _quarantine_notes(engine)


def run_history(engine: Engine, args: argparse.Namespace) -> Result:
    records = engine.transactions.history()
    rows = [
        f"{r.id}  {_when(r.created)}  {r.kind:<5} {len(r.entries)} file(s){'  (undone)' if r.undone else ''}  "
        + ", ".join(e.path for e in r.entries[:4]) + (" …" if len(r.entries) > 4 else "")
        for r in records
    ]
    data = [
        {"transaction": r.id, "created": _when(r.created), "kind": r.kind, "undone": r.undone,
         "files": [e.path for e in r.entries]}
        for r in records
    ]
    return {"transactions": data}, "\n".join(rows) or "(no transactions)", _quarantine_notes(engine)


def _quarantine_notes(engine: Engine) -> str:
    """History records that failed validation while being listed (moved aside, said once)."""
    return "\n".join(f"note: {moved.message()}" for moved in engine.transactions.journal.quarantined)


def run_recover(engine: Engine, args: argparse.Namespace) -> Result:
    reports = engine.recovered + engine.transactions.recover()
    rows = [f"{r.transaction}: {r.action} ({', '.join(r.files)})" + (f": {r.reason}" if r.reason else "") for r in reports]
    data = [{"transaction": r.transaction, "action": r.action, "files": r.files, "reason": r.reason, "code": r.code} for r in reports]
    return {"recovered": data}, "\n".join(rows) or "nothing to recover", ""


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")

"""``graft apply``, ``graft undo``, ``graft history``, ``graft recover``, and the refactoring commands (operation_commands)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from engine.api import Engine
from engine.client import EngineClient
from engine.edits.lsp_json import MalformedEdit, edits_without_base, from_lsp
from engine.positions import PositionEncoding
from frontends.cli import operation_commands
from frontends.render.edits import outcome_text
from frontends.cli.parsing import Commands, GraftParser

Result = tuple[dict[str, object], str, str]

#: Commands besides the refactorings (engine.refactor.operations) that may write files (and so consult git).
WRITING_COMMANDS = frozenset({"apply", "undo", "batch", "write-file", "edit-file", "find-replace"})


def apply_options() -> GraftParser:
    """The flags every editing command shares: dry run by default, --apply and its guards."""
    options = GraftParser(add_help=False)
    options.add_argument("--apply", dest="write", action="store_true", help="write the files (default: dry run, print the diff)")
    options.add_argument("--allow-dirty", action="store_true", help="write files that have uncommitted changes")
    options.add_argument("--allow-syntax-errors", action="store_true", help="write even if a file stops parsing")
    options.add_argument("--force", action="store_true", help="write files whose mode denies writing (their mode is kept)")
    options.add_argument("--fail-on-new-errors", action="store_true",
                         help="roll back when the language server reports errors the edit introduced")
    options.add_argument("--verify", metavar="CMD", help="run CMD after applying; roll back if it fails")
    return options


def add_parsers(commands: Commands, common: GraftParser) -> None:
    options = apply_options()
    apply = commands.add_parser("apply", parents=[common, options], help="preview or apply an LSP WorkspaceEdit (JSON file)")
    apply.add_argument("edit_file", metavar="EDIT.json", help="an LSP WorkspaceEdit; file:// URIs or workspace-relative paths")
    apply.add_argument("--encoding", choices=[e.value for e in PositionEncoding], default="utf-16",
                       help="how the edit's columns are counted (default: utf-16, as in LSP)")
    operation_commands.add_parsers(commands, common, options)
    undo = commands.add_parser("undo", parents=[common], help="undo the last transaction (or TXN)")
    undo.add_argument("transaction", nargs="?", metavar="TXN")
    commands.add_parser("history", parents=[common], help="transactions applied in this workspace")
    commands.add_parser("recover", parents=[common], help="roll back transactions a crash interrupted")


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
    text, notes = outcome_text(outcome, target=args.edit_file, apply_hint=operation_commands.APPLY_HINT, option_hint=operation_commands.option_hint, colour=colour)
    return outcome.to_json(), text, notes


def run_undo(engine: Engine, args: argparse.Namespace) -> Result:
    undone = EngineClient(engine).undo(args.transaction)
    text, _notes = outcome_text(undone, target=args.transaction or "")
    return undone.to_json(), text, _quarantine_notes(engine)


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
    data = [{"transaction": r.transaction, "action": r.action, "files": r.files, "reason": r.reason} for r in reports]
    return {"recovered": data}, "\n".join(rows) or "nothing to recover", ""


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")

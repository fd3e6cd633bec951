"""``graft apply``, ``graft undo``, ``graft history`` and ``graft recover``."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

from engine.api import Engine
from engine.edits.diff import FileSummary, summarize, unified_diff
from engine.edits.lsp_json import MalformedEdit, edits_without_base, from_lsp
from engine.edits.model import WorkspaceEdit
from engine.edits.session import EditOptions
from engine.errors import UsageError
from engine.positions import PositionEncoding

Result = tuple[dict[str, object], str, str]

#: Commands that may write files (and so consult git for uncommitted changes).
WRITING_COMMANDS = frozenset({"apply", "undo", "replace", "insert-before", "insert-after", "delete", "rename", "move", "rename-file",
                              "batch", "write-file", "edit-file", "find-replace"})


def apply_options() -> argparse.ArgumentParser:
    """The flags every editing command shares: dry run by default, --apply and its guards."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--apply", dest="write", action="store_true", help="write the files (default: dry run, print the diff)")
    options.add_argument("--allow-dirty", action="store_true", help="write files that have uncommitted changes")
    options.add_argument("--allow-syntax-errors", action="store_true", help="write even if a file stops parsing")
    options.add_argument("--force", action="store_true", help="write files whose mode denies writing (their mode is kept)")
    options.add_argument("--fail-on-new-errors", action="store_true",
                         help="roll back when the language server reports errors the edit introduced")
    options.add_argument("--verify", metavar="CMD", help="run CMD after applying; roll back if it fails")
    return options


def add_parsers(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    options = apply_options()
    apply = commands.add_parser("apply", parents=[common, options], help="preview or apply an LSP WorkspaceEdit (JSON file)")
    apply.add_argument("edit_file", metavar="EDIT.json", help="an LSP WorkspaceEdit; file:// URIs or workspace-relative paths")
    apply.add_argument("--encoding", choices=[e.value for e in PositionEncoding], default="utf-16",
                       help="how the edit's columns are counted (default: utf-16, as in LSP)")
    replace = commands.add_parser("replace", parents=[common, options], help="replace a symbol's whole declaration")
    replace.add_argument("address", metavar="ADDRESS")
    replace.add_argument("--body-file", required=True, metavar="F", help="the new declaration (re-indented to fit)")
    replace.add_argument("--include-doc-comment", action="store_true", help="replace the doc comment above it too")
    for name, where in (("insert-before", "before"), ("insert-after", "after")):
        insert = commands.add_parser(name, parents=[common, options], help=f"insert text {where} a symbol")
        insert.add_argument("address", metavar="ADDRESS")
        insert.add_argument("--text-file", required=True, metavar="F")
    delete = commands.add_parser("delete", parents=[common, options], help="delete a symbol nothing else refers to")
    delete.add_argument("address", metavar="ADDRESS")
    rename = commands.add_parser("rename", parents=[common, options], help="rename a symbol across the workspace")
    rename.add_argument("address", metavar="ADDRESS", help="a name path, or FILE:LINE:COL for parameters and locals")
    rename.add_argument("new_name", metavar="NEW_NAME")
    rename.add_argument("--text", action="store_true",
                        help="without a language server (outside Python), rename identifier-bounded occurrences (low confidence)")
    rename.add_argument("--no-mirrors", dest="mirrors", action="store_false",
                        help="leave the own bindings of mirror modules (curried, compat twins that re-bind the defining "
                             "module's public names) as they are; by default they are renamed too")
    move = commands.add_parser("move", parents=[common, options], help="move a top-level Python symbol to another module")
    move.add_argument("address", metavar="ADDRESS", help="a top-level function, class or constant")
    move.add_argument("dest", metavar="DEST_FILE", help="the module to move it to (workspace path)")
    move.add_argument("--create", action="store_true", help="create DEST_FILE if it does not exist")
    move.add_argument("--shim", action="store_true",
                      help="leave `from DEST import NAME` in the source for backward compatibility")
    rename_file = commands.add_parser("rename-file", parents=[common, options], help="move a module file and update its importers")
    rename_file.add_argument("old", metavar="OLD")
    rename_file.add_argument("new", metavar="NEW")
    for parser in (move, rename_file):
        parser.add_argument("--no-import-check", dest="import_check", action="store_false",
                            help="do not import the touched modules with the plan applied (in a scratch copy under .graft) "
                                 "before accepting it; by default a plan that breaks an import is refused")
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
    payload, text, notes = _preview_or_apply(engine, args, edit)
    unbased = edits_without_base(data, engine.workspace)
    if unbased:
        # Nothing says which content the positions were computed on: they apply to the files as they are now.
        warning = (f"no base for {', '.join(unbased)}: the edit carries no graft:sha256 for it, so it applies to the file "
                   "as it is now (a file on disk has no document version to check)")
        payload["warnings"] = [warning]
        notes = "\n".join(filter(None, [notes, f"note: {warning}"]))
    return payload, text, notes


def run_symbol_edit(engine: Engine, args: argparse.Namespace) -> Result:
    if args.command == "delete":
        plan = engine.plan_delete(args.address)
    elif args.command == "rename-file":
        plan = engine.plan_rename_file(args.old, args.new, import_check=args.import_check)
    elif args.command == "move":
        plan = engine.plan_move(args.address, args.dest, create=args.create, shim=args.shim, import_check=args.import_check)
    elif args.command == "rename":
        plan = engine.plan_rename(args.address, args.new_name, text=args.text, mirrors=args.mirrors)
    elif args.command == "replace":
        plan = engine.plan_replace(args.address, _read_text(args.body_file), include_doc_comment=args.include_doc_comment)
    else:
        plan = engine.plan_insert(args.address, _read_text(args.text_file), before=args.command == "insert-before")
    payload, text, notes = _preview_or_apply(engine, args, plan.edit)
    header = (
        f"{plan.operation} {getattr(args, 'address', None) or f'{args.old} -> {args.new}'}: symbols from {plan.source.value} ({plan.confidence.value}), "
        f"{len(plan.files)} file(s), {plan.edit.edit_count} edit(s)"
    )
    payload = {"operation": plan.operation, "source": plan.source.value, "confidence": plan.confidence.value,
               "warnings": plan.warnings, **payload}
    warnings = "\n".join(f"note: {w}" for w in plan.warnings)
    return payload, f"{header}\n{text}", "\n".join(filter(None, [warnings, notes]))


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None


def _preview_or_apply(engine: Engine, args: argparse.Namespace, edit: WorkspaceEdit) -> Result:
    session = engine.edits()
    if not args.write:
        states = session.preview(edit)
        summary = summarize(states)
        diff = unified_diff(states, colour=sys.stdout.isatty() and not args.json)
        payload = {"applied": False, "files": _files(summary), "edits": edit.edit_count, "diff": unified_diff(states)}
        return payload, "\n".join(filter(None, [diff, _summary_text(summary, dry_run=True)])), ""
    options = EditOptions(
        allow_dirty=args.allow_dirty or engine.settings.allow_dirty, allow_syntax_errors=args.allow_syntax_errors, force=args.force,
        fail_on_new_errors=args.fail_on_new_errors, verify=args.verify,
    )
    outcome = session.apply(edit, options)
    applied = outcome.applied
    payload = {
        "applied": True, "transaction": applied.transaction, "files": _files(applied.files),
        "new_syntax_errors": applied.new_syntax_errors, "diagnostics_checked": outcome.diagnostics_checked,
        "new_diagnostics": [
            {"file": d.file, "line": d.range.start.line + 1, "message": d.message, "source": d.source, "code": d.code}
            for d in outcome.new_diagnostics
        ],
    }
    notes = [f"warning: {path} no longer parses (--allow-syntax-errors)" for path in applied.new_syntax_errors]
    notes += [f"new error: {d.file}:{d.range.start.line + 1}: {d.message}" for d in outcome.new_diagnostics]
    if outcome.diagnostics_note:
        notes.append(f"note: {outcome.diagnostics_note}")
        payload["diagnostics_note"] = outcome.diagnostics_note
    if outcome.verify_output.strip():
        notes.append(f"verify passed: {outcome.verify_output.strip().splitlines()[-1]}")
        payload["verify_output"] = outcome.verify_output
    text = f"applied transaction {applied.transaction}\n{_summary_text(applied.files, dry_run=False)}"
    return payload, text, "\n".join(notes)


def run_undo(engine: Engine, args: argparse.Namespace) -> Result:
    undone = engine.edits().undo(args.transaction)
    text = f"undid it as transaction {undone.transaction}\n{_summary_text(undone.files, dry_run=False)}"
    return {"transaction": undone.transaction, "files": _files(undone.files)}, text, _quarantine_notes(engine)


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


def _files(summary: list[FileSummary]) -> list[dict[str, object]]:
    return [{"path": f.path, "status": f.status, "added": f.added, "removed": f.removed} for f in summary]


def _summary_text(summary: list[FileSummary], *, dry_run: bool) -> str:
    rows = [f"  {f.status:<9} {f.path}  +{f.added} -{f.removed}" for f in summary]
    tail = "dry run: nothing written (pass --apply to write)" if dry_run else f"{len(summary)} file(s) written"
    return "\n".join([*rows, tail])


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")

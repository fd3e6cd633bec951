"""The file tools on the command line (the same facade the MCP tools use).

A command line has no connection to remember reads by, so the read-before-write rule
takes the file's hash instead: ``write-file`` and ``edit-file`` need ``--expect-sha256``
(printed by ``read-file``) or ``--overwrite-changed``.
"""

from __future__ import annotations

import argparse
import sys

from engine.api_surface import EditOutcome, EditRequest, Engine, EngineClient, UsageError
from frontends.cli.operation_commands import APPLY_HINT, FINISH_HINT, edit_options, option_hint, read_text
from frontends.render.edits import outcome_text
from frontends.render.symbols import skipped_json, skipped_text

Result = tuple[dict[str, object], str, str]


def run_read_file(engine: Engine, args: argparse.Namespace) -> Result:
    client = EngineClient(engine)
    views = [client.read_file(path, start=args.start, end=args.end, outline=args.outline) for path in args.paths]
    if len(views) == 1:
        return dict(vars(views[0])), views[0].render(), ""
    return {"files": [vars(v) for v in views]}, "\n\n".join(v.render() for v in views), ""


def run_write(engine: Engine, args: argparse.Namespace) -> Result:
    client = EngineClient(engine)
    if args.expect_sha256:
        relative, _absolute = engine.workspace.resolve(args.path)
        client.ledger.record(relative, args.expect_sha256)
    elif not args.overwrite_changed and (engine.workspace.root / args.path).exists():
        raise UsageError(f"{args.path} exists: pass --expect-sha256 (from read-file) or --overwrite-changed")
    apply, options = args.write, edit_options(engine, args)
    if args.command == "write-file":
        result = client.write_file(args.path, read_text(args.content_file), overwrite_changed=args.overwrite_changed,
                                   apply=apply, options=options)
    else:
        request = EditRequest(args.path, read_text(args.new_file), read_text(args.old_file) if args.old_file else None,
                              args.start_anchor, args.end_anchor, args.start_line, args.end_line, args.overwrite_changed)
        result = client.edit_file(request, apply=apply, options=options)
    return edit_result(result, args)


def run_find_replace(engine: Engine, args: argparse.Namespace) -> Result:
    client = EngineClient(engine)
    result = client.find_replace(args.query, args.replacement, regex=args.regex, glob=args.glob, apply=args.write,
                                 options=edit_options(engine, args))
    return edit_result(result, args)


def run_search(engine: Engine, args: argparse.Namespace) -> Result:
    found = EngineClient(engine).search_files(args.query, regex=args.regex, glob=args.glob, limit=args.limit)
    hits, total = found.hits, found.total
    rows = [f"{h.path}:{h.line}:{h.column}  [{h.symbol or 'module'}]  {h.text}" for h in hits]
    more = f"… {total - len(hits)} more (raise --limit)" if total > len(hits) else ""
    return ({"hits": [vars(h) for h in hits], "total": total, "skipped": skipped_json(found.skipped)},
            "\n".join(filter(None, [*rows, more])) or "(no hits)", skipped_text(found.skipped))


def run_find_files(engine: Engine, args: argparse.Namespace) -> Result:
    found = EngineClient(engine).find_files(args.pattern)
    return {"files": found}, "\n".join(found) or "(none)", ""


def edit_result(outcome: EditOutcome, args: argparse.Namespace) -> Result:
    text, notes = outcome_text(outcome, target=getattr(args, "path", ""), apply_hint=APPLY_HINT, option_hint=option_hint,
                               finish_hint=FINISH_HINT,
                               colour=sys.stdout.isatty() and not args.json)
    return outcome.to_json(), text, notes

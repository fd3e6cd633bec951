"""``graft`` in-process: one facade call per command, rendering, exit status. The grammar is
frontends.cli.arguments; the thin client (frontends.cli.entry) calls :func:`main` here, or
hands the call to the workspace's daemon, which calls :func:`main` with its warm engines.

Exit status: 0 success; 1 refused (not found, ambiguous, unsafe path,
unreadable file), with the reason on stderr and, with ``--json``, in the JSON
on stdout; 2 usage error (bad arguments, malformed address).
"""

from __future__ import annotations

import argparse
import functools
import importlib
from importlib.metadata import entry_points
import json
import sys
from pathlib import Path
from typing import Callable, Protocol, Sequence

from engine.api_surface import (
    Engine, find_root, GraftError, open_engine, OPERATIONS, parse_address, ServiceUnavailable, shipped_trust_note,
    SourcePreference, trust_in_this_process, UsageError,
)
from frontends.cli.arguments import FRONT_ENDS, WRITING_COMMANDS, build_parser
from frontends.cli.output import EXIT_USAGE, answered, refused
from frontends.cli.parsing import ArgumentsRejected
from frontends.cli import daemon_commands, operation_commands
from frontends.render import symbols as render
from frontends.render.edits import last_check
from frontends.render.terminal import printable



Handler = Callable[[Engine, argparse.Namespace], tuple[dict[str, object], str, str]]
"""Returns (JSON payload, text for stdout, text for stderr)."""


def _outline(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    listing = engine.outline(args.file)
    return render.file_symbols_json(listing), render.outline_text(listing), ""


def _find(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    result = engine.find(parse_address(args.address), args.kind)
    return render.find_json(result), render.find_text(result), render.skipped_text(result.skipped)


def _read(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    result = engine.read(parse_address(args.address), args.kind)
    return render.read_json(result), render.read_text(result), ""


def _explain(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    found = engine.explain(parse_address(args.address))
    return render.explain_json(found), render.explain_text(found), ""


def _symbols(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    listing = engine.symbols(args.path)
    return render.symbols_json(listing), render.symbols_text(listing), render.skipped_text(listing.skipped)


def _servers(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    services = engine.services
    if services is None:
        raise ServiceUnavailable("no language-server support is installed (the lsp_pool package is missing)")
    if args.start:
        services.start_for_workspace()
    statuses = services.status()
    return render.servers_json(statuses), render.servers_text(statuses), ""


def _doctor(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    from engine.api_surface import diagnose  # noqa: PLC0415  (this command only)
    from frontends.render.doctor import doctor_json, doctor_text  # noqa: PLC0415

    report = diagnose(engine.workspace, engine.services, every_family=args.every_language)
    return doctor_json(report), doctor_text(report), ""


def _diagnostics(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    if args.since_last_apply:
        if args.paths:
            raise UsageError("diagnostics: give PATHs or --since-last-apply, not both")
        return render.last_apply_check(engine.edits().finish_diagnostics())
    if not args.paths:
        raise UsageError("diagnostics: give one PATH or more, or --since-last-apply")
    found = [d for path in args.paths for d in engine.diagnostics(path)]
    return render.diagnostics_json(found), render.diagnostics_text(found), ""


def _check(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    return last_check(engine.edits().check_last())


_GRAPH, _EDIT, _FILE, _BATCH = ("frontends.cli.graph_commands", "frontends.cli.edit_commands", "frontends.cli.file_commands",
                                 "frontends.cli.batch_commands")
HANDLERS: dict[str, Handler | tuple[str, str]] = {
    "outline": _outline, "find": _find, "read": _read, "symbols": _symbols, "servers": _servers, "doctor": _doctor,
    "diagnostics": _diagnostics,
    "explain": _explain, "check": _check,
    "index": (_GRAPH, "run_index"), "graph": (_GRAPH, "run_graph"),
    "apply": (_EDIT, "run_apply"), "undo": (_EDIT, "run_undo"), "redo": (_EDIT, "run_redo"), "history": (_EDIT, "run_history"), "recover": (_EDIT, "run_recover"),
    "batch": (_BATCH, "run_batch_command"),
    "read-file": (_FILE, "run_read_file"), "write-file": (_FILE, "run_write"), "edit-file": (_FILE, "run_write"),
    "search": (_FILE, "run_search"), "find-files": (_FILE, "run_find_files"), "find-replace": (_FILE, "run_find_replace"),
}
"""Each command's handler; those of other modules named (module, function) and imported when the
command runs, so that a read does not pay for the refactoring machinery (LibCST) it never uses."""


def _handler(command: str) -> Handler:
    if command in OPERATIONS:  # refactorings come from the registry (a registered one always has a command)
        return operation_commands.run_operation
    found = HANDLERS[command]
    if isinstance(found, tuple):
        module, function = found
        loaded: Handler = getattr(importlib.import_module(module), function)
        return loaded
    return found


class Engines(Protocol):
    """Where a command gets its engine: a new one per call (:class:`FreshEngines`), or the
    daemon's warm ones, kept between calls and brought up to date with the disk first."""

    def acquire(self, root: Path, source: SourcePreference, *, servers: bool, tools: bool, max_file_bytes: int) -> Engine: ...

    def release(self, engine: Engine) -> None: ...


class FreshEngines:
    def __init__(self, *, trust: bool = False) -> None:
        self.trust = trust
        """The call's ``--trust``: the workspace's own Python may run."""

    def acquire(self, root: Path, source: SourcePreference, *, servers: bool, tools: bool, max_file_bytes: int) -> Engine:
        return open_engine(root, source, servers=servers, tools=tools, max_file_bytes=max_file_bytes, trust=self.trust)

    def release(self, engine: Engine) -> None:
        engine.close()


def run_front_end(name: str, argv: list[str]) -> int:
    """``graft mcp …`` / ``graft lsp …``: hand over to the installed front end; ``--trust``
    (README, "Security") is taken off here and holds for every engine the process opens."""
    if "--trust" in argv:
        trust_in_this_process()
        argv = [word for word in argv if word != "--trust"]
    for entry_point in entry_points(group="codegraft.frontends"):
        if entry_point.name == name:
            run: Callable[[list[str]], int] = entry_point.load()
            return run(argv)
    print(f"graft {name}: the {name} front end is not installed (reinstall codegraft)", file=sys.stderr)
    return EXIT_USAGE


@functools.lru_cache(maxsize=1)
def _parser(operations: tuple[object, ...]) -> argparse.ArgumentParser:
    """Built once per set of operations (the registry's, passed as the key): the daemon answers
    every call with it, and building the whole grammar was a large share of each warm call.
    Parsing leaves the parser as it was."""
    return build_parser()


def main(argv: Sequence[str] | None = None, engines: Engines | None = None, request: str | None = None) -> int:
    """``request``: the call's id, recorded in the journal with every transaction it writes (a
    client that lost the daemon's answer asks the journal about it: frontends.cli.lost_call)."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given and given[0] in FRONT_ENDS:
        return run_front_end(given[0], given[1:])
    if given[:1] == ["--trust"] and given[1:2] and given[1] in FRONT_ENDS:  # graft --trust mcp …
        return run_front_end(given[1], ["--trust", *given[2:]])
    try:
        args = _parser(tuple(OPERATIONS.values())).parse_args(given)
    except ArgumentsRejected as error:
        print(printable(error.message), file=sys.stderr)
        if "--json" in given:
            print(json.dumps({"ok": False, "error": error.to_json()}, ensure_ascii=False, indent=2))
        return EXIT_USAGE
    as_json: bool = args.json
    args.request = request
    try:
        root = Path(args.root) if args.root else find_root(Path.cwd())
        if not root.is_dir():
            raise UsageError(f"--root {root} is not a folder")
        if args.command == "batch" and args.repos:  # a fleet: no workspace of its own, its exit status its own
            from frontends.cli import fleet_commands  # Dask, for this command only
            return fleet_commands.run_fleet(args)
        if args.command == "daemon":
            payload, text, notes = daemon_commands.run_daemon(root, args)
        else:
            if args.trust and engines is not None:
                # The daemon's servers are shared by every call it answers and follow the workspace's
                # setting alone (entry.py keeps --trust calls in their own process).
                raise UsageError("--trust is not answered by the daemon: run the call in its own process (--no-daemon)")
            payload, text, notes = _run(engines or FreshEngines(trust=args.trust), root, args)
    except GraftError as error:
        hint = operation_commands.option_hint(error.option)
        if hint and "\n" in error.message:
            hint = "\n" + hint.strip()  # after a listing (one item per line), a line of its own
        return refused(args.command, error, as_json=as_json, hint=hint)
    return answered(args.command, payload, text, notes, as_json=as_json)


def _run(engines: Engines, root: Path, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    source = SourcePreference(args.source)
    wants_server = source in (SourcePreference.AUTO, SourcePreference.LSP) or args.command in ("servers", "doctor", "diagnostics", "check")
    writes = args.command in WRITING_COMMANDS or args.command in OPERATIONS
    engine = engines.acquire(root, source, servers=wants_server, tools=writes, max_file_bytes=args.max_file_bytes)
    try:
        for report in engine.recovered:
            print(printable(f"graft: {report.message()}"), file=sys.stderr)
        if not engine.workspace.config.trust_workspace_python and (shipped := shipped_trust_note(root)):
            print(printable(f"graft: note: {shipped}"), file=sys.stderr)
        return _handler(args.command)(engine, args)
    finally:
        engines.release(engine)


if __name__ == "__main__":
    sys.exit(main())

"""``graft``: argument parsing, one facade call per command, rendering, exit status.

Exit status: 0 success; 1 refused (not found, ambiguous, unsafe path,
unreadable file), with the reason on stderr and, with ``--json``, in the JSON
on stdout; 2 usage error (bad arguments, malformed address).
"""

from __future__ import annotations

import argparse
from importlib.metadata import entry_points
import json
import sys
from pathlib import Path
from typing import Callable, Sequence

from engine.api import Engine, SourcePreference
from engine.errors import GraftError, ServiceUnavailable, UsageError
from engine.names import parse_address
from engine.opening import open_engine
from engine.refactor.operations import OPERATIONS
from engine.symbols import SymbolKind
from engine.workspace import DEFAULT_MAX_FILE_BYTES, find_root
from frontends.cli.parsing import ArgumentsRejected, GraftParser
from frontends.cli import edit_commands, file_commands, graph_commands, operation_commands
from frontends.render import symbols as render

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def _common_options(*, suppress: bool) -> GraftParser:
    """Options accepted both before and after the command name."""
    default = argparse.SUPPRESS if suppress else None
    parser = GraftParser(add_help=False)
    parser.add_argument("--root", metavar="DIR", default=default,
                        help="workspace root (default: nearest folder above holding .git, pyproject.toml, "
                             "package.json, go.mod or Cargo.toml; else the current folder)")
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="print machine-readable JSON on stdout")
    parser.add_argument("--max-file-bytes", type=int, metavar="N",
                        default=argparse.SUPPRESS if suppress else DEFAULT_MAX_FILE_BYTES,
                        help=f"skip source files larger than this (default: {DEFAULT_MAX_FILE_BYTES})")
    parser.add_argument("--source", choices=[p.value for p in SourcePreference],
                        default=argparse.SUPPRESS if suppress else SourcePreference.AUTO.value,
                        help="where symbols come from: the language server (lsp), the syntax tree (ast), regular "
                             "expressions (regex), or auto: the server when ready within its budget, else the "
                             f"syntax tree, else regex (default: {SourcePreference.AUTO.value})")
    return parser


def build_parser() -> argparse.ArgumentParser:
    common = _common_options(suppress=True)
    parser = GraftParser(
        prog="graft",
        description="Semantic code navigation and refactoring by name path.",
        parents=[_common_options(suppress=False)],
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    outline = commands.add_parser("outline", parents=[common], help="a file's symbol skeleton")
    outline.add_argument("file", metavar="FILE", help="workspace-relative path")

    find = commands.add_parser("find", parents=[common], help="locate symbols by address")
    find.add_argument("address", metavar="ADDRESS", help="[FILE:]Name/Path[i] or FILE:LINE[:COL]")
    find.add_argument("--kind", type=_kind, help="only symbols of this kind (class, method, function, ...)")

    read = commands.add_parser("read", parents=[common], help="print one symbol's source with line numbers")
    read.add_argument("address", metavar="ADDRESS")
    read.add_argument("--kind", type=_kind)

    explain = commands.add_parser("explain", parents=[common], help="a symbol's source with its callers, callees and types")
    explain.add_argument("address", metavar="ADDRESS")

    symbols = commands.add_parser("symbols", parents=[common], help="every symbol under a folder")
    symbols.add_argument("path", metavar="PATH", nargs="?", default=".")

    graph_commands.add_parsers(commands, common)
    edit_commands.add_parsers(commands, common)
    file_commands.add_parsers(commands, common, edit_commands.apply_options())

    diagnostics = commands.add_parser("diagnostics", parents=[common], help="the language server's diagnostics for files")
    diagnostics.add_argument("paths", metavar="PATH", nargs="+")

    # Listed for `graft --help`; `main` hands these over to their front ends before parsing.
    commands.add_parser("mcp", help="serve the engine to MCP clients (graft mcp --help)", add_help=False)
    commands.add_parser("lsp", help="serve the engine to editors over LSP (graft lsp --help)", add_help=False)

    servers = commands.add_parser("servers", parents=[common], help="configured and found language servers")
    servers.add_argument("--start", action="store_true",
                         help="start the server of every language in the workspace and report its state")
    return parser


def _kind(text: str) -> SymbolKind:
    try:
        return SymbolKind.from_label(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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


def _diagnostics(engine: Engine, args: argparse.Namespace) -> tuple[dict[str, object], str, str]:
    found = [d for path in args.paths for d in engine.diagnostics(path)]
    return render.diagnostics_json(found), render.diagnostics_text(found), ""


HANDLERS: dict[str, Handler] = {
    "outline": _outline, "find": _find, "read": _read, "symbols": _symbols, "servers": _servers, "diagnostics": _diagnostics,
    "explain": _explain,
    "index": graph_commands.run_index, "graph": graph_commands.run_graph,
    "apply": edit_commands.run_apply, "undo": edit_commands.run_undo,
    "history": edit_commands.run_history, "recover": edit_commands.run_recover,
    "batch": file_commands.run_batch_command,
    "read-file": file_commands.run_read_file, "write-file": file_commands.run_write, "edit-file": file_commands.run_write,
    "search": file_commands.run_search, "find-files": file_commands.run_find_files, "find-replace": file_commands.run_find_replace,
}


#: Front ends installed as entry points (``codegraft.frontends``): they own their arguments.
FRONT_ENDS = ("mcp", "lsp")


def run_front_end(name: str, argv: list[str]) -> int:
    """``graft mcp …`` / ``graft lsp …``: hand over to the installed front end."""
    for entry_point in entry_points(group="codegraft.frontends"):
        if entry_point.name == name:
            run: Callable[[list[str]], int] = entry_point.load()
            return run(argv)
    print(f"graft {name}: the {name} front end is not installed (reinstall codegraft)", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given and given[0] in FRONT_ENDS:
        return run_front_end(given[0], given[1:])
    try:
        args = build_parser().parse_args(given)
    except ArgumentsRejected as error:
        print(error.message, file=sys.stderr)
        if "--json" in given:
            print(json.dumps({"ok": False, "error": error.to_json()}, ensure_ascii=False, indent=2))
        return EXIT_USAGE
    as_json: bool = args.json
    try:
        root = Path(args.root) if args.root else find_root(Path.cwd())
        if not root.is_dir():
            raise UsageError(f"--root {root} is not a folder")
        source = SourcePreference(args.source)
        wants_server = source in (SourcePreference.AUTO, SourcePreference.LSP) or args.command in ("servers", "diagnostics")
        writes = args.command in edit_commands.WRITING_COMMANDS or args.command in OPERATIONS
        engine = open_engine(root, source, servers=wants_server, tools=writes, max_file_bytes=args.max_file_bytes)
        for report in engine.recovered:
            print(f"graft: {report.message()}", file=sys.stderr)
        try:
            # Refactorings come from the registry, looked up when called (a registered one always has a command).
            handler = operation_commands.run_operation if args.command in OPERATIONS else HANDLERS[args.command]
            payload, text, notes = handler(engine, args)
        finally:
            engine.close()
    except GraftError as error:
        hint = operation_commands.option_hint(error.option)
        if hint and "\n" in error.message:
            hint = "\n" + hint.strip()  # after a listing (one item per line), a line of its own
        print(f"graft {args.command}: {error.message}{hint}", file=sys.stderr)
        if as_json:
            print(json.dumps({"ok": False, "error": error.to_json()}, ensure_ascii=False, indent=2))
        return EXIT_USAGE if isinstance(error, UsageError) else EXIT_REFUSED
    if notes:
        print(notes, file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": True, "command": args.command, **payload}, ensure_ascii=False, indent=2))
    else:
        print(text)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

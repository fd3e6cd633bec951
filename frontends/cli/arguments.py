"""The ``graft`` command line's grammar: every command, its arguments and its help.

Apart from the handlers (frontends.cli.main and the *_commands modules) and importing nothing
heavy, because the thin client (frontends.cli.entry) answers ``graft --help`` and
``graft COMMAND --help`` with it alone, and reads the few facts it needs to route a call.
"""

from __future__ import annotations

import argparse

from engine.api_surface import (
    DEFAULT_MAX_FILE_BYTES, FieldInfo, FieldKind, OPERATIONS, PositionEncoding, SourcePreference, SymbolKind,
)
from frontends.cli.parsing import Commands, GraftParser

#: Front ends installed as entry points (``codegraft.frontends``): they own their arguments.
FRONT_ENDS = ("mcp", "lsp")

#: engine.edits.verification.CheckMode's values, spelled here to keep this module light.
CHECK_MODES = ("none", "fast", "full")

#: Commands besides the refactorings (engine.refactor.operations) that may write files (and so consult git).
WRITING_COMMANDS = frozenset({"apply", "undo", "redo", "batch", "write-file", "edit-file", "find-replace"})


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
    parser.add_argument("--no-daemon", action="store_true", default=argparse.SUPPRESS if suppress else False,
                        help="answer in this process, not through the workspace's warm daemon (also: GRAFT_DAEMON=0)")
    add_trust_option(parser, default=argparse.SUPPRESS if suppress else False)
    return parser


def add_trust_option(parser: argparse.ArgumentParser, default: object = False) -> None:
    """``--trust``, shared by the CLI and the MCP and LSP front ends."""
    parser.add_argument("--trust", action="store_true", default=default,
                        help="trust the workspace's code: let language servers and jedi run its own Python (.venv), "
                             "and the import check import the project (default: a read runs nothing the workspace "
                             "chose; also: trust_workspace_python = true in your own ~/.config/codegraft/config.toml). A call with --trust runs "
                             "in this process, not in the daemon")


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

    _graph_commands(commands, common)
    _edit_commands(commands, common)
    _file_commands(commands, common, apply_options())

    diagnostics = commands.add_parser("diagnostics", parents=[common], help="the language server's diagnostics for files")
    diagnostics.add_argument("paths", metavar="PATH", nargs="*")
    diagnostics.add_argument("--since-last-apply", action="store_true",
                             help="the errors the last apply introduced, finishing the check its time budget cut short")

    check = commands.add_parser("check", parents=[common], help="what the last apply's check covered and found, finished first")
    check.add_argument("--last", action="store_true", required=True,
                       help="the last apply in this workspace (the only one kept)")

    # Listed for `graft --help`; `main` hands these over to their front ends before parsing.
    commands.add_parser("mcp", help="serve the engine to MCP clients (graft mcp --help)", add_help=False)
    commands.add_parser("lsp", help="serve the engine to editors over LSP (graft lsp --help)", add_help=False)

    daemon = commands.add_parser("daemon", parents=[common], help="the workspace's warm service that answers the CLI's calls")
    daemon.add_argument("action", choices=["start", "stop", "status"],
                        help="start it (the CLI also does, for a command that uses a language server), stop it, or "
                             "say whether it runs and what it holds")

    servers = commands.add_parser("servers", parents=[common], help="configured and found language servers")
    servers.add_argument("--start", action="store_true",
                         help="start the server of every language in the workspace and report its state")

    doctor = commands.add_parser("doctor", parents=[common],
                                 help="per language here: the server that would serve it, and what each operation does")
    doctor.add_argument("--all", dest="every_language", action="store_true",
                        help="also the languages codegraft knows that have no file in the workspace")
    return parser


def _kind(text: str) -> SymbolKind:
    try:
        return SymbolKind.from_label(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


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
    options.add_argument("--check", choices=CHECK_MODES, default="fast",
                         help="how much of the errors check after an apply to wait for: none, fast (within "
                              "diagnostics_budget; the rest is finished later), full (the whole scope) (default: fast)")
    return options


def _edit_commands(commands: Commands, common: GraftParser) -> None:
    options = apply_options()
    apply = commands.add_parser("apply", parents=[common, options], help="preview or apply an LSP WorkspaceEdit (JSON file)")
    apply.add_argument("edit_file", metavar="EDIT.json", help="an LSP WorkspaceEdit; file:// URIs or workspace-relative paths")
    apply.add_argument("--encoding", choices=[e.value for e in PositionEncoding], default="utf-16",
                       help="how the edit's columns are counted (default: utf-16, as in LSP)")
    _operation_commands(commands, common, options)
    undo = commands.add_parser("undo", parents=[common], help="undo the latest transaction not yet undone (or TXN); "
                                                              "again: the one before")
    undo.add_argument("transaction", nargs="?", metavar="TXN")
    redo = commands.add_parser("redo", parents=[common], help="re-apply the latest undone transaction (or TXN: an undo, or "
                                                              "the transaction it undid); refused if its files changed since")
    redo.add_argument("transaction", nargs="?", metavar="TXN")
    commands.add_parser("history", parents=[common], help="transactions applied in this workspace")
    commands.add_parser("recover", parents=[common], help="roll back transactions a crash interrupted")


def _graph_commands(commands: Commands, common: GraftParser) -> None:
    index = commands.add_parser("index", parents=[common], help="index the workspace into the project graph (cached)")
    index.add_argument("--stats", action="store_true", help="files per language, symbols, edges, sources, cache hits")

    graph = commands.add_parser("graph", parents=[common], help="questions to the project graph")
    queries = graph.add_subparsers(dest="query", required=True, metavar="QUERY")
    overview = queries.add_parser("overview", parents=[common], help="files and their symbols: a map of the project")
    overview.add_argument("path", nargs="?", default=".", metavar="PATH")
    overview.add_argument("--depth", type=int, default=1, help="symbol nesting to show (default: 1, top level)")
    queries.add_parser("lookup", parents=[common], help="graph nodes an address names").add_argument("target", metavar="ADDRESS")
    queries.add_parser("deps", parents=[common], help="what a file or symbol uses").add_argument("target", metavar="TARGET")
    impact = queries.add_parser("impact", parents=[common], help="what depends on a file or symbol (blast radius)")
    impact.add_argument("target", metavar="TARGET")
    impact.add_argument("--depth", type=int, default=3, help="steps to follow (default: 3)")
    for name, what in (("callers", "who calls it"), ("callees", "what it calls"),
                       ("supertypes", "the classes it inherits from"), ("subtypes", "the classes inheriting from it")):
        queries.add_parser(name, parents=[common], help=what).add_argument("target", metavar="TARGET")
    queries.add_parser("implementations", parents=[common],
                       help="subclasses of a class, or overrides of a method").add_argument("target", metavar="TARGET")
    queries.add_parser("refs", parents=[common],
                       help="references to a symbol: the language server's, else the graph's").add_argument("target", metavar="TARGET")
    queries.add_parser("definition", parents=[common],
                       help="where the name at FILE:LINE:COL is defined").add_argument("target", metavar="FILE:LINE:COL")
    queries.add_parser("cycles", parents=[common], help="import cycles between files")
    queries.add_parser("entrypoints", parents=[common], help="scripts, console scripts, CLI commands, web routes")
    queries.add_parser("dead-code", parents=[common], help="symbols nothing reaches by syntax (candidates)")
    affected = queries.add_parser("affected-tests", parents=[common], help="tests that exercise changed files or symbols")
    affected.add_argument("targets", nargs="+", metavar="TARGET")


def _file_commands(commands: Commands, common: GraftParser, options: GraftParser) -> None:
    batch = commands.add_parser("batch", parents=[common, options], help="run a JSON/YAML/TOML list of refactorings as one transaction")
    batch.add_argument("plan", metavar="PLAN")
    batch.add_argument("--each", action="store_true", help="commit each step separately (steps before a refusal stay)")
    fleet = batch.add_argument_group("across many repositories (each its own task; see README)")
    fleet.add_argument("--repos", metavar="LIST", help="a file with one repository path per line, or a folder whose "
                                                       "sub-folders are repositories: run the plan on each")
    fleet.add_argument("--executor", choices=["local", "dask"], default="dask",
                       help="dask (default: an embedded cluster of processes, or --scheduler's), or local: serially here")
    fleet.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler (tcp://host:port)")
    fleet.add_argument("--workers", type=int, metavar="N", help="workers of the embedded cluster (default: one per core)")
    fleet.add_argument("--out", metavar="DIR", default="graft-fleet",
                       help="where the patches and results.jsonl go (default: ./graft-fleet)")
    fleet.add_argument("--resume", action="store_true", help="skip the repositories that already have a row in OUT")
    fleet.add_argument("--progress", choices=["auto", "line", "json", "none"], default="auto",
                       help="on stderr: auto (default: a live line on a terminal, else a line per repository and one "
                            "every 10 s while none finishes), line, json (one event per line, for CI) or none")

    read = commands.add_parser("read-file", parents=[common], help="files with a sha256 header and line numbers")
    read.add_argument("paths", metavar="PATH", nargs="+")
    read.add_argument("--start", type=int, default=1)
    read.add_argument("--end", type=int)
    read.add_argument("--outline", action="store_true", help="also print the file's symbol outline")

    for name, helptext in (("write-file", "create or overwrite a file"), ("edit-file", "replace text in a file")):
        sub = commands.add_parser(name, parents=[common, options], help=helptext)
        sub.add_argument("path", metavar="PATH")
        sub.add_argument("--expect-sha256", metavar="HASH", help="the hash read-file printed: refused if the file changed since")
        sub.add_argument("--overwrite-changed", action="store_true", help="write whatever the file holds now")
        if name == "write-file":
            sub.add_argument("--content-file", required=True, metavar="F", help="the new content ('-' for stdin)")
        else:
            sub.add_argument("--old-file", metavar="F", help="text that must occur exactly once ('-' for stdin)")
            sub.add_argument("--new-file", required=True, metavar="F", help="its replacement")
            sub.add_argument("--start-anchor")
            sub.add_argument("--end-anchor")
            sub.add_argument("--start-line", type=int)
            sub.add_argument("--end-line", type=int)

    search = commands.add_parser("search", parents=[common], help="text or regex search; hits name their enclosing symbol")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--regex", action="store_true")
    search.add_argument("--glob", default="*")
    search.add_argument("--limit", type=int, default=200)

    find_files = commands.add_parser("find-files", parents=[common], help="workspace files matching a glob")
    find_files.add_argument("pattern", metavar="GLOB")

    replace = commands.add_parser("find-replace", parents=[common, options], help="replace text or a regex across files")
    replace.add_argument("query", metavar="QUERY")
    replace.add_argument("replacement", metavar="REPLACEMENT")
    replace.add_argument("--regex", action="store_true")
    replace.add_argument("--glob", default="*")


def _operation_commands(commands: Commands, common: GraftParser, options: GraftParser) -> None:
    for name, operation in OPERATIONS.items():
        parser = commands.add_parser(name, parents=[common, options], help=operation.summary, description=operation.summary)
        for info in operation.fields():
            _add_argument(parser, info)


def cli_flag(info: FieldInfo) -> str | None:
    """The option that sets a field, or None for a positional argument."""
    if info.cli_flag is not None:
        return info.cli_flag
    spelled = info.name.replace("_", "-")
    if info.kind is FieldKind.FLAG:
        return f"--no-{spelled}" if info.default else f"--{spelled}"
    return None if info.required else f"--{spelled}"


def _add_argument(parser: argparse.ArgumentParser, info: FieldInfo) -> None:
    flag = cli_flag(info)
    if info.kind is FieldKind.FLAG:
        action = "store_false" if info.default else "store_true"
        # The field's help says what the setting does when on; the option given here turns it off.
        option = flag or f"--{info.name}"
        text = f"{info.help}. On by default: {option} turns it off" if info.default else info.help
        parser.add_argument(option, dest=info.name, action=action, help=text)
    elif info.kind is FieldKind.CODE:
        parser.add_argument(flag or f"--{info.name}-file", dest=info.name, required=info.required, metavar="F",
                            help=f"{info.help}: a file holding it ('-' for stdin)")
    elif flag is None:
        parser.add_argument(info.name, metavar=info.metavar, help=info.help)
    else:
        parser.add_argument(flag, dest=info.name, metavar=info.metavar, default=info.default, help=info.help)

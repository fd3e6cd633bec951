"""``graft index`` and ``graft graph …``: the project graph from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable

from engine.api import Engine
from engine.errors import GraftError
from engine.graph import IndexStats
from frontends.cli.parsing import Commands, GraftParser
from frontends.render.graph import (
    Result, cycles_result, edges_result, findings_result, navigation_result, nodes_result, overview_result, reached_result,
    with_notes,
)


def add_parsers(commands: Commands, common: GraftParser) -> None:
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


def run_index(engine: Engine, args: argparse.Namespace) -> Result:
    stats = engine.index(progress=_progress_printer() if sys.stderr.isatty() and not args.json else None)
    return _stats_json(stats), _stats_text(stats, detailed=args.stats), _skipped(stats)


def run_graph(engine: Engine, args: argparse.Namespace) -> Result:
    queries = engine.graph()

    def target() -> str:
        return engine.graph_target(args.target)  # FILE:LINE:COL: the symbol the name there refers to

    handler: Callable[[], Result] = {
        "overview": lambda: overview_result(engine.overview(args.path, args.depth)),
        "lookup": lambda: nodes_result("matches", queries.lookup(args.target)),
        "deps": lambda: edges_result(queries.dependencies(target()), outgoing=True),
        "impact": lambda: with_notes(reached_result(queries.impact(target(), args.depth)), queries.call_notes(target())),
        "callers": lambda: with_notes(edges_result(queries.callers(target()), outgoing=False), queries.call_notes(target())),
        "callees": lambda: edges_result(queries.callees(target()), outgoing=True),
        "supertypes": lambda: edges_result(queries.supertypes(target()), outgoing=True),
        "subtypes": lambda: edges_result(queries.subtypes(target()), outgoing=False),
        "implementations": lambda: nodes_result("implementations", queries.implementations(target())),
        "refs": lambda: navigation_result(engine.references(args.target)),
        "definition": lambda: navigation_result(engine.definition(args.target)),
        "cycles": lambda: cycles_result(queries.cycles()),
        "entrypoints": lambda: findings_result("entry_points", queries.entry_points(engine.pyproject_text())),
        "dead-code": lambda: findings_result("candidates", queries.dead_code(engine.pyproject_text(), read=_text_reader(engine))),
        "affected-tests": lambda: nodes_result("tests", queries.affected_tests([engine.graph_target(t) for t in args.targets])),
    }[args.query]
    return handler()


# -- rendering -------------------------------------------------------------------


def _progress_printer() -> Callable[[int, int], None]:
    started = time.perf_counter()

    def show(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - started, 1e-6)
        filled = int(30 * done / max(total, 1))
        end = "\n" if done == total else ""
        print(f"\r[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} files  {rate:,.0f} files/s", end=end, file=sys.stderr, flush=True)

    return show


def _stats_json(stats: IndexStats) -> dict[str, object]:
    return {
        "mode": stats.mode, "seconds": round(stats.seconds, 4), "files": stats.files,
        "files_by_language": stats.files_by_language, "symbols": stats.symbols,
        "symbols_by_source": stats.symbols_by_source, "edges_by_kind": stats.edges_by_kind,
        "cache_hits": stats.cache_hits, "extracted": stats.extracted, "recomputed": stats.recomputed,
        "culled": stats.culled,
        "skipped": [{"path": s.path, "reason": s.reason} for s in stats.skipped],
    }


def _stats_text(stats: IndexStats, *, detailed: bool) -> str:
    edges = sum(stats.edges_by_kind.values())
    lines = [
        f"indexed {stats.files} files, {stats.symbols} symbols, {edges} edges in {stats.seconds:.2f} s "
        f"({stats.mode}: {stats.extracted} extracted, {stats.cache_hits} from cache, {stats.recomputed} re-resolved)"
    ]
    if detailed:
        lines.append("files by language:  " + ", ".join(f"{k} {v}" for k, v in sorted(stats.files_by_language.items())))
        lines.append("symbols by source:  " + ", ".join(f"{k} {v}" for k, v in sorted(stats.symbols_by_source.items())))
        lines.append("edges by kind:      " + ", ".join(f"{k} {v}" for k, v in sorted(stats.edges_by_kind.items())))
    return "\n".join(lines)


def _skipped(stats: IndexStats) -> str:
    return "\n".join(f"skipped {s.path}: {s.reason}" for s in stats.skipped)


def _text_reader(engine: Engine) -> Callable[[str], str]:
    """A file's text for the dead-code check's by-name pass ("" for one that cannot be read)."""
    def read(path: str) -> str:
        try:
            return engine.workspace.read(path).text
        except GraftError:
            return ""
    return read

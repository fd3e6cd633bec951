"""``graft index`` and ``graft graph …``: the project graph from the command line."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable

from engine.api_surface import Engine, GraftError, IndexStats
from frontends.render.graph import (
    Result, cycles_result, edges_result, findings_result, navigation_result, nodes_result, overview_result, reached_result,
    with_notes,
)


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
        "impact": lambda: with_notes(*engine.served_graph().impact(target(), args.depth).rendered(reached_result)),
        "callers": lambda: with_notes(*engine.served_graph().callers(target()).rendered(
            lambda edges: edges_result(edges, outgoing=False))),
        "callees": lambda: with_notes(*engine.served_graph().callees(target()).rendered(
            lambda edges: edges_result(edges, outgoing=True))),
        "supertypes": lambda: edges_result(queries.supertypes(target()), outgoing=True),
        "subtypes": lambda: edges_result(queries.subtypes(target()), outgoing=False),
        "implementations": lambda: with_notes(*engine.served_graph().implementations(target()).rendered(
            lambda nodes: nodes_result("implementations", nodes))),
        "refs": lambda: navigation_result(engine.references(args.target)),
        "definition": lambda: navigation_result(engine.definition(args.target)),
        "cycles": lambda: cycles_result(queries.cycles()),
        "entrypoints": lambda: findings_result("entry_points", queries.entry_points(engine.pyproject_text())),
        "dead-code": lambda: with_notes(findings_result("candidates", queries.dead_code(engine.pyproject_text(),
                                                                                      read=_text_reader(engine))),
                                        queries.dead_code_notes()),
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

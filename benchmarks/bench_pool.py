"""The pool's overhead over driving the same language server directly, on Django's source.

Run: ``.venv/bin/python benchmarks/bench_pool.py [--repeat N]``

For basedpyright on the pinned Django sdist, each measure is taken through
the pool (``lsp_pool``: launcher, supervision, readiness tracking, typed
messages, conversion to engine types) and through a bare JSON-over-pipes
client (``benchmarks/raw_lsp.py``), with a fresh server each time, sides
alternating, best of N. Measures: start → initialize, documentSymbol cold and
warm on ``django/db/models/query.py``, references of ``QuerySet`` and a rename
plan for it. Target: pool / raw <= 1.10 for each. The script prints figures
and ratios and never fails on timing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Callable, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.corpus import DJANGO_VERSION, django_source  # noqa: E402
from benchmarks.raw_lsp import RawClient  # noqa: E402
from engine.positions import Position  # noqa: E402
from lsp_pool.config import PoolConfig  # noqa: E402
from lsp_pool.registry import DEFAULT_PREFERENCE, SPECS_BY_ID, locate  # noqa: E402
from lsp_pool.sync import SyncLanguageApi  # noqa: E402

TARGET = 1.10
FILE = "django/db/models/query.py"
SYMBOL = "QuerySet"
MEASURES = ("start → initialize", "documentSymbol cold", "documentSymbol warm", "references", "rename plan")


def symbol_position(path: Path) -> Position:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.startswith(f"class {SYMBOL}"):
            return Position(number, line.index(SYMBOL))
    raise SystemExit(f"{SYMBOL} not found in {path}")


T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def run_raw(root: Path, position: Position) -> tuple[dict[str, float], dict[str, int]]:
    command = list(locate(SPECS_BY_ID["basedpyright"]) or ())
    uri = (root / FILE).as_uri()
    times: dict[str, float] = {}
    counts: dict[str, int] = {}
    start = time.perf_counter()
    client = RawClient(command, str(root))
    client.request("initialize", {
        "processId": None, "rootUri": root.as_uri(), "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": {"window": {"workDoneProgress": True}, "workspace": {"configuration": True},
                         "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True}}},
    })
    times["start → initialize"] = time.perf_counter() - start
    client.notify("initialized", {})
    client.wait_for_log("source file")
    document = {"textDocument": {"uri": uri}}
    place = {**document, "position": {"line": position.line, "character": position.column}}
    times["documentSymbol cold"], symbols = timed(lambda: client.request("textDocument/documentSymbol", document))
    times["documentSymbol warm"], _ = timed(lambda: client.request("textDocument/documentSymbol", document))
    times["references"], refs = timed(lambda: client.request("textDocument/references", {**place, "context": {"includeDeclaration": True}}))
    times["rename plan"], edit = timed(lambda: client.request("textDocument/rename", {**place, "newName": "QuerySetRenamed"}))
    client.close()
    counts["symbols"] = len(symbols or [])
    counts["references"] = len(refs or [])
    counts["edited files"] = len((edit or {}).get("documentChanges") or (edit or {}).get("changes") or [])
    return times, counts


def run_pool(root: Path, position: Position) -> tuple[dict[str, float], dict[str, int]]:
    preference = dict(DEFAULT_PREFERENCE)
    preference["python"] = ("basedpyright",)
    api = SyncLanguageApi(root, PoolConfig(preference=preference, readiness_budget=300))
    path = root / FILE
    server = api.pool.server("basedpyright", root)
    times: dict[str, float] = {}
    counts: dict[str, int] = {}
    times["start → initialize"], _ = timed(lambda: api.run(server.ensure_started))
    tracker = server.tracker
    assert tracker is not None, "a started server tracks its readiness"
    api.run(tracker.wait)
    times["documentSymbol cold"], symbols = timed(lambda: api.call(lambda a: a.document_symbols(path)))
    times["documentSymbol warm"], _ = timed(lambda: api.call(lambda a: a.document_symbols(path)))
    times["references"], refs = timed(lambda: api.call(lambda a: a.references(path, position)))
    times["rename plan"], edit = timed(lambda: api.call(lambda a: a.rename(path, position, "QuerySetRenamed")))
    api.close()
    counts["symbols"] = len(symbols.value)
    counts["references"] = len(refs.value)
    counts["edited files"] = len(edit.value.files)
    return times, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    package = django_source()
    root = package.parent
    position = symbol_position(root / FILE)
    best: dict[str, dict[str, float]] = {"raw": {}, "pool": {}}
    counts: dict[str, dict[str, int]] = {}
    for round_number in range(args.repeat):
        order = [("raw", run_raw), ("pool", run_pool)]
        if round_number % 2:
            order.reverse()
        for side, run in order:
            print(f"round {round_number + 1}: {side} ...", file=sys.stderr)
            times, counts[side] = run(root, position)
            for measure, seconds in times.items():
                best[side][measure] = min(seconds, best[side].get(measure, float("inf")))
    print(f"corpus: Django {DJANGO_VERSION}; server: basedpyright; file: {FILE}; symbol: {SYMBOL}; best of {args.repeat}")
    print(f"answers: raw {counts['raw']}, pool {counts['pool']}")
    print(f"{'measure':<22}{'raw':>10}{'pool':>10}{'ratio':>8}")
    for measure in MEASURES:
        raw, pool = best["raw"][measure], best["pool"][measure]
        ratio = pool / raw
        flag = "" if ratio <= TARGET else f"  (over the {TARGET:.2f} target)"
        print(f"{measure:<22}{raw * 1000:>8.0f}ms{pool * 1000:>8.0f}ms{ratio:>7.2f}x{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

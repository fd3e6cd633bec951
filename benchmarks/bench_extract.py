"""Symbol extraction against raw tree-sitter, on every Python file of Django's sdist.

Run: ``.venv/bin/python benchmarks/bench_extract.py [--repeat N]``

Both sides are measured in the same run, on the same files, with the
garbage collector off (as the engine runs bulk work):

* raw:  ``Parser.parse`` plus a bare walk over every node with a TreeCursor;
* ours: ``SymbolExtractor.extract`` (parse, symbol walk, name paths) on the
  decoded file, which is what ``graft symbols`` does per file.

Target: ours / raw <= 2.0. The script prints both times and the ratio; it
never fails on timing, since absolute numbers on a shared machine are noise.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from tree_sitter import Language, Parser, Tree
import tree_sitter_python

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.corpus import DJANGO_VERSION, django_source, python_files  # noqa: E402
from engine.extract import SymbolExtractor  # noqa: E402
from engine.workspace import decode_source  # noqa: E402

TARGET_RATIO = 2.0


def raw_parse_and_walk(blobs: list[bytes]) -> int:
    parser = Parser(Language(tree_sitter_python.language()))
    return sum(bare_walk(parser.parse(data)) for data in blobs)


def bare_walk(tree: Tree) -> int:
    """Visit every node of a tree with a cursor, doing nothing else: the baseline's walk."""
    cursor = tree.walk()
    visited = 0
    while True:
        visited += 1
        if cursor.goto_first_child() or cursor.goto_next_sibling():
            continue
        while cursor.goto_parent():
            if cursor.goto_next_sibling():
                break
        else:
            return visited


def extract_all(files: list[tuple[str, bytes]], extractor: SymbolExtractor) -> int:
    count = 0
    for relative, data in files:
        listing = extractor.extract(decode_source(relative, data, 0.0))
        count += sum(1 for top in listing.symbols for _ in top.walk())
    return count


def best_of(repeat: int, work) -> tuple[float, int]:
    best = float("inf")
    result = 0
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
        gc.enable()
    return best, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = django_source()
    paths = python_files(root)
    files = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in paths]
    blobs = [data for _, data in files]
    size = sum(len(b) for b in blobs)
    lines = sum(b.count(b"\n") for b in blobs)
    print(f"corpus: Django {DJANGO_VERSION}, {len(files)} files, {lines:,} lines, {size / 1e6:.1f} MB")
    extractor = SymbolExtractor()
    extract_all(files[:20], extractor)  # load the grammar outside the timing
    raw_time, nodes = best_of(args.repeat, lambda: raw_parse_and_walk(blobs))
    our_time, symbols = best_of(args.repeat, lambda: extract_all(files, extractor))
    ratio = our_time / raw_time
    print(f"raw tree-sitter parse + bare walk : {raw_time:7.3f} s  ({nodes:,} nodes)")
    print(f"codegraft symbol extraction       : {our_time:7.3f} s  ({symbols:,} symbols)")
    verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
    print(f"ratio ours/raw                    : {ratio:7.2f}x  ({verdict} the target of <= {TARGET_RATIO}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

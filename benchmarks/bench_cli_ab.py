"""Two commits' warm renames side by side: which is faster, with nothing else different.

Run: ``.venv/bin/python benchmarks/bench_cli_ab.py OLD NEW [--rounds N]``

Each commit is installed as a user installs it (``bench_cli.installed_snapshot``) and gets a warm
daemon on a copy of its own of Django's full sdist; a third copy has the raw basedpyright client of
``bench_rename.py``. Each round is one raw rename, then one ``graft rename
django/utils/functional.py:cached_property memoized_property --json`` through each daemon, in
alternating order, so that a change in the machine's speed falls on both alike, each call after a
pause (``bench_cli.PAUSE_BESIDE``: from rest, not paying for the previous call's server). Prints the median
of each, their ratios to the raw rename and to each other. Never fails on timing; the daemons are
stopped at the end.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.bench_cli import (PAUSE_BESIDE, RENAME_FILE, RENAME_NAME, RENAME_NEW, Runner, code_snapshot, definition_position,
                                  django_copy, installed_snapshot, server_lines, wait_until_quiet)
from benchmarks.bench_rename import RawServer

RENAME = ("rename", f"{RENAME_FILE}:{RENAME_NAME}", RENAME_NEW, "--json")
WARM_UP = 4


def warm_daemon(base: Path, commit: str) -> tuple[Runner, Path]:
    """The commit installed in ``base/commit`` and a warm daemon of it on a Django copy."""
    folder = base / commit
    folder.mkdir()
    runner = Runner(None, installed_snapshot(folder, code_snapshot(folder, commit)))
    root = django_copy(folder, "django")
    runner.checked(root, "daemon", "start")
    for _ in range(WARM_UP):
        runner.checked(root, *RENAME)  # the first builds the index with the server's symbols
    wait_until_quiet([line.pid for line in server_lines(runner.status(root)) if line.pid])
    return runner, root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="graft-cli-ab-"))
    runners: list[Runner] = []
    try:
        sides = {}
        for label in (args.old, args.new):
            runner, root = warm_daemon(base, label)
            runners.append(runner)
            sides[label] = (runner, root)
        raw_root = django_copy(base, "raw")
        raw = RawServer(raw_root, *definition_position(raw_root, RENAME_FILE, RENAME_NAME))
        times: dict[str, list[float]] = {"raw": [], args.old: [], args.new: []}
        try:
            wait_until_quiet([raw.client.process.pid])
            for round_number in range(args.rounds):
                time.sleep(PAUSE_BESIDE)  # each call from rest, as in bench_cli.py
                times["raw"].append(raw.plan())
                order = (args.old, args.new) if round_number % 2 else (args.new, args.old)
                for label in order:
                    runner, root = sides[label]
                    time.sleep(PAUSE_BESIDE)
                    start = time.perf_counter()
                    runner.checked(root, *RENAME)
                    times[label].append(time.perf_counter() - start)
        finally:
            raw.close()
        medians = {label: median(values) for label, values in times.items()}
        for label, value in medians.items():
            print(f"{label:<12} {value * 1000:6.0f} ms  {value / medians['raw']:5.2f}x the raw rename"
                  f"  (runs, ms: {' '.join(str(round(v * 1000)) for v in times[label])})")
        print(f"{args.new} / {args.old}: {medians[args.new] / medians[args.old]:.2f}")
    finally:
        for runner in runners:
            runner.stop_all()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A fleet run whose every row is planned in advance (issue 48's acceptance): N repositories made
from a real library, each with an outcome chosen for it, then checked row by row.

Run: ``.venv/bin/python benchmarks/bench_fleet_outcomes.py [--repos 100] [--workers 2] [--source auto]``

The library is itsdangerous 2.2.0 of the real-project corpus (its CRLF variant, fetched by
bench_real_projects' helpers into benchmarks/.corpus/), 297 tests in about 2 s. The plan renames
``encoding.py:want_bytes`` to ``ensure_bytes`` (five modules, a re-export, a test). Repository i
gets the outcome ``KINDS[i % len(KINDS)]``:

- ``good``: a copy, one commit: ``planned`` (``applied`` with --apply);
- ``refused``: ``want_bytes`` is not there (renamed in the commit): ``refused``;
- ``fragile``: a committed test looks the old name up by a string: ``verify_failed`` with
  ``--verify`` (``planned`` without);
- ``red``: a committed test that fails anyway: ``baseline_failed`` with ``--verify``;
- ``dirty``: ``encoding.py`` changed and not committed: ``dirty_files``;
- ``missing``: a path that is no folder (not a repository at all): ``error``.

Passes, each on fresh copies: a dry run without ``--verify`` on Dask (``--workers``), the same
again on the same copies (every cacheable row from the result cache), then ``--verify`` serially
in one process and on Dask. Each reports repositories per hour, seconds per repository (median,
p90), peak memory (per worker, with its language servers and tests) and the costs the rows give
(server start, plan, verify, baseline), beside the machine's load from other work. Every row must
match its plan, or the script exits 1 naming the ones that do not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.bench_fleet import Pass, TreeSampler, busy_seconds, busy_share, cpu_seconds, git, green_project
from engine import fleet
from engine.choices import SourcePreference
from engine.fleet.rows import COSTS

PLAN: list[dict[str, Any]] = [{"op": "rename", "address": "src/itsdangerous/encoding.py:want_bytes",
                               "new_name": "ensure_bytes"}]
KINDS = ("good", "refused", "good", "fragile", "good", "red", "good", "dirty", "good", "missing")
ENCODING = Path("src/itsdangerous/encoding.py")
TESTS = Path("tests/test_itsdangerous")


def expected(kind: str, *, verify: bool) -> str:
    return {"good": "planned", "refused": "refused", "fragile": "verify_failed" if verify else "planned",
            "red": "baseline_failed" if verify else "planned", "dirty": "dirty_files", "missing": "error"}[kind]


def make_repositories(source: Path, root: Path, count: int) -> dict[str, str]:
    """``{path: kind}``: N repositories with their planned outcomes."""
    import shutil

    made: dict[str, str] = {}
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        repo = root / f"{index:03d}-{kind}"
        made[str(repo)] = kind
        if kind == "missing":
            continue
        shutil.copytree(source, repo, symlinks=True)
        encoding = repo / ENCODING
        if kind == "refused":
            encoding.write_bytes(encoding.read_bytes().replace(b"def want_bytes(", b"def wanted_bytes("))
        if kind == "fragile":
            (repo / TESTS / "test_fragile.py").write_text(
                "from itsdangerous import encoding\n\n\ndef test_name():\n    assert hasattr(encoding, 'want' + '_bytes')\n")
        if kind == "red":
            (repo / TESTS / "test_red.py").write_text("def test_red():\n    assert 1 + 1 == 3\n")
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "initial")
        if kind == "dirty":
            encoding.write_bytes(encoding.read_bytes() + b"# a local edit\n")
    return made


def run_pass(label: str, made: dict[str, str], out: Path, options: fleet.FleetOptions, workers: int) -> Pass:
    """workers 0: serially in this process (--executor local)."""
    from process_tools.dask_fleet import DaskExecutor

    executor: Any = "local"
    pids = {"this process": os.getpid()}
    if workers:
        executor = DaskExecutor(scheduler=None, workers=workers)
        executor._client.wait_for_workers(workers, timeout=120)
        pids = executor._client.run(os.getpid)
    try:
        load_before, busy_before, cpu_before = os.getloadavg()[0], busy_seconds(), cpu_seconds()
        with TreeSampler(pids) as sampler:
            started = time.monotonic()
            rows = fleet.run(PLAN, list(made), out=out, options=options, executor=executor)
            wall = time.monotonic() - started
        busy = busy_share(busy_before, busy_seconds())
    finally:
        if workers:
            executor.close()
    return Pass(label, options.source.value, max(workers, 1), wall, rows, memory=sampler.memory(),
                load=(load_before, os.getloadavg()[0]), cpu=cpu_seconds() - cpu_before if not workers else 0.0, busy=busy)


def mismatches(result: Pass, made: dict[str, str], *, verify: bool) -> list[str]:
    wrong = [f"{Path(row.repo).name}: {row.status} (planned {expected(made[row.repo], verify=verify)}): {row.reason[:200]}"
             for row in result.rows if row.status != expected(made[row.repo], verify=verify)]
    if len(result.rows) != len(made):
        wrong.append(f"{len(result.rows)} rows for {len(made)} repositories")
    return wrong


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def describe(result: Pass) -> str:
    seconds = result.task_seconds
    costs = {name: sum(row.costs.get(name, 0.0) for row in result.rows) / len(result.rows) for name in COSTS}
    cached = sum(bool(row.cached) for row in result.rows)
    memory = "; ".join(f"{name}: {m.own:.0f} MB alone, {m.tree:.0f} MB with its children"
                       for name, m in sorted(result.memory.items()))
    return (f"{result.label}: {len(result.rows)} repos in {result.wall:.1f} s = {3600 * result.throughput:.0f} repos/hour; "
            f"{', '.join(f'{s} {n}' for s, n in sorted(Counter(r.status for r in result.rows).items()))}\n"
            f"  seconds per repository: median {statistics.median(seconds):.2f}, p90 {p90(seconds):.2f}; "
            f"{cached} rows from the cache\n"
            f"  mean cost per repository (s): " + ", ".join(f"{n} {v:.2f}" for n, v in costs.items()) + "\n"
            f"  peak RSS: {memory}\n"
            f"  machine {result.busy:.0%} busy; load average before/after {result.load[0]:.2f} / {result.load[1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--source", default="auto")
    parser.add_argument("--skip-serial-verify", action="store_true", help="leave out the one-process --verify pass")
    args = parser.parse_args()
    project, source, passed, verify = green_project()
    print(f"itsdangerous {project['version']}: {passed} tests green; {os.cpu_count()} cores; {args.repos} repositories "
          f"({', '.join(f'{k} {n}' for k, n in Counter(KINDS[i % len(KINDS)] for i in range(args.repos)).items())})",
          flush=True)
    preference = SourcePreference(args.source)
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-outcomes-") as scratch_name:
        scratch = Path(scratch_name)
        dry = make_repositories(source, scratch / "dry", args.repos)
        passes = [(f"dry, no --verify, dask {args.workers} workers", dry, False, args.workers, "dry"),
                  (f"the same again (cache), dask {args.workers} workers", dry, False, args.workers, "dry-again")]
        if not args.skip_serial_verify:
            passes.append(("--verify, one process (local)", make_repositories(source, scratch / "v1", args.repos), True, 0, "v1"))
        passes.append((f"--verify, dask {args.workers} workers", make_repositories(source, scratch / "v2", args.repos), True,
                       args.workers, "v2"))
        for label, made, with_verify, workers, out in passes:
            options = fleet.FleetOptions(verify=verify if with_verify else None, source=preference)
            result = run_pass(label, made, scratch / f"out-{out}", options, workers)
            print(describe(result), flush=True)
            wrong = mismatches(result, made, verify=with_verify)
            print(f"  rows matching their plan: {len(result.rows) - len(wrong)}/{len(made)}", flush=True)
            failures += [f"{label}: {w}" for w in wrong]
    for line in failures:
        print("MISMATCH", line)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

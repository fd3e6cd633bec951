"""Where a fleet task's CPU goes, one task at a time against two at once, without Dask.

Run: ``.venv/bin/python benchmarks/bench_fleet_split.py [--copies N] [--source auto|ast]``

``bench_fleet.py`` measures the throughput ratio of Dask on two workers against a serial run.
This script asks why that ratio is what it is. It takes the same project, plan and verify
command, and runs ``engine.fleet.run(executor="local")`` in plain processes: one process for
every copy in turn, then two processes at once, each taking half the copies. Meanwhile it reads
the CPU time of every process in the runners' trees from ``/proc`` every 20 ms, and files it
under the engine (the runner itself), node (basedpyright), pytest (the verify), git, or other.
It prints, per repository, the wall time, each part's CPU seconds, and how idle the machine was.

The ceiling of two at once against one at a time is 2 / (the cores one task keeps busy on its
own). A task that already overlaps its own work (the engine building its graph while the server
starts, node's helper threads) cannot double. The sampler's own reads cost a little CPU; short
processes that start and end between two reads are missed (git, mostly).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.bench_fleet import green_project, make_copies  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
_RUNNER = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from benchmarks.bench_fleet import PLAN
from engine import fleet
from engine.choices import SourcePreference
options = fleet.FleetOptions(verify=sys.argv[2], source=SourcePreference(sys.argv[3]))
for repo in sys.argv[4:]:
    rows = fleet.run(PLAN, [repo], out=Path(repo + ".out"), options=options, executor="local")
    print(json.dumps({"repo": repo, "status": rows[0].status}), flush=True)
"""


def _parents() -> dict[int, list[int]]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            children[int(fields[1])].append(int(entry))
    return children


def _tree(roots: set[int]) -> set[int]:
    children, found, todo = _parents(), set(), list(roots)
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def _cpu(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS


def _part(pid: int, roots: set[int]) -> str:
    if pid in roots:
        return "engine"
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "other"
    line = b" ".join(argv).decode(errors="replace")
    if Path(argv[0].decode(errors="replace")).name == "node" or "basedpyright" in line:
        return "node"
    if "pytest" in line:
        return "pytest"
    if Path(argv[0].decode(errors="replace")).name == "git":
        return "git"
    return "other"


def _idle() -> tuple[float, float]:
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (values[3] + values[4]) / TICKS, sum(values) / TICKS


def measure(groups: list[list[str]], source: str, verify: str) -> tuple[float, dict[str, float], float, list[str]]:
    """Run each group in a process of its own, all at once: wall, CPU per part, idle share, rows."""
    before = _idle()
    started = time.monotonic()
    runners = [subprocess.Popen([sys.executable, "-c", _RUNNER, str(REPO), verify, source, *group],
                                stdout=subprocess.PIPE, text=True) for group in groups]
    roots = {runner.pid for runner in runners}
    last: dict[int, float] = {}
    parts: dict[int, str] = {}
    while any(runner.poll() is None for runner in runners):
        for pid in _tree(roots):
            spent = _cpu(pid)
            if spent is not None:
                last[pid] = spent
                parts.setdefault(pid, _part(pid, roots))
        time.sleep(0.02)
    wall = time.monotonic() - started
    after = _idle()
    cpu: dict[str, float] = defaultdict(float)
    for pid, spent in last.items():
        cpu[parts[pid]] += spent
    rows = [line for runner in runners for line in (runner.stdout.read() if runner.stdout else "").splitlines()]
    return wall, dict(cpu), (after[0] - before[0]) / (after[1] - before[1]), rows


def report(label: str, copies: int, wall: float, cpu: dict[str, float], idle: float) -> None:
    print(f"{label}: {wall / copies:.2f} s per repository; machine idle {idle:.1%}; "
          f"CPU s per repository {sum(cpu.values()) / copies:.2f}: "
          + ", ".join(f"{part} {seconds / copies:.2f}" for part, seconds in sorted(cpu.items())), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=8, help="copies per pass (even)")
    parser.add_argument("--source", default="auto", choices=("auto", "ast"))
    args = parser.parse_args()
    _project, source, _passed, verify = green_project()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-split-") as scratch:
        one = make_copies(source, Path(scratch) / "one", args.copies)
        two = make_copies(source, Path(scratch) / "two", args.copies)
        wall_one, cpu_one, idle_one, rows_one = measure([one], args.source, verify)
        report("one at a time", args.copies, wall_one, cpu_one, idle_one)
        wall_two, cpu_two, idle_two, rows_two = measure([two[0::2], two[1::2]], args.source, verify)
        report("two at once  ", args.copies, wall_two, cpu_two, idle_two)
        print(f"two at once / one at a time, throughput: {wall_one / wall_two:.2f}x; "
              f"cores one task keeps busy alone: {sum(cpu_one.values()) / wall_one:.2f} "
              f"(ceiling of the ratio: {2 * wall_one / sum(cpu_one.values()):.2f}x)")
        failed = [row for row in rows_one + rows_two if json.loads(row)["status"] != "planned"]
        if failed or len(rows_one) + len(rows_two) != 2 * args.copies:
            print(f"WARNING: not every repository was planned: {failed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

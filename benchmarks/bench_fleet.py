"""One batch plan across 40 copies of a real project: serially, and on Dask with 2 workers (issue 18).

Issue 48's run (100 repositories, each with a planned outcome checked against its row, the rows'
costs and the result cache) is benchmarks/bench_fleet_outcomes.py, which reuses this module's parts.

Run: ``.venv/bin/python benchmarks/bench_fleet.py [--copies 40] [--workers 2] [--sources auto,ast] [--apply-copies 8]``

The project is itsdangerous 2.2.0 of the real-project corpus (benchmarks/real_projects.toml,
fetched once into benchmarks/.corpus/ by bench_real_projects' helpers; its CRLF variant, as the
corpus defines it): 297 tests in about 2 s, so 40 copies fit in minutes. The plan is two of its
corpus cases that pass: rename ``encoding.py:want_bytes`` to ``ensure_bytes`` (five modules, a
re-export, a test) and move ``_json.py:_CompactJSON`` into ``url_safe.py`` (a class body reads it
at import time). ``--verify`` is the project's own suite.

Each copy is ``git init`` + one commit (the dirty guard and patches see a real repository). Every
pass gets fresh copies and a fresh OUT. For each source preference:
- serial: ``engine.fleet.run(..., executor="local")``, in this process;
- Dask: the same plan through ``process_tools.dask_fleet.DaskExecutor(workers=N)`` (an embedded
  LocalCluster of processes, one thread each: what ``graft batch`` starts by default), started
  before the clock and passed in, so the run's wall time is the fleet's and the cluster start is
  shown apart; a sampler thread in the driver follows each worker's RSS, alone and with its process
  tree (its basedpyright, pytest, git), and the workers are asked for their CPU seconds.

Figures: throughput (repositories / wall second) and the ratio Dask/serial against the issue's
1.8x target; scheduling overhead per task = (wall x workers - sum of the rows' task seconds) /
tasks, next to the median task time; peak memory per worker. Optionally a smaller ``--apply``
pass on Dask whose patches are checked to be exactly what was written (``git apply --check -R``).
Nothing is asserted about time: the machine is shared and other runs may load it (the load
average is printed around each pass).
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import psutil  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.bench_real_projects import DATA, BaselineRed, green_baseline
from engine import fleet
from engine.choices import SourcePreference

PROJECT = "itsdangerous"
PLAN: list[dict[str, Any]] = [
    {"op": "rename", "address": "src/itsdangerous/encoding.py:want_bytes", "new_name": "ensure_bytes"},
    {"op": "move", "address": "src/itsdangerous/_json.py:_CompactJSON", "dest": "src/itsdangerous/url_safe.py"},
]
TARGET = 1.8
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


@dataclass
class Memory:
    """Resident set sizes in MB of one worker, sampled every 100 ms (short peaks can be missed):
    its own process when the run starts (``idle``) and at its peak (``own``), and the peak sum of
    the process's and all its descendants' (``tree``: its language server, the verify's pytest,
    git, import checks).

    ``ru_maxrss`` is no use here: on Linux a process started by fork and exec keeps its parent's
    high-water mark, so a Dask worker reports the driver's peak and a pytest child its worker's."""

    idle: float
    own: float
    tree: float


@dataclass
class Pass:
    label: str
    source: str
    workers: int
    wall: float
    rows: list[fleet.FleetRow]
    startup: float = 0.0
    memory: dict[str, Memory] = field(default_factory=dict)
    load: tuple[float, float] = (0.0, 0.0)
    cpu: float = 0.0
    """CPU seconds the worker processes and their ended children used during the run."""
    busy: float = 0.0
    """The machine's CPU busy share during the run (every process on it, 0..1)."""

    @property
    def task_seconds(self) -> list[float]:
        return [row.seconds for row in self.rows]

    @property
    def throughput(self) -> float:
        return len(self.rows) / self.wall

    @property
    def cores_per_task(self) -> float:
        """CPU seconds per task second: above 1, a task alone keeps more than one core busy."""
        return self.cpu / sum(self.task_seconds)

    @property
    def others(self) -> float:
        """The machine's busy share not accounted for by this run's processes: other users' load."""
        return max(0.0, self.busy - self.cpu / (self.wall * (os.cpu_count() or 1)))

    @property
    def overhead(self) -> float:
        """Seconds per task the workers spent outside the task itself (scheduling, transfer,
        deserialising the task, idle at the tail, the driver writing patches and rows)."""
        return (self.wall * self.workers - sum(self.task_seconds)) / len(self.rows)


class TreeSampler:
    """Samples, in a thread of the driver, the RSS of each watched process alone and with its descendants."""

    def __init__(self, pids: dict[str, int], interval: float = 0.1) -> None:
        self._pids, self._interval = pids, interval
        self.idle = {name: rss(pid)[0] for name, pid in pids.items()}
        self.own: dict[str, float] = dict.fromkeys(pids, 0.0)
        self.tree: dict[str, float] = dict.fromkeys(pids, 0.0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            for name, pid in self._pids.items():
                own, tree = rss(pid)
                self.own[name], self.tree[name] = max(self.own[name], own), max(self.tree[name], tree)

    def memory(self) -> dict[str, Memory]:
        return {name: Memory(self.idle[name], self.own[name], self.tree[name]) for name in self._pids}


def busy_seconds() -> tuple[float, float]:
    """The machine's busy and total CPU seconds so far."""
    times = psutil.cpu_times()
    total = sum(times)
    return total - times.idle - getattr(times, "iowait", 0.0), total


def busy_share(before: tuple[float, float], after: tuple[float, float]) -> float:
    return (after[0] - before[0]) / max(after[1] - before[1], 1e-9)


def cpu_seconds() -> float:
    """This process's CPU seconds, and its ended children's (language servers, pytest, git)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def rss(pid: int) -> tuple[float, float]:
    """MB resident now in a process, and in it plus its descendants (0 when it is gone)."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0, 0.0
    sizes = []
    for process in processes:
        try:
            sizes.append(process.memory_info().rss / 2**20)
        except psutil.Error:
            sizes.append(0.0)  # ended between the listing and the read
    return sizes[0], sum(sizes)


# -- the project and its copies -----------------------------------------------------


def load_project(name: str) -> dict[str, object]:
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    return next(p for p in data["project"] if p["name"] == name)


def green_project() -> tuple[dict[str, object], Path, int, str]:
    """The project, its source with its suite run once as it is (SystemExit with the suite's tail
    when it fails), the passing test count, and the verify command."""
    project = load_project(PROJECT)
    try:
        source, passed = green_baseline(project)
    except BaselineRed as red:
        raise SystemExit(str(red)) from None
    return project, source, passed, verify_command(project)


def verify_command(project: dict[str, object]) -> str:
    """The project's suite as bench_real_projects runs it (no bytecode, no cache, src on the path)."""
    listed = project["tests"]
    assert isinstance(listed, list), listed
    tests = " ".join(shlex.quote(str(t)) for t in listed)
    pythonpath = shlex.quote(str(project.get("pythonpath", ".")))
    return (f"PYTHONPATH={pythonpath} PYTHONDONTWRITEBYTECODE=1 {shlex.quote(sys.executable)} "
            f"-m pytest -q -p no:cacheprovider {tests}")


def git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def make_copies(source: Path, root: Path, count: int) -> list[str]:
    repos = []
    for index in range(count):
        repo = root / f"{source.name}-{index:03d}"
        shutil.copytree(source, repo, symlinks=True)
        git(repo, "init", "-q")
        git(repo, "add", ".")
        git(repo, "commit", "-qm", "initial")
        repos.append(str(repo))
    return repos


# -- passes -------------------------------------------------------------------------


def progress(update: fleet.FleetProgress) -> None:
    mark = "." if update.last is None or update.last.status in ("planned", "applied") else "x"
    print(mark, end="\n" if update.done == update.total else "", file=sys.stderr, flush=True)


def run_serial(repos: list[str], out: Path, options: fleet.FleetOptions) -> Pass:
    load_before = os.getloadavg()[0]
    cpu_before, busy_before = cpu_seconds(), busy_seconds()
    with TreeSampler({"this process": os.getpid()}) as sampler:
        started = time.monotonic()
        rows = fleet.run(PLAN, repos, out=out, options=options, executor="local", progress=progress)
        wall = time.monotonic() - started
    busy = busy_share(busy_before, busy_seconds())
    return Pass("serial (local)", options.source.value, 1, wall, rows, memory=sampler.memory(),
                load=(load_before, os.getloadavg()[0]), cpu=cpu_seconds() - cpu_before, busy=busy)


def _worker_cpu() -> float:
    """On a worker: its and its ended children's CPU seconds."""
    import resource as worker_resource

    own, children = worker_resource.getrusage(worker_resource.RUSAGE_SELF), worker_resource.getrusage(
        worker_resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_dask(repos: list[str], out: Path, options: fleet.FleetOptions, workers: int) -> Pass:
    from process_tools.dask_fleet import DaskExecutor

    started = time.monotonic()
    executor = DaskExecutor(scheduler=None, workers=workers)
    try:
        client = executor._client  # the benchmark asks the workers for their memory
        client.wait_for_workers(workers, timeout=120)
        startup = time.monotonic() - started
        cpu_before: dict[str, float] = client.run(_worker_cpu)
        pids: dict[str, int] = client.run(os.getpid)
        load_before, busy_before = os.getloadavg()[0], busy_seconds()
        with TreeSampler(pids) as sampler:
            started = time.monotonic()
            rows = fleet.run(PLAN, repos, out=out, options=options, executor=executor, progress=progress)
            wall = time.monotonic() - started
        load_after, busy = os.getloadavg()[0], busy_share(busy_before, busy_seconds())
        cpu_after: dict[str, float] = client.run(_worker_cpu)
    finally:
        executor.close()
    cpu = sum(cpu_after[address] - cpu_before[address] for address in cpu_after)
    return Pass(f"dask ({workers} workers)", options.source.value, workers, wall, rows, startup, sampler.memory(),
                (load_before, load_after), cpu, busy)


def apply_pass(source: Path, scratch: Path, count: int, options: fleet.FleetOptions, workers: int) -> tuple[Pass, int]:
    """--apply on fresh copies; how many applied repositories' patches reverse-apply exactly."""
    root = scratch / "apply"
    repos = make_copies(source, root, count)
    result = run_dask(repos, scratch / "out-apply", options, workers)
    exact = 0
    for row in result.rows:
        if row.status == "applied" and row.patch:
            check = subprocess.run(["git", "apply", "--check", "-R", row.patch], cwd=row.repo, capture_output=True,
                                   check=False)
            exact += check.returncode == 0
    result.label = f"dask --apply ({workers} workers)"
    return result, exact


# -- report -------------------------------------------------------------------------


def statuses(rows: list[fleet.FleetRow]) -> str:
    return ", ".join(f"{status} {n}" for status, n in sorted(Counter(row.status for row in rows).items()))


def describe(result: Pass) -> str:
    seconds = result.task_seconds
    per_worker = Counter(row.worker for row in result.rows)
    lines = [(f"{result.label}, --source {result.source}: {len(result.rows)} repos in {result.wall:.1f} s "
              f"({result.throughput:.3f} repos/s); {statuses(result.rows)}"),
             (f"  task seconds: median {statistics.median(seconds):.2f}, min {min(seconds):.2f}, max {max(seconds):.2f}, "
              f"sum {sum(seconds):.1f}; overhead per task {result.overhead * 1000:.0f} ms"),
             (f"  CPU: {result.cpu:.1f} s by the workers and their children ({result.cpu / len(result.rows):.1f} s per repo) "
              f"= {result.cores_per_task:.2f} cores per task "
              f"second; the machine was {result.busy:.0%} busy ({result.others:.0%} by other processes); "
              f"load average (1 min) before/after: {result.load[0]:.2f} / {result.load[1]:.2f}")]
    if result.startup:
        lines.append(f"  cluster start (not in the wall time): {result.startup:.1f} s; tasks per worker: "
                     + ", ".join(f"{w.rsplit(':', 1)[-1]}={n}" for w, n in sorted(per_worker.items())))
    for name, memory in sorted(result.memory.items()):
        lines.append(f"  RSS {name}: process {memory.idle:.0f} MB at the start, peak {memory.own:.0f} MB; "
                     f"peak with its descendants {memory.tree:.0f} MB")
    failed = [row for row in result.rows if row.status not in ("planned", "applied")]
    for row in failed[:3]:
        lines.append(f"  {Path(row.repo).name}: {row.status}: {row.reason} {row.verify_tail[-300:]}")
    return "\n".join(lines)


def table(pairs: list[tuple[Pass, Pass]]) -> str:
    head = ("| source | executor | wall (s) | repos/s | ratio vs serial (target 1.8x) | median task (s) "
            "| overhead/task (ms) | CPU s/repo | cores per task | machine busy (others) | peak RSS per worker: process / with descendants (MB) |"
            "\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for serial, dask in pairs:
        for result in (serial, dask):
            ratio = result.throughput / serial.throughput
            verdict = "" if result is serial else (" met" if ratio >= TARGET else " not met")
            memory = "; ".join(f"{m.own:.0f} / {m.tree:.0f}" for _, m in sorted(result.memory.items()))
            lines.append(f"| {result.source} | {result.label} | {result.wall:.1f} | {result.throughput:.3f} | "
                         f"{ratio:.2f}x{verdict} | {statistics.median(result.task_seconds):.2f} | "
                         f"{result.overhead * 1000:.0f} | {result.cpu / len(result.rows):.1f} | {result.cores_per_task:.2f} | {result.busy:.0%} ({result.others:.0%}) | {memory} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sources", default="auto,ast",
                        help="source preferences, comma-separated (auto: basedpyright per task, what a user runs by default)")
    parser.add_argument("--apply-copies", type=int, default=8, help="copies for the --apply pass on Dask (0: none)")
    args = parser.parse_args()
    project, source, passed, verify = green_project()
    print(f"{PROJECT} {project['version']} ({source.name}): {passed} tests green; {os.cpu_count()} cores; "
          f"{args.copies} copies per pass\nplan: {PLAN}\n--verify: {verify}\n", flush=True)
    pairs = []
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as scratch_name:
        scratch = Path(scratch_name)
        for preference in args.sources.split(","):
            options = fleet.FleetOptions(verify=verify, source=SourcePreference(preference))
            serial = run_serial(make_copies(source, scratch / f"serial-{preference}", args.copies),
                                scratch / f"out-serial-{preference}", options)
            print(describe(serial), flush=True)
            dask = run_dask(make_copies(source, scratch / f"dask-{preference}", args.copies),
                            scratch / f"out-dask-{preference}", options, args.workers)
            print(describe(dask), flush=True)
            print(f"  throughput ratio dask/serial ({preference}): {dask.throughput / serial.throughput:.2f}x "
                  f"(target {TARGET}x)\n", flush=True)
            pairs.append((serial, dask))
        if args.apply_copies:
            options = fleet.FleetOptions(apply=True, verify=verify, source=SourcePreference(args.sources.split(",")[0]))
            applied, exact = apply_pass(source, scratch, args.apply_copies, options, args.workers)
            print(describe(applied))
            print(f"  patches that reverse-apply exactly on the applied repositories: {exact}/{len(applied.rows)}\n")
    print(table(pairs))


if __name__ == "__main__":
    main()

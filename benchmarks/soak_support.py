"""What both parts of bench_soak.py share: the processes the run started (each killed on exit),
their resident memory, and the tally of a part's latencies, errors and leaks."""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable



REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "fixtures" / "sample"
GRAFT = Path(sys.executable).parent / "graft"

MAX_ERRORS_KEPT = 12
"""Error and leak descriptions kept for the report (all are counted)."""
REQUEST_TIMEOUT = 120.0
WARMUP_SHARE = 0.10
MEMORY_TARGET_PCT = 10.0

#: Every process this run started, by pid (each leads its own process group): killed on exit.
STARTED: set[int] = set()


# -- processes and memory ------------------------------------------------------------------


def kill_group(pid: int) -> None:
    """SIGTERM then SIGKILL to a process group we started (the server and anything it spawned)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and alive(pid):
            time.sleep(0.1)
        if not alive(pid):
            break
    STARTED.discard(pid)


def kill_everything_started() -> None:
    for pid in list(STARTED):
        kill_group(pid)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    if state == "Z":
        # Our own zombie child: reap it so the pid is not reused under our feet.
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        return False
    return True


def rss_kib(pid: int) -> int | None:
    """Resident memory of one process (VmRSS), or None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


@dataclass
class MemoryTrack:
    """RSS of a server process: at the end of the warm-up, at the end, and the peak in between."""

    pid: int
    warm_kib: int | None = None
    end_kib: int | None = None
    peak_kib: int = 0

    def sample(self) -> int | None:
        value = rss_kib(self.pid)
        if value is not None:
            self.peak_kib = max(self.peak_kib, value)
        return value

    def mark_warm(self) -> None:
        if self.warm_kib is None:
            self.warm_kib = self.sample()

    def mark_end(self) -> None:
        self.end_kib = self.sample()
        if self.warm_kib is None:
            # The run stopped before the warm-up ended: no growth can be claimed.
            self.warm_kib = self.end_kib

    def growth_pct(self) -> float | None:
        if not self.warm_kib or self.end_kib is None:
            return None
        return (self.end_kib - self.warm_kib) * 100.0 / self.warm_kib

    def to_json(self) -> dict[str, Any]:
        growth = self.growth_pct()
        return {"warm_kib": self.warm_kib, "end_kib": self.end_kib, "peak_kib": self.peak_kib,
                "growth_pct": None if growth is None else round(growth, 2)}

    async def sample_forever(self, every: float = 0.5) -> None:
        """The peak is sampled in the background; warm and end are taken at their moments."""
        while True:
            self.sample()
            await asyncio.sleep(every)


# -- what a part measured ------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile (no interpolation: p99 of 200 samples is the 198th)."""
    ordered = sorted(values)
    # Rounded first: 0.99 * 100 is 99.00000000000001 in floating point, whose ceiling is 100.
    rank = max(1, math.ceil(round(share * len(ordered), 9)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass
class Tally:
    """Latencies per request kind, errors and leaks of one part."""

    planned: int
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    leaks: int = 0
    leak_probes: int = 0
    leak_samples: list[str] = field(default_factory=list)
    interrupted: int = 0
    """Requests cut by the global deadline (not errors: the run was told to stop)."""
    done: int = 0
    on_progress: Callable[[int], None] | None = None

    def record(self, kind: str, seconds: float) -> None:
        self.latencies.setdefault(kind, []).append(seconds)
        self.done += 1
        if self.on_progress is not None:
            self.on_progress(self.done)

    def error(self, message: str) -> None:
        self.errors += 1
        if len(self.error_samples) < MAX_ERRORS_KEPT:
            self.error_samples.append(message)

    def leak(self, message: str) -> None:
        self.leaks += 1
        if len(self.leak_samples) < MAX_ERRORS_KEPT:
            self.leak_samples.append(message)

    def summary(self) -> dict[str, dict[str, float]]:
        rows = {kind: values for kind, values in sorted(self.latencies.items())}
        rows["all"] = [v for values in self.latencies.values() for v in values]
        return {kind: {"count": len(values), "p50_ms": round(percentile(values, 0.50) * 1000, 1),
                       "p99_ms": round(percentile(values, 0.99) * 1000, 1)}
                for kind, values in rows.items() if values}



def logged_exceptions(log: Path) -> list[str]:
    """The exception line (``module.Error: message``) of every traceback a server logged."""
    text = log.read_text(errors="replace") if log.exists() else ""
    found = []
    for chunk in text.split("Traceback (most recent call last):")[1:]:
        lines = [line for line in chunk.splitlines()[1:] if line.strip()]
        found.append(next((line for line in lines if not line.startswith(" ")), "(no exception line)")[:300])
    return found



def part_json(name: str, tally: Tally, memory: MemoryTrack, seconds: float, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "part": name, "seconds": round(seconds, 1), "requests_planned": tally.planned, "requests_done": tally.done,
        "interrupted_by_deadline": tally.interrupted, **extra,
        "latency": tally.summary(), "errors": tally.errors, "error_samples": tally.error_samples,
        "leak_probes": tally.leak_probes, "leaks": tally.leaks, "leak_samples": tally.leak_samples,
        "memory": memory.to_json(),
    }


# -- the workspace ---------------------------------------------------------------------------


def client_module(n: int) -> str:
    """Client n's own module: only client n edits it, so applies and undos never race."""
    return (
        f'"""Soak client {n}\'s own module: only client {n} edits it."""\n\n'
        "from __future__ import annotations\n\n"
        "from .util import round_cents\n\n"
        "REVISION = 0  # bumped by edit_file\n\n\n"
        f"def compute_{n}(amount):\n"
        '    """A price through the shared helper."""\n'
        "    return round_cents(amount)\n\n\n"
        f"def total_{n}(amounts):\n"
        f"    return sum(compute_{n}(a) for a in amounts)\n\n\n"
        f"def label_{n}() -> str:\n"
        f'    return "client {n} label 0"\n\n\n'
        f"class Tally{n}:\n"
        "    def __init__(self) -> None:\n"
        "        self.count = 0\n\n"
        "    def bump(self) -> int:\n"
        "        self.count += 1\n"
        "        return self.count\n"
    )


def make_workspace(parent: Path, clients: int) -> Path:
    root = parent / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft", "__pycache__"))
    for n in range(clients):
        (root / "shop" / f"client_{n}.py").write_text(client_module(n))
        # A file only client n ever reads: the target of the other clients' isolation probes.
        (root / "shop" / f"probe_{n}.py").write_text(f'"""Read by client {n} only."""\n\nOWNER = {n}\n')
    return root

"""Warm renames asked of the bare server and planned by codegraft in turns, for the benches that
compare the two (bench_cold_start, bench_ts7): each pair in the same moment, so that a shared
machine's changing load falls on both alike.

The benches' warm runs alternate between two renames, so the order within a pair is swapped
every second run: each rename is then asked in both orders. Swapped every run, the order went
with the rename, and a server slower on one of them (tsc --lsp's answers to the two differ by
several milliseconds) read as an order effect.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

SETTLING = 3
"""Pairs left out of the medians when there are more than twice as many: both warm up over their first few."""


@dataclass
class Pairs:
    ratios: list[float] = field(default_factory=list)
    planned: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    processor: list[float] = field(default_factory=list)
    """This process's processor seconds in each of codegraft's plans."""

    def settled(self, values: list[float]) -> list[float]:
        return values[SETTLING:] if len(values) > 2 * SETTLING else values

    def report(self, target: float) -> str:
        median = statistics.median(self.settled(self.ratios))
        return (f"interleaved warm pairs (the first {SETTLING} left out of the medians when there are more than {2 * SETTLING}): "
                f"median ratio {median:.2f}x (target ≤ {target:g}x: {'met' if median <= target else 'not met'}); "
                f"codegraft median {statistics.median(self.settled(self.planned)) * 1000:.1f} ms, "
                f"raw {statistics.median(self.settled(self.raw)) * 1000:.1f} ms, "
                f"processor time per plan {statistics.median(self.settled(self.processor)) * 1000:.1f} ms; "
                f"ratios {', '.join(f'{r:.2f}' for r in self.ratios)}")


def in_turns(runs: int, raw: Callable[[int], float], planned: Callable[[int], None]) -> Pairs:
    """``runs`` pairs of ``raw(run)`` (the bare server's seconds) and ``planned(run)`` (one plan,
    timed here with this process's processor time)."""
    pairs = Pairs()
    for run in range(runs):
        for side in ("raw", "codegraft") if run // 2 % 2 == 0 else ("codegraft", "raw"):
            if side == "raw":
                pairs.raw.append(raw(run))
                continue
            began, began_processor = time.perf_counter(), time.process_time()
            planned(run)
            pairs.planned.append(time.perf_counter() - began)
            pairs.processor.append(time.process_time() - began_processor)
        pairs.ratios.append(pairs.planned[-1] / pairs.raw[-1])
    return pairs

"""What a fleet run is (its id, its plan's hash, its options) and what it says of each repository
(one row)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from engine.choices import SourcePreference

STATUSES = ("applied", "planned", "refused", "dirty_files", "baseline_failed", "verify_failed", "error")
FAILED = ("refused", "dirty_files", "baseline_failed", "verify_failed", "error")
"""The statuses that make the run's exit status 1: the repository did not get the change (or
its plan) cleanly."""
BUSY = "busy"
"""Not a row's final status: another live task of this run is writing the repository now (a
duplicate Dask started, or the task of a driver that has gone); its outcome is not known yet.
The Dask executor runs one task per repository at a time, so a task meets this only after
waiting its limit; the driver records such a row as an error, and --resume runs it again."""
TAIL = 2000
COSTS = ("server_start", "plan", "verify", "baseline")


@dataclass(frozen=True)
class FleetOptions:
    apply: bool = False
    verify: str | None = None
    source: SourcePreference = SourcePreference.AUTO
    allow_dirty: bool = False

    def to_json(self) -> dict[str, object]:
        return {"apply": self.apply, "verify": self.verify, "source": self.source.value, "allow_dirty": self.allow_dirty}


def plan_hash(plan: list[dict[str, Any]]) -> str:
    """The plan's identity: the same steps give the same hash whatever their keys' order."""
    return hashlib.sha256(json.dumps(plan, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def always_alive() -> bool:
    """The run's lease where the driver runs the tasks itself: a task runs only while it does."""
    return True


@dataclass(frozen=True)
class FleetRun:
    """One run's identity, carried by every task: recorded in each repository's journal (so that
    a task run again, or a resumed run, finds what this run already committed), and the driver's
    lease, asked just before each commit (a task whose driver has gone rolls back)."""

    run_id: str
    plan_hash: str
    alive: Callable[[], bool] = always_alive

    @property
    def request(self) -> str:
        """The request id of this run's transaction in a repository's journal."""
        return f"fleet:{self.run_id}:{self.plan_hash}"


@dataclass
class FleetRow:
    repo: str
    status: str = "error"
    worker: str = "local"
    run: str = ""
    """The id of the run that wrote the row (the one in the repository's journal when applied)."""
    patch: str | None = None
    files: list[str] = field(default_factory=list)
    edits: int = 0
    source: str | None = None
    confidence: str | None = None
    warnings: list[str] = field(default_factory=list)
    reason: str = ""
    seconds: float = 0.0
    transaction: str | None = None
    """The journal's transaction id when applied (``graft undo TXN`` in that repository)."""
    verify_status: int | None = None
    verify_tail: str = ""
    baseline_status: int | None = None
    """The verify command's status before the change, when it ran (it runs when the verify fails after it)."""
    baseline_tail: str = ""
    costs: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COSTS, 0.0))
    """What the repository cost, in seconds: ``server_start`` (language servers spawned until they
    answered ``initialize``), ``plan`` (the plan, server start included), ``verify`` (the verify
    command with the change) and ``baseline`` (without it, when that ran). Zero when it did not run."""
    cached: str = ""
    """When the row was taken from the result cache: when it was first computed (and by which run);
    empty when it was computed now."""
    patch_text: str = ""
    """The patch itself, carried from the worker to the driver (which writes it); not in results.jsonl."""

    def to_json(self) -> dict[str, object]:
        return {"repo": self.repo, "status": self.status, "worker": self.worker, "run": self.run, "patch": self.patch,
                "files": self.files, "edits": self.edits, "source": self.source, "confidence": self.confidence,
                "warnings": self.warnings, "reason": self.reason, "seconds": round(self.seconds, 3),
                "transaction": self.transaction, "verify_status": self.verify_status, "verify_tail": self.verify_tail,
                "baseline_status": self.baseline_status, "baseline_tail": self.baseline_tail,
                "costs": {name: round(seconds, 3) for name, seconds in self.costs.items()}, "cached": self.cached}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FleetRow:
        known = {key: data[key] for key in cls.__dataclass_fields__ if key in data and key != "patch_text"}
        return cls(**known)


@dataclass(frozen=True)
class FleetProgress:
    """Where a fleet run is: ``last`` is the row that just arrived, None at the start."""

    done: int
    failed: int
    in_flight: int
    total: int
    last: FleetRow | None

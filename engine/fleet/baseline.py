"""The verify command before the change: a repository whose tests were already red is not the
change's fault (status ``baseline_failed``).

It runs only when the verify fails after the change: a green run after the change needs no
baseline, and the tests run once instead of twice. Its result is cached under
``.graft/fleet/`` by the commit checked out and the command, and only when no tracked file has
uncommitted changes (``Tools.revision``), so a cached result always describes the same files.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from engine.fleet.journal_outcome import FOLDER
from engine.ports import Tools
from engine.state_folder import read_state_file, state_folder, write_new_file


@dataclass(frozen=True)
class Baseline:
    status: int
    output: str
    cached_at: str = ""
    """When the cached result was taken (empty when it ran now)."""

    def describe(self, command: str) -> str:
        cached = f" (cached from {self.cached_at}, same commit and command)" if self.cached_at else ""
        return f"`{command}` failed with status {self.status} before the change too{cached}"


def baseline(root: Path, tools: Tools, command: str, run: Callable[[], tuple[int, str]]) -> Baseline:
    """The verify command's outcome on the repository without the change: cached, or ``run()``."""
    revision = tools.revision()
    key = hashlib.sha256(f"{revision}\0{command}".encode()).hexdigest()[:32]
    name = f"baseline-{key}.json"
    if revision is not None:
        cached = _cached(root / ".graft" / FOLDER / name, revision, command)
        if cached is not None:
            return cached
    status, output = run()
    if revision is not None:
        record = {"revision": revision, "command": command, "status": status, "output": output,
                  "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        write_new_file(state_folder(root, FOLDER) / name, json.dumps(record).encode("utf-8"))
    return Baseline(status, output)


def _cached(path: Path, revision: str, command: str) -> Baseline | None:
    try:
        data = json.loads(read_state_file(path))
    except (OSError, ValueError):
        return None
    if (not isinstance(data, dict) or data.get("revision") != revision or data.get("command") != command
            or not isinstance(data.get("status"), int) or not isinstance(data.get("output"), str)):
        return None
    return Baseline(data["status"], data["output"], str(data.get("at", "")) or "an earlier run")

"""``OUT/run.json``: which run an OUT folder holds (its id, its plan's hash, its options), so that
``--resume`` continues that run, with the same id in every repository's journal, and refuses to
mix another plan's or other options' rows into it."""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import UsageError
from engine.fleet.rows import FleetOptions, plan_hash

RUN_FILE = "run.json"


@dataclass(frozen=True)
class RunRecord:
    run_id: str
    plan_hash: str
    resumed: bool


def open_run(out: Path, plan: list[dict[str, Any]], options: FleetOptions, *, resume: bool, has_rows: bool) -> RunRecord:
    """A new run (a fresh id, written to OUT/run.json), or with ``resume`` the run OUT holds."""
    digest = plan_hash(plan)
    path = out / RUN_FILE
    if resume and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            run_id, recorded_plan, recorded_options = str(data["run"]), str(data["plan"]), dict(data["options"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UsageError(f"--resume: {path} cannot be read ({error}); run without --resume, or with another --out") from None
        if recorded_plan != digest:
            raise UsageError(f"--resume: {out} holds run {run_id} of another plan (hash {recorded_plan[:12]}, this one "
                             f"{digest[:12]}); resume it with its own plan, or choose another --out")
        if recorded_options != options.to_json():
            differ = sorted(key for key in {*recorded_options, *options.to_json()}
                            if recorded_options.get(key) != options.to_json().get(key))
            then = json.dumps({key: recorded_options.get(key) for key in differ})
            raise UsageError(f"--resume: {out} holds run {run_id} with other options (it had {then}); resume it with the "
                             "same options, or choose another --out")
        return RunRecord(run_id, digest, resumed=True)
    if resume and has_rows:
        raise UsageError(f"--resume: {out} has rows but no {RUN_FILE} (written by an older codegraft), so what run they "
                         "belong to is not known; run without --resume, or with another --out")
    record = RunRecord(uuid.uuid4().hex, digest, resumed=False)
    data = {"run": record.run_id, "plan": digest, "options": options.to_json(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    temporary = path.with_name(f".{RUN_FILE}.{os.getpid()}")
    temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return record

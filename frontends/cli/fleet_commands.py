"""``graft batch PLAN --repos LIST``: one plan across many repositories (engine.fleet), with
progress on stderr while it runs (``--progress``: frontends.cli.fleet_progress) and a summary
table at the end.

Exit status: 0 when every repository was applied or planned, 1 when any was not (refused,
dirty files, red before the change, failed its verify, an error: each row says which and why), 2
for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from engine.api_surface import FLEET_FAILED, FLEET_RESULTS, FLEET_STATUSES, FleetOptions, FleetRow, load_plan, load_repos, SourcePreference
from engine.api_surface import run_fleet as run_plan_on_repos
from frontends.cli.fleet_progress import FleetReporter
from frontends.render.terminal import printable

_FAILED = FLEET_FAILED


def run_fleet(args: argparse.Namespace) -> int:
    steps = load_plan(Path(args.plan))
    plan = [{"op": step.name, **step.values()} for step in steps]
    repos = load_repos(Path(args.repos))
    options = FleetOptions(apply=args.write, verify=args.verify, source=SourcePreference(args.source),
                                 allow_dirty=args.allow_dirty)
    reporter = FleetReporter(args.progress, sys.stderr) if args.progress != "none" else None
    try:
        rows = run_plan_on_repos(plan, repos, out=Path(args.out), options=options, executor=args.executor,
                         scheduler=args.scheduler, workers=args.workers, resume=args.resume, progress=reporter)
    finally:
        if reporter is not None:
            reporter.close()
    if reporter is not None:
        reporter.end(rows)
    counts = Counter(row.status for row in rows)
    if args.json:
        print(json.dumps({"ok": True, "command": "batch", "out": str(Path(args.out).resolve()), "counts": dict(counts),
                          "rows": [row.to_json() for row in rows]}, ensure_ascii=False, indent=2))
    else:
        print(printable(_table(rows, counts, Path(args.out))))
    return 1 if any(counts[status] for status in _FAILED) else 0


def _table(rows: list[FleetRow], counts: Counter[str], out: Path) -> str:
    lines = [f"{'repository':<28} {'status':<14} {'files':>5} {'edits':>5} {'s':>6}  reason / patch"]
    for row in sorted(rows, key=lambda r: (r.status not in _FAILED, r.repo)):
        detail = row.reason.splitlines()[0][:90] if row.reason else (row.patch or "")
        lines.append(f"{Path(row.repo).name[:28]:<28} {row.status:<14} {len(row.files):>5} {row.edits:>5} {row.seconds:>6.1f}  {detail}")
    summary = ", ".join(f"{counts[status]} {status}" for status in FLEET_STATUSES if counts[status])
    lines.append(f"{len(rows)} repositories: {summary}; rows in {out / FLEET_RESULTS}")
    return "\n".join(lines)

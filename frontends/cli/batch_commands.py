"""``graft batch``: a plan of refactorings as one transaction (or step by step), with progress.

Its own module because planning a batch needs the refactoring machinery (LibCST): the
commands that do not are not made to import it (frontends.cli.main loads handlers by command).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.api_surface import EditOutcome, Engine, load_plan, run_batch
from frontends.cli.operation_commands import APPLY_HINT, FINISH_HINT, edit_options, option_hint
from frontends.render.edits import outcome_text
from frontends.render.terminal import printable

Result = tuple[dict[str, object], str, str]


def run_batch_command(engine: Engine, args: argparse.Namespace) -> Result:
    steps = load_plan(Path(args.plan))
    progress = _progress if sys.stderr.isatty() else None

    outcome = run_batch(engine, steps, apply=args.write, each=args.each, options=edit_options(engine, args), progress=progress)
    return _batch_result(outcome, colour=sys.stdout.isatty() and not args.json)


def _progress(index: int, total: int, target: str) -> None:
    print(f"\r[{index}/{total}] {printable(target)[:70]:<70}", end="" if index < total else "\n", file=sys.stderr, flush=True)


def _batch_result(outcome: EditOutcome, *, colour: bool) -> Result:
    text, notes = outcome_text(outcome, apply_hint=APPLY_HINT, option_hint=option_hint, colour=colour,
                               finish_hint=FINISH_HINT)
    return outcome.to_json(), text, notes

"""The refactoring commands, built from the registry (engine.refactor.operations.OPERATIONS).

Each operation's fields become its arguments: required fields are positional, source text
is read from a file (``--body-file F``, ``-`` for stdin), a flag that is off by default is
``--flag`` and one that is on is ``--no-flag``. Every command previews (or with ``--apply``
writes) through the same client path as the MCP tools, so its ``--json`` is their shape.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.api_surface import CheckMode, EditOptions, Engine, EngineClient, FieldKind, OPERATIONS, UsageError
from frontends.render import option_hints
from frontends.render.edits import outcome_text

Result = tuple[dict[str, object], str, str]

APPLY_HINT = "pass --apply to write"
FINISH_HINT = "graft check --last finishes the check"


def run_operation(engine: Engine, args: argparse.Namespace) -> Result:
    operation = OPERATIONS[args.command]
    values = {}
    for info in operation.fields():
        value = getattr(args, info.name)
        values[info.name] = read_text(value) if info.kind is FieldKind.CODE else value
    built = operation.build(values)
    outcome = EngineClient(engine).run_operation(built, apply=args.write, options=edit_options(engine, args))
    colour = sys.stdout.isatty() and not args.json
    text, notes = outcome_text(outcome, target=built.target(), apply_hint=APPLY_HINT, option_hint=option_hint, colour=colour,
                               finish_hint=FINISH_HINT)
    return {"target": built.target(), **outcome.to_json()}, text, notes


def option_hint(option: str | None) -> str:
    """How to set, on the command line, the option an engine refusal names."""
    return option_hints.CLI(option)


def edit_options(engine: Engine, args: argparse.Namespace) -> EditOptions:
    return EditOptions(
        allow_dirty=args.allow_dirty or engine.settings.allow_dirty, allow_syntax_errors=args.allow_syntax_errors,
        force=args.force, fail_on_new_errors=args.fail_on_new_errors, verify=args.verify, check=CheckMode(args.check),
        request=getattr(args, "request", None),
    )


def read_text(path: str) -> str:
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None

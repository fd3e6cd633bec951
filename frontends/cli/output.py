"""How every ``graft`` command ends: its answer on stdout (text, or JSON with ``--json``), its
notes on stderr, a refusal on stderr (and in JSON), and the exit status. Light (no engine
imports): the thin client ends ``graft daemon …`` with it without loading the engine."""

from __future__ import annotations

import json
import sys

from engine.api_surface import GraftError, UsageError
from frontends.render.terminal import printable

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_USAGE = 2


def answered(command: str, payload: dict[str, object], text: str, notes: str, *, as_json: bool) -> int:
    if notes:
        print(printable(notes), file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": True, "command": command, **payload}, ensure_ascii=False, indent=2))
    else:
        print(printable(text))
    return EXIT_OK


def refused(command: str, error: GraftError, *, as_json: bool, hint: str = "") -> int:
    print(printable(f"graft {command}: {error.message}{hint}"), file=sys.stderr)
    if as_json:
        print(json.dumps({"ok": False, "error": error.to_json()}, ensure_ascii=False, indent=2))
    return EXIT_USAGE if isinstance(error, UsageError) else EXIT_REFUSED

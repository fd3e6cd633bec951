"""Journal records written by hand, as this user's codegraft would seal them or as a stranger would not."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.edits.journal_trust import seal, workspace_secret


def manifest(entries: list[dict[str, Any]], transaction: str, *, kind: str = "apply", request: str | None = None) -> dict[str, Any]:
    """A well-formed manifest that nobody sealed (as a cloned or planted one is)."""
    return {"id": transaction, "created": 1.0, "kind": kind, "entries": entries, **({"request": request} if request else {})}


def sealed(root: Path, fields: dict[str, Any]) -> str:
    """``fields`` as this user's codegraft writes it for ``root``: its uid and the seal of the workspace's key."""
    record = {**fields, "creator_uid": os.getuid()}
    record["seal"] = seal(record, workspace_secret(root))
    return json.dumps(record)

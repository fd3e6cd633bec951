"""A repository's row, cached: a re-run on an unchanged repository costs two git calls.

The key is the commit checked out, the plan's hash, the run's options and the engine's version
(the package's version and a hash of the engine's own source, since an editable install keeps
its version while its code changes). A row is cached, and taken from the cache, only when the
working tree is exactly that commit (``Tools.revision(untracked=True)``: no tracked change, no
file git does not ignore), so the cached row describes the same files. Rows that changed the
repository (``applied``) or say nothing certain (``error``) are never cached. Entries live under
``.graft/fleet/`` (git-ignored), beside the baseline cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from engine.fleet.journal_outcome import FOLDER
from engine.fleet.rows import FleetOptions, FleetRow
from engine.state_folder import read_state_file, state_folder, write_new_file

CACHEABLE = ("planned", "refused", "dirty_files", "baseline_failed", "verify_failed")


@functools.lru_cache(maxsize=1)
def engine_version() -> str:
    """``<package version>+<hash of engine/*.py>``: a changed engine never reads an old row."""
    try:
        package = version("codegraft")
    except PackageNotFoundError:
        package = "unknown"
    digest = hashlib.sha256()
    folder = Path(__file__).resolve().parent.parent
    for path in sorted(folder.rglob("*.py")):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return f"{package}+{digest.hexdigest()[:16]}"


def key(revision: str, plan_hash: str, options: FleetOptions) -> str:
    material = json.dumps({"revision": revision, "plan": plan_hash, "options": options.to_json(),
                           "engine": engine_version()}, sort_keys=True)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def cached_row(root: Path, entry: str) -> dict[str, Any] | None:
    """The row kept under ``entry`` (with its patch text), or None."""
    try:
        data = json.loads(read_state_file(root / ".graft" / FOLDER / f"row-{entry}.json"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != entry or not isinstance(data.get("row"), dict):
        return None
    return data


def keep(root: Path, entry: str, row: FleetRow) -> None:
    if row.status not in CACHEABLE:
        return
    record = {"key": entry, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "engine": engine_version(),
              "row": row.to_json(), "patch_text": row.patch_text}
    write_new_file(state_folder(root, FOLDER) / f"row-{entry}.json", json.dumps(record).encode("utf-8"))

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

# Every `graft` a test starts runs in its own process, not through a warm daemon that would
# outlive the test; the daemon's own tests (test_daemon.py, test_cli.py's daemon half) start
# and stop theirs explicitly.
os.environ["GRAFT_DAEMON"] = "0"

# The keys that seal each workspace's journal live in the user's state folder, outside the
# workspace (engine/edits/journal_trust.py): the tests' thousands of scratch workspaces keep
# theirs in one folder of the test run's, not in the home folder. Every process a test starts
# inherits it, so a daemon or a fleet worker finds the same keys.
if not os.environ.get("XDG_STATE_HOME"):
    _state = Path(os.environ.get("TMPDIR", "/tmp")) / f"codegraft-test-state-{os.getuid()}"
    _state.mkdir(mode=0o700, exist_ok=True)
    os.environ["XDG_STATE_HOME"] = str(_state)

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "fixtures" / "sample"
EXPECTED = REPO / "fixtures" / "expected"


@pytest.fixture
def sample_root() -> Path:
    return SAMPLE


def tree_fingerprint(root: Path) -> dict[str, str]:
    """Content hash and mode of every file under ``root``: proof that nothing was written.

    codegraft's own ``.graft/`` (locks, cache, journal) is not the user's and is left out."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".graft"]
        for name in files:
            path = Path(folder) / name
            if path.is_symlink():
                found[str(path.relative_to(root))] = "link:" + os.readlink(path)
                continue
            data = path.read_bytes()
            found[str(path.relative_to(root))] = f"{hashlib.sha256(data).hexdigest()}:{path.stat().st_mode:o}"
    return found

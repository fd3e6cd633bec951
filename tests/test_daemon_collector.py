"""The daemon's calls run without a full cyclic collection (it landed in the middle of answers)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO

# In a fresh interpreter: the test process's collector has been frozen and tuned by other tests.
_SCRIPT = """
import gc, json
from frontends.cli.daemon_server import _young_collections_only

def collections(managed):
    started = []
    def seen(phase, info):
        if phase == "start":
            started.append(info["generation"])
    gc.collect()
    gc.callbacks.append(seen)
    if managed:
        with _young_collections_only():
            kept = [[[]] for _ in range(400_000)]  # survivors, as a call's corpus and edits are
    else:
        kept = [[[]] for _ in range(400_000)]
    gc.callbacks.remove(seen)
    return started

default = collections(False)
thresholds = gc.get_threshold()
managed = collections(True)
print(json.dumps({"default": default, "managed": managed, "restored": gc.get_threshold() == thresholds}))
"""


def test_a_call_runs_young_collections_only_and_fewer_of_them() -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert 2 in found["default"], "the control run made no full collection: the test would prove nothing"
    assert found["managed"] and 2 not in found["managed"]
    assert len(found["managed"]) < len(found["default"]) / 5
    assert found["restored"]

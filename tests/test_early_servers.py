"""The daemon's first call starts the servers of the files it names before it imports the pool and
the engine (frontends.cli.startup): the words it reads, and the order, with a real basedpyright."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.workspace import Workspace
from frontends.cli.startup import files_named
from lsp_pool.registry import SPECS_BY_ID, locate
from tests.conftest import REPO, SAMPLE


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    shutil.copytree(SAMPLE / "shop", tmp_path / "shop")
    (tmp_path / "notes.txt").write_text("not code\n")
    return Workspace(tmp_path)


def test_addresses_and_plain_files_name_their_files_once(workspace: Workspace) -> None:
    argv = ["rename", "shop/models.py:Order/total", "grand_total", "--json", "--verify", "shop/pricing.py"]
    assert files_named(argv, workspace) == ["shop/models.py", "shop/pricing.py"]
    assert files_named(["find", "shop/models.py:Order", "--", "shop/util.py"], workspace) == ["shop/models.py"]
    assert files_named(["references", "./shop/../shop/models.py:Order"], workspace) == ["shop/models.py"]


def test_words_that_are_not_workspace_code_files_name_nothing(workspace: Workspace, tmp_path: Path) -> None:
    outside = tmp_path.parent / "outside.py"
    outside.write_text("x = 1\n")
    (tmp_path / "shop" / "escape.py").symlink_to(outside)
    for word in ("shop/missing.py:Order", "notes.txt", "Order", "../outside.py:x", "shop/escape.py:x", str(outside), "shop"):
        assert files_named(["find", word], workspace) == [], word


def test_calls_that_will_not_ask_a_server_name_nothing(workspace: Workspace, tmp_path: Path) -> None:
    assert files_named(["--source", "ast", "find", "shop/models.py:Order"], workspace) == []
    assert files_named(["read-file", "shop/models.py"], workspace) == []
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert files_named(["--root", str(elsewhere), "find", "shop/models.py:Order"], workspace) == []
    assert files_named(["--root", str(tmp_path), "find", "shop/models.py:Order"], workspace) == ["shop/models.py"]


_FIRST_CALL = """
import json, sys, time
from pathlib import Path
from frontends.cli.daemon_server import WarmEngines
from lsp_pool import early
spawned = []
real_spawn = early.spawn
def spawn(*args):
    started = real_spawn(*args)
    spawned.append({"pid": started.process.pid, "pool imported": "lsprotocol" in sys.modules})
    return started
early.spawn = spawn
engines = WarmEngines(Path(sys.argv[1]).resolve())
engines.start_servers_named(["rename", "shop/models.py:Order/total", "grand_total"])
heavy = sorted(m for m in ("engine.api", "frontends.cli.main", "libcst", "networkx") if m in sys.modules)
deadline = time.monotonic() + 60
while True:  # the start runs on the pool's own thread: it shows in the status once that thread has run it
    statuses = [s for s in engines._services.status() if s.state not in ("not-found", "stopped")]
    if (statuses and all(s.pid for s in statuses)) or time.monotonic() > deadline:
        break
    time.sleep(0.05)
print(json.dumps({"heavy": heavy, "servers": {s.id: s.state for s in statuses}, "pids": [s.pid for s in statuses],
                  "spawned": spawned}))
engines.close()
"""


def test_the_first_call_starts_its_server_before_the_engine_is_imported(workspace: Workspace) -> None:
    if locate(SPECS_BY_ID["basedpyright"]) is None:
        pytest.skip(f"basedpyright is not installed here ({SPECS_BY_ID['basedpyright'].install_hint})")
    done = subprocess.run([sys.executable, "-c", _FIRST_CALL, str(workspace.root)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["heavy"] == []
    assert set(seen["servers"]) == {"basedpyright"} and seen["servers"]["basedpyright"] in ("starting", "indexing", "ready")
    # Its process was started before the pool was imported, and the pool adopted that process.
    assert seen["spawned"] == [{"pid": seen["pids"][0], "pool imported": False}]

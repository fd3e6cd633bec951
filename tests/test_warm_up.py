"""``warm_up``: a plan starts its file's server without waiting, so that a cold start overlaps the
plan's own work; a server already running is left alone (waking the pool's thread for nothing only
contended with the plan's work before its request went out)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.registry import SPECS_BY_ID, locate
from lsp_pool.sync import SyncLanguageApi
from tests.test_lsp_e2e import only

pytestmark = pytest.mark.skipif(locate(SPECS_BY_ID["basedpyright"]) is None, reason="basedpyright is not installed")


def test_warm_up_starts_a_stopped_server_and_leaves_a_running_one_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    workspace = Workspace(tmp_path)
    services = PoolServices(workspace, only("basedpyright"))
    submitted: list[object] = []
    real_submit = SyncLanguageApi.submit

    def counted(api: SyncLanguageApi, factory: object) -> None:
        submitted.append(factory)
        real_submit(api, factory)  # type: ignore[arg-type]

    monkeypatch.setattr(SyncLanguageApi, "submit", counted)
    try:
        services.warm_up(["a.py"])
        assert len(submitted) == 1, "a server not yet started is started"
        services.document_symbols(workspace.read("a.py"))  # waits for the server
        services.warm_up(["a.py"])
        assert len(submitted) == 1, "a running server is not warmed again"
        server = next(iter(services.api.pool.running()))
        assert server.connection is not None and server.connection.pid is not None
        os.kill(server.connection.pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while server.connection.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        services.warm_up(["a.py"])
        assert len(submitted) == 2, "a server that exited is started again"
    finally:
        services.close()

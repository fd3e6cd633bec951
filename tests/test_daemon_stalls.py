"""One stalled client, or a stopped daemon, must not hang every call (issue 38, item 3).

The daemon reads each connection on a thread of its own within a deadline, answers "queued" at
once and sends heartbeats while a call waits or runs; the client gives up on a daemon that does
not answer within daemon_client.ANSWER_SECONDS (or falls silent for SILENCE_SECONDS after it
took the call), says so, and runs the call itself unless the call may have written there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from frontends.cli import daemon_client

GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))
pytestmark = pytest.mark.skipif(GRAFT is None, reason="the graft console script is not installed")
NOTES = "alpha beta\nalpha gamma\n"
ONCE = NOTES.replace("alpha", "alpha-x")


def graft(*argv: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    return subprocess.run([str(GRAFT), *argv], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    (root / "notes.txt").write_text(NOTES)
    assert graft("daemon", "start", cwd=root).returncode == 0
    info = daemon_client.read_info(root)
    assert info is not None and isinstance(info["pid"], int)
    pid = info["pid"]
    try:
        yield root, pid
    finally:
        if daemon_client.pid_alive(pid):
            os.kill(pid, signal.SIGCONT)
            os.killpg(pid, signal.SIGKILL)


def _raw(root: Path, data: bytes) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(str(daemon_client.daemon_folder(root) / daemon_client.SOCKET_NAME))
    connection.sendall(data)
    return connection


def test_clients_that_stall_mid_request_do_not_hold_up_the_next_call(workspace: tuple[Path, int]) -> None:
    root, _pid = workspace
    stalled = [_raw(root, daemon_client.GREETING),  # the greeting, then nothing
               _raw(root, daemon_client.GREETING + (100).to_bytes(4, "big") + b"\x00" * 10)]  # half a frame
    try:
        started = time.monotonic()
        found = graft("--source", "ast", "find", "a.py:f", cwd=root, timeout=60)
        took = time.monotonic() - started
        assert found.returncode == 0 and "a.py:f" in found.stdout, found.stderr
        assert "running in this process" not in found.stderr, found.stderr  # the daemon itself answered
        assert took < daemon_client.ANSWER_SECONDS + 20, took
        # The stalled connections are dropped after the daemon's read deadline.
        for connection in stalled:
            connection.settimeout(daemon_client.READ_SECONDS + 30)
            assert connection.recv(1) == b""
    finally:
        for connection in stalled:
            connection.close()


def test_a_stopped_daemon_is_given_up_on_and_a_write_lands_once(workspace: tuple[Path, int]) -> None:
    """SIGSTOP: a read falls back after the answer deadline and says so; a write falls back too
    (the daemon never said "taken", so it cannot have run it), and the daemon, once resumed,
    does not run it a second time: it was never told "go"."""
    root, pid = workspace
    os.kill(pid, signal.SIGSTOP)
    found = graft("--source", "ast", "find", "a.py:f", cwd=root, timeout=60)
    assert found.returncode == 0 and "a.py:f" in found.stdout
    assert "did not answer within" in found.stderr and "running in this process" in found.stderr, found.stderr
    replaced = graft("--json", "find-replace", "alpha", "alpha-x", "--glob", "*.txt", "--apply", cwd=root, timeout=60)
    assert replaced.returncode == 0 and json.loads(replaced.stdout)["applied"], replaced.stderr
    assert "running in this process" in replaced.stderr
    asked = graft("--json", "daemon", "status", cwd=root, timeout=60)
    assert asked.returncode == 1 and json.loads(asked.stdout)["error"]["code"] == "daemon_unresponsive", asked.stderr
    assert f"kill -CONT {pid}" in asked.stderr
    os.kill(pid, signal.SIGCONT)
    status = daemon_client.status(root)  # answered once it has been through the connections queued meanwhile
    assert status is not None and status["calls"] == 0, status
    assert (root / "notes.txt").read_text() == ONCE


def test_a_write_whose_daemon_stops_mid_call_is_refused_not_run_again(workspace: tuple[Path, int], tmp_path: Path) -> None:
    """SIGSTOP after the daemon was told to run a write (its verify command is running, its
    transaction is written and not committed): the client hears nothing for SILENCE_SECONDS,
    finds the transaction held by a live process, and refuses as outcome_unknown; resumed, the
    daemon commits it, once."""
    root, pid = workspace
    mark = tmp_path / "verifying"
    verify = f": > {mark}; sleep 1"
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    client = subprocess.Popen([str(GRAFT), "--json", "find-replace", "alpha", "alpha-x", "--glob", "*.txt", "--apply", "--verify",
                               verify], cwd=root, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not mark.exists():
        assert time.monotonic() < deadline and client.poll() is None, client.communicate()
        time.sleep(0.01)
    os.kill(pid, signal.SIGSTOP)
    out, err = client.communicate(timeout=120)
    assert client.returncode == 1, (out, err)
    assert json.loads(out)["error"]["code"] == "outcome_unknown"
    assert "still held by a live process" in err and "graft history" in err, err
    assert (root / "notes.txt").read_text() == ONCE  # the daemon's write, not committed yet; not run a second time here
    # Another write meanwhile: the daemon does not answer, and holds the apply lock; refused, not left waiting.
    other = graft("--json", "find-replace", "beta", "beta-y", "--glob", "*.txt", "--apply", cwd=root, timeout=60)
    assert other.returncode == 1 and json.loads(other.stdout)["error"]["code"] == "workspace_held", other.stderr
    os.kill(pid, signal.SIGCONT)
    history = graft("--json", "history", cwd=root)
    assert len(json.loads(history.stdout)["transactions"]) == 1, history.stdout
    assert (root / "notes.txt").read_text() == ONCE


def test_a_call_longer_than_the_silence_deadline_is_not_cut_off(workspace: tuple[Path, int]) -> None:
    """The daemon's heartbeats tell the client a long call is still running."""
    root, _pid = workspace
    seconds = daemon_client.SILENCE_SECONDS + 3
    done = graft("find-replace", "alpha", "alpha-x", "--glob", "*.txt", "--apply", "--verify", f"sleep {seconds}", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "running in this process" not in done.stderr and "stopped" not in done.stderr, done.stderr
    assert (root / "notes.txt").read_text() == ONCE

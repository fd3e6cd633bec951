"""The daemon's framing (frontends.cli.daemon_client): messages read back whole and in order,
whatever chunks the socket cuts them into, and a message cut short ends the stream."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

from frontends.cli import daemon_client

REPO = Path(__file__).resolve().parents[1]


def _read_back(data: bytes, piece: int) -> list[dict[str, object]]:
    sender, receiver = socket.socketpair()

    def send() -> None:
        for start in range(0, len(data), piece):  # cut anywhere: mid-header, mid-message
            sender.sendall(data[start:start + piece])
        sender.close()

    thread = threading.Thread(target=send)
    thread.start()
    try:
        return list(daemon_client._read_all(receiver))
    finally:
        thread.join()
        receiver.close()


def test_messages_come_back_whole_and_in_order_however_the_stream_is_cut() -> None:
    lines: list[dict[str, object]] = [{"out": f"line {i} é\n"} for i in range(200)]
    small: list[dict[str, object]] = [{"taken": True}, *lines, {"exit": 3}]
    for piece in (1, 3, 4097):
        assert _read_back(b"".join(map(daemon_client.frame, small)), piece) == small
    large: list[dict[str, object]] = [{"taken": True}, {"out": "x" * (3 << 20)}, {"err": "note\n"}, {"exit": 0}]
    for piece in (4097, 1 << 16):  # a large answer over many chunks
        assert _read_back(b"".join(map(daemon_client.frame, large)), piece) == large


def test_a_message_cut_short_ends_the_stream_after_the_whole_ones() -> None:
    whole = daemon_client.frame({"out": "kept"})
    cut = daemon_client.frame({"out": "lost" * 100})[:50]
    assert _read_back(whole + cut, 7) == [{"out": "kept"}]


def test_the_code_fingerprint_changes_with_any_source_file_and_only_with_source_files(tmp_path: Path) -> None:
    """What the client compares with the daemon's: a copy of the packages has its own, and an
    edit of a module deep in a package (same size, another mtime) or a new module changes it; a
    compiled file in __pycache__ does not."""
    copy = tmp_path / "install"
    for package in ("engine", "frontends", "lsp_pool", "process_tools"):
        shutil.copytree(REPO / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))

    def fingerprint() -> str:
        said = subprocess.run([sys.executable, "-c", "from frontends.cli.daemon_client import code_fingerprint as f; print(f())"],
                              env={**os.environ, "PYTHONPATH": str(copy)}, cwd=tmp_path, capture_output=True, text=True, check=True)
        return said.stdout.strip()

    first = fingerprint()
    assert first == fingerprint() and first != daemon_client.code_fingerprint()
    (copy / "engine" / "graph" / "__pycache__").mkdir(exist_ok=True)
    (copy / "engine" / "graph" / "__pycache__" / "build.cpython-311.pyc").write_bytes(b"compiled")
    assert fingerprint() == first
    deep = copy / "engine" / "graph" / "build.py"
    os.utime(deep, ns=(deep.stat().st_atime_ns, deep.stat().st_mtime_ns + 1_000_000))
    edited = fingerprint()
    assert edited != first
    (copy / "lsp_pool" / "launchers" / "added.py").write_text("x = 1\n")
    assert fingerprint() not in (first, edited)

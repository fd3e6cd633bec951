"""The daemon's framing (frontends.cli.daemon_client): messages read back whole and in order,
whatever chunks the socket cuts them into, and a message cut short ends the stream."""

from __future__ import annotations

import socket
import threading

from frontends.cli import daemon_client


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

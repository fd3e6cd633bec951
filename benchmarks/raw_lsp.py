"""A bare LSP client for benchmarks: framed JSON over pipes, nothing else.

It is the baseline that the pool's overhead is measured against, so it does
the least a client can: answers the server's requests with nulls (settings
included) and waits for replies by id.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from typing import Any

from lsp_pool.reader import parsed


class RawClient:
    def __init__(self, command: list[str], cwd: str, settings: dict[str, Any] | None = None) -> None:
        self.settings = settings or {}
        """Answers to workspace/configuration by section (null for any other)."""
        self.process = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self._next_id = 0
        self._replies: dict[int, queue.Queue[Any]] = {}
        self.logs: queue.Queue[str] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        with self._lock:
            assert self.process.stdin is not None
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            # The parser codegraft reads answers with: the raw side is not slowed by its client.
            message = parsed(stream.read(length))
            if "method" in message and "id" in message:
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [self.settings.get(item.get("section")) for item in message["params"]["items"]]
                self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "method" in message:
                if message["method"] == "window/logMessage":
                    self.logs.put(message["params"]["message"])
            else:
                self._replies.setdefault(message["id"], queue.Queue()).put(message)

    def request(self, method: str, params: Any, timeout: float = 120.0) -> Any:
        self._next_id += 1
        msg_id = self._next_id
        waiter = self._replies.setdefault(msg_id, queue.Queue())
        self._write({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        reply = waiter.get(timeout=timeout)
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for_log(self, needle: str, timeout: float = 300.0) -> None:
        while needle not in self.logs.get(timeout=timeout):
            pass

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.process.wait(10)
        except Exception:  # noqa: BLE001 - benchmarks clean up however they can
            self.process.kill()

"""Typed failures of language servers. All are ServiceUnavailable: auto mode falls back on them."""

from __future__ import annotations

from engine.errors import ServerAnsweredError, ServiceUnavailable


class ServerNotFound(ServiceUnavailable):
    code = "server_not_found"


class ServerNotTrusted(ServiceUnavailable):
    """The server would run the workspace's code, and the workspace is not trusted (lsp_pool.workspace_trust)."""

    code = "server_not_trusted"


class ServerTooOld(ServiceUnavailable):
    """The server found is older than codegraft supports; the message names the command that installs one."""

    code = "server_too_old"


class ServerStartFailed(ServiceUnavailable):
    code = "server_start_failed"


class ServerDied(ServiceUnavailable):
    """The server process exited; every request pending on it fails with this at once."""

    code = "server_died"

    def __init__(self, server_id: str, exit_code: int | None, stderr_tail: str) -> None:
        detail = f"; last stderr:\n{stderr_tail}" if stderr_tail else ""
        super().__init__(f"{server_id} exited with code {exit_code}{detail}")
        self.server_id = server_id
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "exit_code": self.exit_code, "stderr_tail": self.stderr_tail}


class ProtocolError(ServiceUnavailable):
    """The server broke the protocol (malformed JSON, a wrong Content-Length); it is restarted."""

    code = "protocol_error"


class RequestTimeout(ServiceUnavailable):
    code = "request_timeout"

    def __init__(self, server_id: str, method: str, seconds: float) -> None:
        super().__init__(f"{server_id} did not answer {method} within {seconds:g} s (the request was cancelled)")
        self.method = method
        self.seconds = seconds


class NotReady(ServiceUnavailable):
    code = "server_not_ready"


class ServerRequestFailed(ServerAnsweredError):
    """The server answered with a JSON-RPC error."""

    code = "server_error"


class Unsupported(ServiceUnavailable):
    """The server does not offer the feature asked for (no capability for it)."""

    code = "unsupported"

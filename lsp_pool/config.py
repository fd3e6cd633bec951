"""The project's choices about language servers, from ``[tool.graft]`` or ``.graft.toml``.

Example (in pyproject.toml; in .graft.toml drop the ``tool.graft`` prefix)::

    [tool.graft]
    idle_timeout = 300        # seconds before an unused server is shut down
    document_idle_timeout = 60  # seconds before a document codegraft opened is closed again
    request_timeout = 30      # seconds before a request is cancelled
    readiness_budget = 60     # seconds to wait for a server to finish indexing
    server_memory_limit_mb = 3072  # a server past this is restarted between requests (0: never)

    [tool.graft.servers]
    python = "jedi-language-server"   # or a list, tried in order
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.errors import UsageError
from engine.settings import workspace_python_trust
from lsp_pool.registry import DEFAULT_PREFERENCE, SPECS_BY_ID


@dataclass(frozen=True)
class PoolConfig:
    idle_timeout: float = 300.0
    document_idle_timeout: float = 60.0
    """Seconds after which a document codegraft opened, and has not used since, is closed."""
    request_timeout: float | None = None
    """None: each server spec's own timeout."""
    readiness_budget: float | None = None
    """None: each server spec's own budget."""
    preference: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_PREFERENCE))
    server_memory_limit_mb: float = 3072.0
    """Resident memory (the server's process and its children) past which a server is restarted
    between two requests; 0 turns the ceiling off. tsserver's own default ceiling is the same."""
    trusted_by: str = ""
    """Why the workspace's own Python may run (``--trust`` or the setting), "" when it may not:
    then no server is started in a way that runs what the workspace chose (README, "Security")."""
    source: str = "defaults"
    """Where the settings came from, for messages."""


def load_config(root: Path, *, trust: bool = False) -> PoolConfig:
    """The project's settings; ``trust`` is the caller's ``--trust``."""
    return replace(_load(root), trusted_by=workspace_python_trust(root, trust))


def _load(root: Path) -> PoolConfig:
    graft_toml = root / ".graft.toml"
    pyproject = root / "pyproject.toml"
    if graft_toml.is_file():
        return _parse(_read(graft_toml), str(graft_toml))
    if pyproject.is_file():
        tool = _read(pyproject).get("tool", {})
        table = tool.get("graft") if isinstance(tool, dict) else None
        if isinstance(table, dict):
            return _parse(table, f"{pyproject} [tool.graft]")
    return PoolConfig()


def _read(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{path} is not valid TOML: {error}") from error


ENGINE_KEYS = ("allow_dirty", "daemon_idle", "diagnostics_budget", "trust_workspace_python")


def _parse(table: dict[str, object], where: str) -> PoolConfig:
    # The engine's keys belong to engine/settings.py; they are accepted here so that one table
    # holds all of codegraft's settings.
    known = {"idle_timeout", "document_idle_timeout", "request_timeout", "readiness_budget", "servers",
             "server_memory_limit_mb", *ENGINE_KEYS}
    unknown = sorted(set(table) - known)
    if unknown:
        raise UsageError(f"{where}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    preference = dict(DEFAULT_PREFERENCE)
    servers = table.get("servers", {})
    if not isinstance(servers, dict):
        raise UsageError(f"{where}: 'servers' must be a table of language = server id")
    for language, chosen in servers.items():
        ids = (chosen,) if isinstance(chosen, str) else tuple(chosen) if isinstance(chosen, list) else None
        if not ids or not all(isinstance(i, str) for i in ids):
            raise UsageError(f"{where}: servers.{language} must be a server id or a list of them")
        for server_id in ids:
            spec = SPECS_BY_ID.get(server_id)
            if spec is None:
                raise UsageError(f"{where}: unknown server '{server_id}'; known: {', '.join(sorted(SPECS_BY_ID))}")
            if language not in spec.languages:
                raise UsageError(f"{where}: {server_id} does not serve {language} (it serves {', '.join(spec.languages)})")
        preference[language] = ids
    return PoolConfig(
        idle_timeout=_seconds(table, "idle_timeout", where, 300.0),
        document_idle_timeout=_seconds(table, "document_idle_timeout", where, 60.0),
        request_timeout=_optional_seconds(table, "request_timeout", where),
        readiness_budget=_optional_seconds(table, "readiness_budget", where),
        server_memory_limit_mb=_megabytes(table, "server_memory_limit_mb", where, PoolConfig.server_memory_limit_mb),
        preference=preference,
        source=where,
    )


def _megabytes(table: dict[str, object], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise UsageError(f"{where}: {key} must be a number of megabytes (0 for no ceiling), got {value!r}")
    return float(value)


def _optional_seconds(table: dict[str, object], key: str, where: str) -> float | None:
    if key not in table:
        return None
    return _seconds(table, key, where, 0.0)


def _seconds(table: dict[str, object], key: str, where: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise UsageError(f"{where}: {key} must be a positive number of seconds, got {value!r}")
    return float(value)

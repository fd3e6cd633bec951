"""The engine's own settings from ``[tool.graft]`` (pyproject.toml) or ``.graft.toml``.

Only the keys the engine reads are interpreted here; ``lsp_pool.config`` reads the
server keys from the same table, and validates the whole of it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from engine.errors import UsageError


@dataclass(frozen=True)
class EngineSettings:
    allow_dirty: bool = False
    """Let `--apply` write files with uncommitted changes without `--allow-dirty`."""
    daemon_idle: float = 600.0
    """Seconds the CLI's warm daemon waits for a call before it stops (``daemon_idle``)."""
    diagnostics_budget: float = 3.0
    """Seconds an apply's differential diagnostics may take before the apply returns with the
    check incomplete (``diagnostics_budget``); ``--fail-on-new-errors`` waits for the whole check."""
    trust_workspace_python: bool = False
    """Let codegraft run the workspace's own Python (``trust_workspace_python``): the language
    servers and jedi use its ``.venv``, and the import check imports the project with it. Off, a
    read runs nothing the workspace chose (README, "Security")."""


def load_engine_settings(root: Path) -> EngineSettings:
    table: object = None
    graft_toml, pyproject = root / ".graft.toml", root / "pyproject.toml"
    try:
        if graft_toml.is_file():
            table = tomllib.loads(graft_toml.read_text(encoding="utf-8"))
        elif pyproject.is_file():
            table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("graft")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return EngineSettings()  # reported, with the position, by the settings loader of the servers
    if not isinstance(table, dict):
        return EngineSettings()
    return EngineSettings(allow_dirty=table.get("allow_dirty") is True,
                          daemon_idle=_seconds(table, "daemon_idle", EngineSettings.daemon_idle),
                          diagnostics_budget=_seconds(table, "diagnostics_budget", EngineSettings.diagnostics_budget),
                          trust_workspace_python=_flag(table, "trust_workspace_python"))


def workspace_python_trust(root: Path, asked: bool) -> str:
    """Why the workspace's own Python may run (``--trust``, or the setting and the file that holds
    it), or "" when it may not. ``asked``: the caller's ``--trust``."""
    if asked:
        return "--trust"
    if not load_engine_settings(root).trust_workspace_python:
        return ""
    where = ".graft.toml" if (root / ".graft.toml").is_file() else "pyproject.toml [tool.graft]"
    return f"trust_workspace_python in {where}"


def _flag(table: dict[str, object], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise UsageError(f"[tool.graft] {key} must be true or false, not {value!r}")
    return value


def _seconds(table: dict[str, object], key: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise UsageError(f"[tool.graft] {key} must be a positive number of seconds, not {value!r}")
    return float(value)

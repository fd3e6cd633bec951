"""The engine's own settings from ``[tool.graft]`` (pyproject.toml) or ``.graft.toml``.

Only the keys the engine reads are interpreted here; ``lsp_pool.config`` reads the
server keys from the same table, and validates the whole of it.
"""

from __future__ import annotations

import os
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
    """Why the workspace's own Python may run (``--trust``, or the user's own configuration), or ""
    when it may not. ``asked``: the caller's ``--trust``.

    A checkout's own ``[tool.graft] trust_workspace_python`` does not count: the repository that
    trust protects against could ship it. The user grants it outside the workspace, in
    ``$XDG_CONFIG_HOME/codegraft/config.toml``: ``trust_workspace_python = true`` under
    ``[tool.graft]`` for every workspace, or the workspace's folder in ``[trust] workspaces``."""
    if asked:
        return "--trust"
    config = user_config_path()
    try:
        table = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{config} cannot be read ({error}); fix or remove it") from None
    graft = table.get("tool", {}).get("graft", {}) if isinstance(table.get("tool"), dict) else {}
    if isinstance(graft, dict) and _flag(graft, "trust_workspace_python"):
        return f"trust_workspace_python in {config}"
    listed = table.get("trust", {}).get("workspaces", []) if isinstance(table.get("trust"), dict) else []
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        raise UsageError(f"{config}: [trust] workspaces must be a list of folder paths")
    here = os.path.realpath(root)
    if any(os.path.realpath(os.path.expanduser(item)) == here for item in listed):
        return f"[trust] workspaces in {config}"
    return ""


def user_config_path() -> Path:
    """``$XDG_CONFIG_HOME/codegraft/config.toml``, else ``~/.config/codegraft/config.toml``: the user's, not the workspace's."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "codegraft" / "config.toml"


def shipped_trust_note(root: Path) -> str:
    """A note when the workspace's own config asks for trust, which is not granted that way ('' otherwise)."""
    if not load_engine_settings(root).trust_workspace_python:
        return ""
    return (f"the workspace's own config sets trust_workspace_python, which a checkout cannot grant itself; pass --trust, "
            f"or set it in {user_config_path()} (README, \"Security\")")


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

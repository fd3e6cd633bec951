"""A whole-workspace program for pyright and basedpyright, whatever file set the project's own config names.

A project's ``[tool.pyright]`` / ``[tool.basedpyright]`` section or ``pyrightconfig.json`` may
narrow ``include`` to a few files (a typing-examples file is common) or exclude the sources. The
server then answers "nothing to rename here" for every source file, and a refactoring would fall
back without need. Config files override client settings, except one: the config file's own path
(``analysis.configFilePath``). So codegraft writes a config of its own under ``.graft/servers``
that ``extends`` the project's (every other option kept, its paths still relative to the
project's file), names the whole workspace as ``include``, excludes only what codegraft's own scan
excludes, and keeps the project's execution environments with their paths made absolute (the
generated file's folder would otherwise be their root) plus one for the workspace root.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.state_folder import state_folder, write_new_file
from engine.workspace import EXCLUDED_DIR_NAMES

_DEFAULT_EXCLUDES = ("**/node_modules", "**/__pycache__", "**/.*", "**/*.egg-info")
_JSON_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[\]}])")


@dataclass(frozen=True)
class WholeWorkspaceConfig:
    path: Path
    """The generated config, to be answered as ``analysis.configFilePath``."""
    narrowed_by: str
    """What narrowed the server's program: the project's config and its setting."""


def whole_workspace_config(root: Path) -> WholeWorkspaceConfig | None:
    """The generated config when the project's pyright config names a file set (``include`` or
    ``exclude``); None when it names none (the server's default, the whole root, is right)."""
    found = _project_config(root)
    if found is None:
        return None
    path, settings = found
    narrowing = [key for key in ("include", "exclude") if key in (settings or {})]
    if not narrowing and settings is not None:
        return None
    settings = settings or {}
    config: dict[str, Any] = {
        "extends": str(path),
        "include": [str(root)],
        "exclude": list(dict.fromkeys([*_DEFAULT_EXCLUDES, *(f"**/{name}" for name in sorted(EXCLUDED_DIR_NAMES))])),
        "executionEnvironments": [*_absolute_environments(settings, path.parent), {"root": str(root)}],
    }
    target = state_folder(root, "servers") / "pyrightconfig.json"
    write_new_file(target, json.dumps(config, indent=1).encode())
    what = " and ".join(narrowing) if narrowing else "a file set it could not be read for"
    return WholeWorkspaceConfig(target, f"{path.relative_to(root).as_posix()} sets {what}")


def _project_config(root: Path) -> tuple[Path, dict[str, Any] | None] | None:
    """The config the server would read, in its order: pyrightconfig.json, else the pyproject
    section. An unreadable one is returned with None for its settings (it may narrow: assume it does)."""
    json_config = root / "pyrightconfig.json"
    if json_config.is_file():
        try:
            text = _JSON_COMMENT.sub(lambda m: m.group(1) or "", json_config.read_text(encoding="utf-8"))
            loaded = json.loads(_TRAILING_COMMA.sub(r"\1", text))
        except (OSError, ValueError):
            return json_config, None
        return json_config, loaded if isinstance(loaded, dict) else None
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    try:
        tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, ValueError):
        return None
    for section in ("basedpyright", "pyright"):
        if isinstance(tool.get(section), dict):
            return pyproject, tool[section]
    return None


def _absolute_environments(settings: dict[str, Any], base: Path) -> list[dict[str, Any]]:
    environments = settings.get("executionEnvironments")
    if not isinstance(environments, list):
        return []
    absolute = []
    for environment in environments:
        if not isinstance(environment, dict) or not isinstance(environment.get("root"), str):
            continue
        copied = dict(environment, root=str((base / environment["root"]).resolve()))
        if isinstance(environment.get("extraPaths"), list):
            copied["extraPaths"] = [str((base / p).resolve()) for p in environment["extraPaths"] if isinstance(p, str)]
        absolute.append(copied)
    return absolute

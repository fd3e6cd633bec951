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

A ``src/`` layout needs the same file: the language server does not search ``src`` for a
package whose name typeshed also ships stubs for (``cachetools``), so ``import cachetools`` in the
tests resolved to those stubs, and a rename left every use in the tests behind. The workspace
root's environment names ``src`` as an extra import root, before any third-party stub.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.source_roots import source_roots
from engine.state_folder import state_folder, write_new_file
from engine.workspace import EXCLUDED_DIR_NAMES

_DEFAULT_EXCLUDES = ("**/node_modules", "**/__pycache__", "**/.*", "**/*.egg-info")
_JSON_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[\]}])")


@dataclass(frozen=True)
class WholeWorkspaceConfig:
    path: Path
    """The generated config, to be answered as ``analysis.configFilePath``."""
    narrowed_by: str | None
    """What narrowed the server's program (the project's config and its setting); None when
    the file is there for the source roots alone."""


def whole_workspace_config(root: Path, *, interpreter: str | None = None) -> WholeWorkspaceConfig | None:
    """The generated config when the project's pyright config names a file set (``include`` or
    ``exclude``), the workspace keeps its packages under ``src/``, or ``interpreter`` is given;
    None otherwise (the server's defaults, the whole root, are right).

    ``interpreter``: the Python the server is to run instead of the workspace's (a workspace whose
    code is not trusted; lsp_pool.workspace_trust). It is named as ``pythonPath``, over whatever
    the project's config names; and the workspace's ``.venv``, when the project's config names no
    environment of its own, as ``venv``: the server reads its installed packages from disk, where
    without it it would run the ``.venv``'s interpreter to find them."""
    found = _project_config(root)
    path, settings = found if found is not None else (None, {})
    narrowing = [key for key in ("include", "exclude") if key in (settings or {})]
    narrowed = found is not None and (bool(narrowing) or settings is None)
    roots = source_roots(root)
    if not narrowed and not roots and interpreter is None:
        return None
    settings = settings or {}
    base = path.parent if path is not None else root
    extra_paths = [*_absolute_paths(settings.get("extraPaths"), base), *map(str, roots)]
    config: dict[str, Any] = {
        **({"extends": str(path)} if path is not None else {}),
        "include": [str(root)],
        "exclude": list(dict.fromkeys([*_DEFAULT_EXCLUDES, *(f"**/{name}" for name in sorted(EXCLUDED_DIR_NAMES))])),
        "executionEnvironments": [*_absolute_environments(settings, base),
                                  {"root": str(root), "extraPaths": list(dict.fromkeys(extra_paths))}],
    }
    if path is None:
        # A project without a config of its own is checked as the server checks one when there is
        # no config file at all (basedpyright: "standard"); a generated file would otherwise turn
        # on its config-file default, "recommended", and every unknown type becomes an error.
        config["typeCheckingMode"] = "standard"
    if interpreter is not None:
        config["pythonPath"] = interpreter
        if "venv" not in settings and "venvPath" not in settings and (root / ".venv").is_dir():
            config.update(venvPath=str(root), venv=".venv")
    target = state_folder(root, "servers") / "pyrightconfig.json"
    write_new_file(target, json.dumps(config, indent=1).encode())
    if not narrowed or path is None:
        return WholeWorkspaceConfig(target, None)
    what = " and ".join(narrowing) if narrowing else "a file set it could not be read for"
    return WholeWorkspaceConfig(target, f"{path.relative_to(root).as_posix()} sets {what}")


def _absolute_paths(paths: object, base: Path) -> list[str]:
    return [str((base / p).resolve()) for p in paths if isinstance(p, str)] if isinstance(paths, list) else []


def project_settings(root: Path) -> dict[str, Any]:
    """The settings of the pyright config the server would read ({} without one, or unreadable)."""
    found = _project_config(root)
    return (found[1] or {}) if found is not None else {}


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
            copied["extraPaths"] = _absolute_paths(environment["extraPaths"], base)
        absolute.append(copied)
    return absolute

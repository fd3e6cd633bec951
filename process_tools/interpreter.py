"""The project's own Python, found as its language server finds it, for the import check.

basedpyright runs the interpreter the project's config names (``pythonPath``, or ``venvPath``
and ``venv``), else the ``python`` of the environment it was started in. The import check runs
the project's modules the same way, so that what they import (pytest in test modules, the
project's dependencies) is what the project has: a workspace's ``.venv`` or ``venv`` folder when
the config names none, else the virtual environment the user activated (``$VIRTUAL_ENV``), else
codegraft's own. Only ever asked for a trusted workspace: each of these runs the project's code.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lsp_pool.pyright_config import project_settings


def project_interpreter(root: Path) -> str:
    settings = project_settings(root)
    named = settings.get("pythonPath")
    if isinstance(named, str) and named:
        return str(_absolute(root, named))
    venv_path, venv = settings.get("venvPath"), settings.get("venv")
    if isinstance(venv, str) and venv:
        base = _absolute(root, venv_path) if isinstance(venv_path, str) and venv_path else root
        found = _python_in(base / venv)
        if found is not None:
            return str(found)
    for folder in (".venv", "venv"):
        found = _python_in(root / folder)
        if found is not None:
            return str(found)
    active = os.environ.get("VIRTUAL_ENV")
    if active:
        found = _python_in(Path(active))
        if found is not None:
            return str(found)
    return sys.executable


def _absolute(root: Path, written: str) -> Path:
    path = Path(os.path.expanduser(written))
    return path if path.is_absolute() else root / path


def _python_in(environment: Path) -> Path | None:
    for candidate in ("bin/python", "Scripts/python.exe"):
        if (environment / candidate).is_file():
            return environment / candidate
    return None

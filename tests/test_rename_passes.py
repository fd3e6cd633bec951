"""Python's rename passes are one ordered list (engine/refactor/python/rename_passes.py) that
engine.refactor.rename runs without knowing any pass by name."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil

import engine.refactor.python as python_family
from engine.refactor.python.rename_passes import RENAME_PASSES
from tests.conftest import REPO


def _defined_passes() -> set[type]:
    """Every class in engine/refactor/python/ with the RenamePass shape (hazards, prepare, add)."""
    found: set[type] = set()
    for module_info in pkgutil.iter_modules(python_family.__path__):
        module = importlib.import_module(f"{python_family.__name__}.{module_info.name}")
        for _name, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__ == module.__name__ and all(hasattr(value, a) for a in ("name", "hazards", "prepare", "add")):
                found.add(value)
    return found


def test_every_python_rename_pass_is_listed_once() -> None:
    listed = set(RENAME_PASSES)
    assert len(listed) == len(RENAME_PASSES), "a pass is listed twice"
    unlisted = sorted(f"{cls.__module__}.{cls.__name__}" for cls in _defined_passes() - listed)
    assert not unlisted, f"rename passes defined but not in RENAME_PASSES: {unlisted}"
    for cls in RENAME_PASSES:
        made = cls()
        assert made.name and made.hazards and all(isinstance(h, str) for h in made.hazards), cls


def test_the_passes_that_judge_the_final_edit_come_last() -> None:
    names = [cls().name for cls in RENAME_PASSES]
    assert names[-2:] == ["local_twins", "name_captures"], names


def test_the_rename_core_imports_no_python_module() -> None:
    tree = ast.parse((REPO / "engine" / "refactor" / "rename.py").read_text(encoding="utf-8"))
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if name.startswith("engine.refactor.python")], imported

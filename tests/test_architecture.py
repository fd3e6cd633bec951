"""The invariants ARCHITECTURE.md states, enforced."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

FORBIDDEN_IN_ENGINE = {"pygls", "mcp", "mcp_types", "subprocess", "lsp_pool", "lsprotocol", "frontends"}
LIBRARY_PACKAGES = ("engine", "lsp_pool", "frontends")


def python_files(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def imported_top_level_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.add("__import__")
    return names


@pytest.mark.parametrize("path", python_files("engine"), ids=lambda p: str(p.relative_to(REPO)))
def test_engine_reaches_processes_and_protocols_only_through_ports(path: Path) -> None:
    assert not imported_top_level_names(path) & FORBIDDEN_IN_ENGINE


def test_the_scan_sees_forbidden_imports(tmp_path: Path) -> None:
    """Guard against a scan that passes because it finds nothing at all."""
    sample = tmp_path / "forbidden.py"
    sample.write_text("import subprocess\nfrom pygls.server import LanguageServer\n", encoding="utf-8")
    assert imported_top_level_names(sample) >= {"subprocess", "pygls"}


def test_networkx_stays_inside_the_graph_package() -> None:
    outside = [
        str(path.relative_to(REPO)) for package in LIBRARY_PACKAGES for path in python_files(package)
        if "networkx" in imported_top_level_names(path) and "engine/graph/" not in path.as_posix()
    ]
    assert outside == []


@pytest.mark.parametrize("package", LIBRARY_PACKAGES)
def test_no_assert_statements_or_sleeps_in_library_code(package: str) -> None:
    offenders = []
    for path in python_files(package):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} assert")
            if isinstance(node, ast.Attribute) and node.attr == "sleep" and getattr(node.value, "id", "") == "time":
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} time.sleep")
    assert offenders == []


def test_required_top_level_layout() -> None:
    for name in ("pyproject.toml", "engine", "lsp_pool", "tests", "fixtures", "benchmarks", "README.md",
                 "ARCHITECTURE.md", ".ci/run"):
        assert (REPO / name).exists(), name


def readme_commands() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_setup_commands_and_ci_runs_them_verbatim() -> None:
    commands = readme_commands()
    assert len(commands) == 2, commands
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert "\n" not in command.strip()
        assert command.strip() in ci


def test_architecture_code_map_names_every_folder() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    folders = {p.relative_to(REPO).as_posix() for p in (REPO / "engine").rglob("*") if p.is_dir() and p.name != "__pycache__"}
    for folder in sorted(folders | {"engine", "lsp_pool", "frontends", "tests", "fixtures", "benchmarks"}):
        assert f"`{folder}/`" in text, f"ARCHITECTURE.md's code map does not describe {folder}/"

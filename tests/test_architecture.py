"""The invariants ARCHITECTURE.md states, enforced."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

FORBIDDEN_IN_ENGINE = {"pygls", "mcp", "mcp_types", "subprocess", "lsp_pool", "lsprotocol", "frontends", "process_tools"}
LIBRARY_PACKAGES = ("engine", "lsp_pool", "frontends", "process_tools")

ENGINE_LAYERS = (
    {"root_folder", "read_memo"},
    {"errors", "positions", "source_roots", "choices"},
    {"symbols", "state_folder", "settings"},
    {"languages"},
    {"names", "workspace", "overloads"},
    {"extract", "answers"},
    {"ports", "resolve"},
    {"edits", "graph"},
    {"references", "served_graph", "files", "located", "symbol_search", "doctor"},
    {"refactor"},
    {"server_answers", "reading"},
    {"api"},
    {"client", "batch", "opening"},
    {"fleet"},
    {"api_surface"},
)
"""engine/'s units, lowest first: a unit imports only units of lower layers (and itself)."""

PROCESS_MAKERS = {"fork", "forkpty", "ProcessPoolExecutor", "get_context", "Process", "system", "popen", "spawnv", "spawnvp",
                  "execv", "execvp", "posix_spawn", "Popen"}
"""Names that start a process. The engine runs no program; the one place it makes processes at all
is the index's extraction workers (copies of itself, engine/graph/index.py)."""


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


def engine_unit(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "engine" else None


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_engine_units_import_only_lower_layers() -> None:
    layer_of = {unit: rank for rank, units in enumerate(ENGINE_LAYERS) for unit in units}
    units = {path.relative_to(REPO / "engine").parts[0].removesuffix(".py") for path in python_files("engine")} - {"__init__"}
    assert units == set(layer_of), f"units without a layer (add them to ENGINE_LAYERS): {sorted(units - set(layer_of))}"
    upward = []
    for path in python_files("engine"):
        own = path.relative_to(REPO / "engine").parts[0].removesuffix(".py")
        if own == "__init__":
            continue
        for module in imported_modules(path):
            target = engine_unit(module)
            if target is not None and target != own and layer_of[target] >= layer_of[own]:
                upward.append(f"{path.relative_to(REPO)} imports {module}")
    assert upward == []


def test_only_lsp_pool_and_the_lsp_front_end_speak_the_protocol() -> None:
    speakers = sorted(
        str(path.relative_to(REPO)) for package in LIBRARY_PACKAGES for path in python_files(package)
        if imported_top_level_names(path) & {"lsprotocol", "pygls"}
    )
    lsp_front_end = {"frontends/lsp_server.py", "frontends/lsp_stdio.py"}
    assert speakers and all(p.startswith("lsp_pool/") or p in lsp_front_end for p in speakers), speakers


def test_front_ends_import_only_the_engines_api_surface() -> None:
    """Front ends see one narrow engine API (engine/api_surface.py), and nothing else of engine/:
    in functions and for the type checker too."""
    offenders = sorted(f"{path.relative_to(REPO)} imports {module}" for path in python_files("frontends")
                       for module in imported_modules(path) if module.split(".")[0] == "engine" and module != "engine.api_surface")
    assert offenders == []


def test_the_api_surface_lists_each_name_once_for_the_type_checker_and_resolves_it() -> None:
    """Its names load on first use from ``_HOMES``; the type checker reads its imports: the two must
    agree, and each name must be its home's."""
    import importlib

    from engine import api_surface

    tree = ast.parse((REPO / "engine" / "api_surface.py").read_text(encoding="utf-8"))
    checked = {alias.asname or alias.name: f"{node.module}:{alias.name}" for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("engine.") for alias in node.names}
    homes = {name: home if ":" in home else f"{home}:{name}" for name, home in api_surface._HOMES.items()}
    assert checked == homes
    for name, home in homes.items():
        module, attribute = home.split(":")
        assert getattr(api_surface, name) is getattr(importlib.import_module(module), attribute), name
    with pytest.raises(AttributeError, match="does not offer it"):
        api_surface.__getattr__("plan_rename")


MAX_FUNCTION_LINES = 60
SHORT_FUNCTION_MODULES = ("frontends/**/*.py", "engine/**/*.py")
"""Modules held to MAX_FUNCTION_LINES (issue 42): every front end (the MCP tools are generated from
the registry and small handlers) and the engine."""


def test_functions_of_the_split_modules_stay_short() -> None:
    long = []
    for pattern in SHORT_FUNCTION_MODULES:
        for path in sorted(REPO.glob(pattern)):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                    length = node.end_lineno - node.lineno + 1
                    if length > MAX_FUNCTION_LINES:
                        long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} is {length} lines")
    assert long == []


MAX_PUBLIC_METHODS = 15
"""A class with more is a facade doing everything (issue 42): split it by concern, as Engine's
reading (engine/reading/), GraphQueries's bases (engine/graph/), PoolServices's requests
(lsp_pool/pool_requests.py) and LanguageApi's (lsp_pool/edit_requests.py, feature_base.py) are."""


def test_no_class_has_more_than_fifteen_public_methods() -> None:
    large = []
    for path in [path for package in LIBRARY_PACKAGES for path in python_files(package)]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                public = [item.name for item in node.body
                          if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_")]
                if len(public) > MAX_PUBLIC_METHODS:
                    large.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} has {len(public)} public methods")
    assert large == []


def test_front_ends_reach_language_servers_only_through_the_engine() -> None:
    offenders = [str(path.relative_to(REPO)) for path in python_files("frontends")
                 if imported_top_level_names(path) & {"lsp_pool", "process_tools"}]
    assert offenders == []


@pytest.mark.parametrize("path", python_files("engine"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_engine_makes_processes_only_for_its_index_workers(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)} | \
           {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    makers = used & PROCESS_MAKERS
    if path.relative_to(REPO).as_posix() == "engine/graph/index.py":
        assert makers, "the scan should see the index's own workers"
    else:
        assert makers == set()


CYCLE_CHECKED = ("engine", "lsp_pool", "frontends", "process_tools")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the modules of ``packages`` it imports, counting every import statement in the
    file: at module level, inside functions, and under ``if TYPE_CHECKING`` alike (a circle
    closed only inside a function or only for the type checker is still two modules that each
    need the other). ``from package import name`` counts the submodule when ``name`` is one."""
    modules = {module_name(path, root): path for package in packages for path in sorted((root / package).rglob("*.py"))}

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]).strip(".") if node.level \
                    else node.module or ""
                found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else known(base) for alias in node.names)
        graph[name] = {target for target in found if target is not None and target != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each group of modules that reach each other (a strongly connected
    component of two or more), written as the path that closes it: ``a -> b -> a``."""
    order: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(module: str) -> None:  # Tarjan's algorithm; the graph is a few hundred modules deep at most
        order[module] = lowest[module] = len(order)
        stack.append(module)
        for target in sorted(graph[module]):
            if target not in order:
                visit(target)
                lowest[module] = min(lowest[module], lowest[target])
            elif target in stack:
                lowest[module] = min(lowest[module], order[target])
        if lowest[module] == order[module]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(group)

    for module in sorted(graph):
        if module not in order:
            visit(module)
    cycles = []
    for group in groups:
        start = min(group)
        path, seen = [start], {start}
        while True:  # walk inside the group until the walk comes back: every member reaches the start
            following = sorted(graph[path[-1]] & group)
            back = start if start in following else next((m for m in following if m not in seen), following[0])
            path.append(back)
            if back == start or back in seen:
                cycles.append(path[path.index(back):])
                break
            seen.add(back)
    return sorted(cycles)


def test_no_import_circles() -> None:
    cycles = import_cycles(import_graph(REPO, CYCLE_CHECKED))
    assert cycles == [], "import circles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


def test_the_circle_check_sees_a_circle_closed_inside_a_function(tmp_path: Path) -> None:
    """Guard against a check that passes because it sees no edge: a policy that imports its
    operation for the type checker, and an operation that imports its policy inside a method."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for folder in (package, package / "sub"):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "operation.py").write_text("def plan():\n    from pkg.sub import policy\n", encoding="utf-8")
    (package / "sub" / "policy.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..operation import plan\n",
                                               encoding="utf-8")
    (package / "alone.py").write_text("import pkg.operation\n", encoding="utf-8")
    assert import_cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.operation", "pkg.sub.policy", "pkg.operation"]]

"""An agent's session over MCP (the official SDK's client, a real `graft mcp` process over stdio) on
a real Python project: it looks around, reads a long method, extracts a helper from it (a dry run
first), extracts an expression into a function and a variable, introduces a parameter and inlines
a call, runs the project's own tests, then undoes every step and finds the files as they were,
byte for byte (issue 44).

The project is cachetools 8.0.2 (MIT, its LICENSE beside it), copied unchanged from its PyPI sdist
into fixtures/cachetools (src/, tests/ and pyproject.toml); its tests need nothing but pytest.
The refactorings are codegraft's own on LibCST (engine/refactor/python), so no server is started.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import REPO

pytestmark = pytest.mark.e2e

FIXTURE = REPO / "fixtures" / "cachetools"
SCRATCH = {"__pycache__", ".graft", ".pytest_cache"}


def project_tests(root: Path) -> str:
    """The project's own suite, in its folder, as its CI runs it (the package from src/)."""
    environment = {**os.environ, "PYTHONPATH": str(root / "src")}
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "tests"],
                         cwd=root, env=environment, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    return ran.stdout


def files(root: Path) -> dict[str, bytes]:
    """Every file of the project (what the tools and test runs leave aside), by path."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if path.is_file() and not SCRATCH.intersection(path.relative_to(root).parts)}


def line_of(path: Path, text: str, after: int = 0) -> int:
    """The 1-based line, past line ``after``, where ``text`` first occurs, as an agent reading the file finds it."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if n > after and text in line)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "cachetools"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns(*SCRATCH))
    return root


async def refactor(client: Client, root: Path) -> dict[str, Any]:
    """The agent's steps, each answer kept by name (the files' state is read between steps)."""
    seen: dict[str, Any] = {}
    package = root / "src" / "cachetools"
    seen["overview"] = await client.call_tool("project_overview", {"under": "src"})
    seen["outline"] = await client.call_tool("file_outline", {"path": "src/cachetools/__init__.py"})
    seen["setitem"] = await client.call_tool("read_symbol", {"address": "src/cachetools/__init__.py:Cache/__setitem__"})
    start = line_of(package / "__init__.py", "def __setitem__(self, key, value):")
    first = line_of(package / "__init__.py", "if key not in data:", after=line_of(package / "__init__.py", "value size must", start))
    last = line_of(package / "__init__.py", "diffsize = itemsize", after=first + 5)
    helper = {"address": "src/cachetools/__init__.py:Cache/__setitem__", "lines": f"{first}-{last}", "new_name": "_make_room",
              "structured": True}
    seen["dry"] = await client.call_tool("extract_function", helper)
    seen["untouched"] = files(root) == files(FIXTURE)
    seen["extracted"] = await client.call_tool("extract_function", {**helper, "apply": True})
    seen["expression"] = await client.call_tool("extract_function", {
        "address": "src/cachetools/keys.py:typedkey", "match": "tuple(map(type, args))", "new_name": "_types_of",
        "apply": True, "structured": True})
    seen["variable"] = await client.call_tool("extract_variable", {
        "address": "src/cachetools/keys.py:hashkey", "match": "tuple(sorted(kwargs.items()))", "new_name": "sorted_kwargs",
        "apply": True, "structured": True})
    seen["parameter"] = await client.call_tool("introduce_parameter", {
        "address": "src/cachetools/func.py:_UnboundTTLCache/__init__", "match": "math.inf", "new_name": "maxsize",
        "apply": True, "structured": True})
    seen["inlined"] = await client.call_tool("inline_symbol", {
        "address": "src/cachetools/func.py:fifo_cache", "match": "_cache(FIFOCache(maxsize), maxsize, typed)",
        "apply": True, "structured": True})
    seen["after_five"] = files(root)
    seen["suite_after_five"] = await asyncio.to_thread(project_tests, root)
    seen["undone"] = [await client.call_tool("undo_edit", {"structured": True}) for _ in range(5)]
    return seen


def test_an_agent_refactors_cachetools_over_mcp_the_suite_stays_green_and_undo_restores_every_byte(project: Path) -> None:
    project_tests(project)
    original = files(project)
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    params = StdioServerParameters(command=graft, args=["mcp", "--root", str(project), "--source", "ast"])

    async def run() -> dict[str, Any]:
        async with Client(params) as client:
            return await refactor(client, project)

    seen = asyncio.run(run())
    for step in ("overview", "outline", "setitem", "dry", "extracted", "expression", "variable", "parameter", "inlined"):
        assert not seen[step].is_error, (step, seen[step].content[0].text)
    assert "cachetools" in seen["overview"].content[0].text and "__setitem__" in seen["outline"].content[0].text
    dry = seen["dry"].structured_content
    assert dry["applied"] is False and "self._make_room(" in dry["diff"] and seen["untouched"]
    for step in ("extracted", "expression", "variable", "parameter", "inlined"):
        assert seen[step].structured_content["applied"] is True, step
    after = {path: text.decode() for path, text in seen["after_five"].items()}
    init, keys, func = (after[f"src/cachetools/{name}.py"] for name in ("__init__", "keys", "func"))
    assert "diffsize = self._make_room(key, data, itemsize, maxsize, size)\n" in init and "    def _make_room(self, " in init
    assert "        sorted_kwargs = tuple(sorted(kwargs.items()))\n        return args + _kwmark + sorted_kwargs\n" in keys
    assert "    return key + _types_of(args)\n" in keys and "def _types_of(args):\n    return tuple(map(type, args))\n" in keys
    assert "def __init__(self, ttl, timer, maxsize=math.inf):\n        TTLCache.__init__(self, maxsize, ttl, timer)\n" in func
    assert "_cache(FIFOCache(maxsize), maxsize, typed)" not in func and "        cache = FIFOCache(maxsize)\n" in func
    changed = sorted(path for path in original if seen["after_five"][path] != original[path])
    assert changed == ["src/cachetools/__init__.py", "src/cachetools/func.py", "src/cachetools/keys.py"]
    assert " passed" in seen["suite_after_five"]
    for undo in seen["undone"]:
        assert not undo.is_error and undo.structured_content["reverted"], undo.content[0].text
    assert files(project) == original, "five undos put back every byte of every file"
    project_tests(project)

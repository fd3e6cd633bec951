"""Budgeted MCP answers (issue 43): every tool with a size parameter stays within it, project_overview
spends its budget on the package before tests, docs and examples, and file_outline carries
signatures and the docstrings' first lines. Through the official MCP client."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from frontends.mcp_outline import _parameters
from frontends.mcp_views import file_rank
from tests.conftest import SAMPLE

BUDGETS = (300, 700, 1500, 4000)

SIZED_CALLS: dict[str, dict[str, Any]] = {
    "file_outline": {"path": "shop/big.py"},
    "project_overview": {"under": ".", "depth": 2},
    "find_references": {"address": "shop/big.py:helper"},
    "get_definition": {"position": "shop/big.py:10:16"},
    "list_dir": {"path": ".", "recursive": True},
}
"""A call of each tool that takes max_chars, with more to say than the smallest budgets hold."""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    classes = "".join(
        f"class C{i}:\n    \"\"\"The {i}th class, whose docstring is long enough to matter in an outline row.\"\"\"\n\n"
        + "".join(f"    def m{j}(self, value: int = {j}) -> int:\n        \"\"\"Return helper of value.\"\"\"\n"
                  f"        return helper(value)\n" for j in range(8))
        for i in range(40))
    (root / "shop" / "big.py").write_text(f"def helper(value: int) -> int:\n    return value\n\n\n{classes}")
    for folder in ("docs", "examples"):
        (root / folder).mkdir()
        (root / folder / "conf.py" if folder == "docs" else root / folder / "demo.py").write_text(
            "".join(f"def example_{n}() -> None:\n    pass\n\n\n" for n in range(30)))
    return root


def _params(project: Path) -> StdioServerParameters:
    graft = shutil.which("graft", path=str(Path(sys.executable).parent))
    assert graft is not None
    return StdioServerParameters(command=graft, args=["mcp", "--root", str(project), "--source", "ast"])


def test_every_sized_answer_stays_within_its_budget(project: Path) -> None:
    async def run() -> tuple[set[str], dict[tuple[str, int], Any], Any, Any]:
        async with Client(_params(project)) as client:
            tools = (await client.list_tools()).tools
            sized = {t.name for t in tools if "max_chars" in t.input_schema["properties"]}
            answers = {(name, budget): await client.call_tool(name, {**SIZED_CALLS[name], "max_chars": budget})
                       for name in sorted(sized & set(SIZED_CALLS)) for budget in BUDGETS}
            capped = await client.call_tool("workspace_symbols", {"query": "m", "max_matches": 5})
            too_small = await client.call_tool("file_outline", {"path": "shop/big.py", "max_chars": 10})
            return sized, answers, capped, too_small

    sized, answers, capped, too_small = asyncio.run(run())
    assert sized == set(SIZED_CALLS), "a tool with max_chars needs a call here"
    for (name, budget), answer in answers.items():
        assert not answer.is_error, (name, answer.content[0].text)
        text = answer.content[0].text
        assert len(text) <= budget, (name, budget, len(text))
    for name in sized - {"get_definition"}:  # the smallest budget left something out, and the answer says so
        small = answers[(name, BUDGETS[0])]
        assert "left out" in small.content[0].text and small.structured_content.get("omitted"), name
    rows = [line for line in capped.content[0].text.splitlines() if line.startswith("shop/")]
    assert len(rows) <= 5 and capped.structured_content["omitted"]["matches"] > 0
    assert too_small.is_error and "max_chars is at least" in too_small.content[0].text


def test_project_overview_ranks_package_code_then_tests_then_docs(project: Path) -> None:
    async def run() -> Any:
        async with Client(_params(project)) as client:
            return [await client.call_tool("project_overview", {"under": ".", "max_chars": budget, "structured": True})
                    for budget in (1500, 60_000)]

    answers = asyncio.run(run())
    small, whole = ([entry["file"] for entry in answer.structured_content["entries"]] for answer in answers)
    for files in (small, whole):
        ranks = [file_rank(path) for path in files]
        assert ranks == sorted(ranks), files
    assert "docs/conf.py" not in small and "examples/demo.py" not in small and "csharp/Order.cs" in small
    assert whole.index("shop/models.py") < whole.index("tests/test_shop.py") < whole.index("docs/conf.py")
    assert file_rank("tests/test_shop.py") == 1 and file_rank("docs/conf.py") == file_rank("examples/demo.py") == 2
    assert file_rank("java/com/example/Ledger.java") == 0  # a package named example is code
    assert file_rank("web/src/cart.test.ts") == file_rank("go/shop_test.go") == 1 and file_rank("shop/models.py") == 0


def test_file_outline_carries_signatures_and_docstrings(project: Path) -> None:
    async def run() -> Any:
        async with Client(_params(project)) as client:
            return (await client.call_tool("file_outline", {"path": "shop/models.py", "depth": 2}),
                    await client.call_tool("file_outline", {"path": "shop/models.py", "depth": 2, "structured": True}))

    text_answer, data_answer = asyncio.run(run())
    text = text_answer.content[0].text
    assert "def add(self, sku: str, quantity: int, unit_price: Decimal) -> Order" in text
    assert any("class LineItem" in row and "# One product on an order." in row for row in text.splitlines())
    symbols = {s["name_path"]: s for s in data_answer.structured_content["symbols"]}
    assert symbols["Order"]["doc"] == "A customer's order." and symbols["Order/total"]["signature"] == "def total(self) -> Decimal"


def test_file_outline_by_default_is_the_top_level_with_members_named(project: Path) -> None:
    """An outline row per symbol was 5.7k characters on werkzeug's wsgi.py: by default the top
    level comes with its first lines, signatures and first sentences, each class's members by
    name (overloads counted), and the head says how to get the members' rows (depth=2)."""
    async def run() -> Any:
        async with Client(_params(project)) as client:
            return (await client.call_tool("file_outline", {"path": "shop/models.py"}),
                    await client.call_tool("file_outline", {"path": "shop/models.py", "structured": True}),
                    await client.call_tool("file_outline", {"path": "shop/models.py", "depth": 2}))

    summary, data, members = asyncio.run(run())
    rows = summary.content[0].text.splitlines()
    assert "5 top-level of" in rows[0] and "depth=2" in rows[0] and "left out" not in rows[0]
    assert "70 def next_order_number() -> int" in rows
    assert "15 class LineItem: sku, quantity, unit_price, total  # One product on an order." in rows
    assert "28 class Order: customer, items, currency, Status, add ×3, total, describe  # A customer's order." in rows
    assert not any("def add(" in row for row in rows)  # the members' signatures are depth=2's
    assert "def add(self, sku: str, quantity: int, unit_price: Decimal) -> Order" in members.content[0].text
    order = next(s for s in data.structured_content["symbols"] if s["name_path"] == "Order")
    assert order["members"] == ["customer", "items", "currency", "Status", "add", "add", "add", "total", "describe"]
    assert data.structured_content["shown"] == 5 and "omitted" not in data.structured_content
    assert len(summary.content[0].text) < len(members.content[0].text)


_GLANCE = "".join(f'def compute_{i}(value: int, label: str = "x", *, scale: float = 1.0) -> dict[str, int]:\n'
                  f'    """Compute the {i}th figure of a value. More prose follows."""\n    return {{label: value}}\n\n\n'
                  for i in range(10)) + 'class Ledger:\n    """Keeps entries."""\n\n    def add(self, entry: int) -> None:\n        pass\n' \
    + "".join(f"\n\n@overload\ndef pick(x: {kind}) -> {kind}: ...\n" for kind in ("int", "str")) + "\n\ndef pick(x):\n    return x\n"


def test_file_outline_gives_less_detail_to_fit_and_says_what_and_how_to_get_it(project: Path) -> None:
    """The default outline (werkzeug's wsgi.py: 2.1k characters against Serena's 0.5k) fits 1,200
    characters by steps: parameters' names for whole signatures, then no docstrings, then names
    alone; every top-level name stays, and the head says what was left out and the max_chars
    that has it all. Overloads that read the same are one row, and the structured rows still
    hold every symbol shown."""
    (project / "shop" / "glance.py").write_text(_GLANCE)

    async def run() -> Any:
        async with Client(_params(project)) as client:
            glance: Any = await client.call_tool("file_outline", {"path": "shop/glance.py"})
            whole = int(glance.content[0].text.split("max_chars=")[1].split()[0])
            return [glance, *[await client.call_tool("file_outline", {"path": "shop/glance.py", "max_chars": budget})
                              for budget in (whole, 700, 400)],
                    await client.call_tool("file_outline", {"path": "shop/glance.py", "structured": True})]

    glance, whole, smaller, names, data = asyncio.run(run())
    head, *rows = glance.content[0].text.splitlines()
    assert len(glance.content[0].text) <= 1200 and glance.structured_content["left_out"] == "types and defaults"
    assert "types and defaults left out to fit (max_chars=" in head
    assert rows[0] == "1 compute_0(value, label, *, scale)  # Compute the 0th figure of a value."
    assert rows[-2:] == ["51 class Ledger: add  # Keeps entries.", "58 pick(x) ×3"]  # the overloads say the same
    assert data.structured_content["shown"] == 14 and len(data.structured_content["symbols"]) == 14
    assert '1 def compute_0(value: int, label: str = "x", *, scale: float = 1.0) -> dict[str, int]  # Compute the 0th figure' \
        in whole.content[0].text and "left out" not in whole.content[0].text
    assert "6 compute_1(value, label, *, scale)" in smaller.content[0].text.splitlines() and "# Compute" not in smaller.content[0].text
    assert "6 compute_1" in names.content[0].text.splitlines() and "signatures and docstrings left out" in names.content[0].text
    for answer in (glance, smaller, names):
        assert all(f"compute_{i}" in answer.content[0].text for i in range(10)) and "Ledger" in answer.content[0].text


def test_file_outline_parameters_by_language() -> None:
    """A signature's parameters' names, whatever the language writes first, its receiver left out."""
    assert _parameters("def f(self, a: int = 1, *args: str, **kw: int) -> None", "f", "python") == "a, *args, **kw"
    assert _parameters("function f<T extends {}>(this: Window, a?: T, { b }: Opts = {}): void", "f", "typescript") == "a?, { b }"
    assert _parameters("func (s *Set) Add(key, value string, n int) error", "Add", "go") == "key, value, n"
    assert _parameters("public static int sum(final int[] values, Map<String, Integer> seen)", "sum", "java") == "values, seen"
    assert _parameters("def f(a: int, b: dict[str, in…", "f", "python") == "a, …"
    assert _parameters("class C(Base)", "D", "python") is None


def test_project_overview_names_every_package_file_when_symbols_do_not_fit(project: Path) -> None:
    """An agent that cannot see a module in the overview does not know to ask about it (werkzeug:
    13 of its 52 modules were missing from a listing cut at its budget)."""
    async def run() -> Any:
        async with Client(_params(project)) as client:
            return [await client.call_tool("project_overview", {"under": ".", "depth": 2, "max_chars": budget, "structured": True})
                    for budget in (1500, 60_000)]

    small, whole = asyncio.run(run())
    everything = [entry["file"] for entry in whole.structured_content["entries"]]
    package = [path for path in everything if file_rank(path) == 0]
    text = small.content[0].text
    assert len(text) <= 1500
    assert all(f"{path}  [" in text for path in package), [p for p in package if f"{p}  [" not in text]
    assert "more rows left out to fit max_chars" in text
    assert small.structured_content["files_shown"] >= len(package)
    assert [entry["file"] for entry in small.structured_content["entries"]][:len(package)] == package

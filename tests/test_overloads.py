"""An overload set named without ``[n]`` answers for its implementation and lists its signatures
(issue 43): read, references, definition and impact, through the engine, the CLI and MCP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from mcp.client import Client

from engine.api import Engine, SourcePreference
from engine.errors import AmbiguousAddress
from engine.names import parse_address
from engine.workspace import Workspace
from frontends.cli.main import main
from frontends.mcp_server import build_server

MULTIDICT = '''\
from __future__ import annotations

import typing as t


class MultiDict:
    def __init__(self) -> None:
        self._data: dict[str, list[str]] = {}

    @t.overload
    def getlist(self, key: str) -> list[str]: ...
    @t.overload
    def getlist(self, key: str, type: t.Callable[[str], int]) -> list[int]: ...
    def getlist(self, key: str, type: t.Callable[[str], int] | None = None) -> list[str] | list[int]:
        values = self._data.get(key, [])
        if type is None:
            return list(values)
        return [type(v) for v in values]


def first_values(d: MultiDict) -> list[str]:
    return d.getlist("a")
'''

BAG_TS = '''\
export class Bag {
  getlist(key: string): string[];
  getlist(key: string, parse: (s: string) => number): number[];
  getlist(key: string, parse?: (s: string) => number): string[] | number[] {
    return parse ? [parse(key)] : [key];
  }
}

export function use(b: Bag): string[] {
  return b.getlist("a");
}
'''

STUBS_PYI = '''\
from typing import overload

@overload
def f(x: int) -> int: ...
@overload
def f(x: str) -> str: ...
'''

IMPLEMENTATION = "multidict.py:MultiDict/getlist[2]"
STUBS = ["multidict.py:MultiDict/getlist[0]", "multidict.py:MultiDict/getlist[1]"]


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "multidict.py").write_text(MULTIDICT, encoding="utf-8")
    (tmp_path / "bag.ts").write_text(BAG_TS, encoding="utf-8")
    (tmp_path / "stubs.pyi").write_text(STUBS_PYI, encoding="utf-8")
    return tmp_path


@pytest.fixture()
def engine(project: Path) -> Iterator[Engine]:
    engine = Engine(Workspace(project), source=SourcePreference.AST)
    yield engine
    engine.close()


def test_read_answers_for_the_implementation_and_lists_the_overloads(engine: Engine) -> None:
    found = engine.read(parse_address("MultiDict/getlist"))
    assert found.symbol.address == IMPLEMENTATION and found.first_line == 14
    assert found.overloads is not None
    assert [stub.address for stub in found.overloads.signatures] == STUBS


def test_an_index_still_addresses_one_stub(engine: Engine) -> None:
    found = engine.read(parse_address("MultiDict/getlist[0]"))
    assert found.symbol.address == STUBS[0] and found.overloads is None
    assert found.lines == ["    @t.overload", "    def getlist(self, key: str) -> list[str]: ..."]


def test_references_and_definition_are_the_implementations_with_the_overloads_noted(engine: Engine) -> None:
    references = engine.references("MultiDict/getlist")
    assert [(loc.file, loc.range.start.line + 1) for loc in references.locations] == [("multidict.py", 14), ("multidict.py", 22)]
    assert all(stub in references.notes[0] for stub in STUBS) and IMPLEMENTATION in references.notes[0]
    definition = engine.definition("MultiDict/getlist")
    assert [(loc.file, loc.range.start.line + 1) for loc in definition.locations] == [("multidict.py", 14)]
    assert IMPLEMENTATION in definition.notes[0]


def test_impact_targets_the_implementation(engine: Engine) -> None:
    target = engine.graph_target("MultiDict/getlist")
    assert target == IMPLEMENTATION
    assert "multidict.py:first_values" in {reached.node.address for reached in engine.graph().impact(target)}


def test_typescript_overload_signatures_resolve_to_the_implementation(engine: Engine) -> None:
    found = engine.read(parse_address("bag.ts:Bag/getlist"))
    assert found.symbol.address == "bag.ts:Bag/getlist[2]" and found.overloads is not None
    assert [stub.address for stub in found.overloads.signatures] == ["bag.ts:Bag/getlist[0]", "bag.ts:Bag/getlist[1]"]


def test_a_stub_file_without_an_implementation_stays_ambiguous(engine: Engine) -> None:
    with pytest.raises(AmbiguousAddress) as refused:
        engine.read(parse_address("stubs.pyi:f"))
    assert [c.address for c in refused.value.candidates] == ["stubs.pyi:f[0]", "stubs.pyi:f[1]"]
    with pytest.raises(AmbiguousAddress):
        engine.references("stubs.pyi:f")


def test_the_cli_json_lists_the_overloads(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(project), "--no-daemon", "--source", "ast", "--json", "read", "MultiDict/getlist"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["symbol"]["name_path"] == "MultiDict/getlist[2]" and data["start_line"] == 14
    assert [(o["address"], o["line"]) for o in data["overloads"]] == [(STUBS[0], 10), (STUBS[1], 12)]
    assert data["overloads"][0]["signature"] == "def getlist(self, key: str) -> list[str]"
    assert main(["--root", str(project), "--no-daemon", "--source", "ast", "--json", "graph", "refs", "MultiDict/getlist"]) == 0
    refs = json.loads(capsys.readouterr().out)
    assert refs["ok"] is True and [loc["line"] for loc in refs["locations"]] == [14, 22]


def test_mcp_read_symbol_answers_for_the_implementation(engine: Engine) -> None:
    async def steps() -> Any:
        async with Client(build_server(engine)) as client:
            read = await client.call_tool("read_symbol", {"address": "MultiDict/getlist", "structured": True})
            refs = await client.call_tool("find_references", {"address": "MultiDict/getlist"})
            return read, refs

    read, refs = asyncio.run(steps())
    assert not read.is_error and not refs.is_error, (read.content, refs.content)
    assert read.structured_content["symbol"]["name_path"] == "MultiDict/getlist[2]"
    assert [o["address"] for o in read.structured_content["overloads"]] == STUBS
    assert all(stub in read.content[0].text for stub in STUBS)
    assert "overload set" in refs.content[0].text and "multidict.py:22" in refs.content[0].text

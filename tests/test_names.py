"""Address parsing (valid and malformed) and name-path resolution cases from fixtures/expected/namepaths.toml."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from engine.api import Engine
from engine.errors import AmbiguousAddress, MalformedAddress, SymbolNotFound
from engine.names import NamePath, PositionAddress, SymbolAddress, parse_address
from engine.symbols import Segment, SymbolKind
from engine.workspace import Workspace
from tests.conftest import EXPECTED, SAMPLE

CASES: list[dict[str, Any]] = tomllib.loads((EXPECTED / "namepaths.toml").read_text(encoding="utf-8"))["case"]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(Workspace(SAMPLE))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_resolution_case(engine: Engine, case: dict[str, Any]) -> None:
    address = parse_address(case["address"])
    kind = SymbolKind.from_label(case["kind"]) if "kind" in case else None
    if "find" in case:
        assert [s.address for s in engine.find(address, kind).matches] == case["find"]
    if "one" in case:
        assert engine.resolve(address, kind).address == case["one"]
    if case.get("refuse") == "ambiguous":
        with pytest.raises(AmbiguousAddress) as ambiguous:
            engine.resolve(address, kind)
        assert [c.address for c in ambiguous.value.candidates] == case["candidates"]
        for candidate in case["candidates"]:
            assert candidate in ambiguous.value.message
    if case.get("refuse") == "not_found":
        with pytest.raises(SymbolNotFound) as missing:
            engine.find(address, kind)
        for suggestion in case["suggest"]:
            assert suggestion in missing.value.suggestions
            assert suggestion in missing.value.message


def test_every_candidate_address_resolves_back_to_its_symbol(engine: Engine) -> None:
    """A listed address is ready to paste: it must name exactly the symbol it came from."""
    for listing in engine.symbols().files:
        for top in listing.symbols:
            for symbol in top.walk():
                assert engine.resolve(parse_address(symbol.address)).address == symbol.address


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Order", SymbolAddress(None, NamePath((Segment("Order"),)))),
        ("a/b.py:Order/total", SymbolAddress("a/b.py", NamePath((Segment("Order"), Segment("total"))))),
        ("/Order/add[2]", SymbolAddress(None, NamePath((Segment("Order"), Segment("add", 2)), anchored=True))),
        ("m.py:/f", SymbolAddress("m.py", NamePath((Segment("f"),), anchored=True))),
        ("x.rb:Runner/run!", SymbolAddress("x.rb", NamePath((Segment("Runner"), Segment("run!"))))),
        ("s.cpp:Shape/~Shape", SymbolAddress("s.cpp", NamePath((Segment("Shape"), Segment("~Shape"))))),
        ("ü.py:Größe", SymbolAddress("ü.py", NamePath((Segment("Größe"),)))),
        ("m.py:12", PositionAddress("m.py", 12, None)),
        ("m.py:12:7", PositionAddress("m.py", 12, 7)),
    ],
)
def test_parse_valid(text: str, expected: object) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize(
    ("text", "offset", "reason"),
    [
        ("", 0, "empty"),
        ("Order.total", 5, "separate names with '/'"),
        ("m.py:Order//total", 11, "expected a name"),
        ("m.py:Order/", 11, "expected a name at the end"),
        ("m.py:add[x]", 9, "overload index is a number"),
        ("m.py:add[1", 10, "missing ']'"),
        (":Order", 0, "file path before ':'"),
        ("m.py:", 5, "after ':'"),
        ("m.py:0", 5, "numbered from 1"),
        ("m.py:3:0", 7, "numbered from 1"),
        ("m.py:Or der", 7, "unexpected character ' '"),
        ("shop/models.py", 14, "this is a file"),
        (" Order", 0, "whitespace"),
    ],
)
def test_parse_malformed_points_at_the_bad_character(text: str, offset: int, reason: str) -> None:
    with pytest.raises(MalformedAddress) as error:
        parse_address(text)
    assert error.value.offset == offset
    assert reason in error.value.message
    # The message shows the address and a caret under the offending character.
    lines = error.value.message.splitlines()
    assert lines[1].strip() == text.strip() and lines[2].index("^") - 2 == offset

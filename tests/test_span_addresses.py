"""Span addresses (FILE:LINE:COL-LINE:COL) and the name path refinements --lines and --match."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.errors import AmbiguousMatch, MalformedAddress, MatchNotFound, PositionOutOfRange, UsageError
from engine.names import RangeAddress, SymbolAddress, parse_address, parse_span_address
from engine.refactor.operations import build
from engine.refactor.selection import select
from engine.workspace import Workspace, WorkspaceConfig


def test_a_range_is_parsed_with_one_based_lines_and_columns() -> None:
    assert parse_span_address("pkg/m.py:12:5-18:20") == RangeAddress("pkg/m.py", 12, 5, 18, 20)
    assert isinstance(parse_span_address("pkg/m.py:Order/total"), SymbolAddress)


@pytest.mark.parametrize(("text", "offset"), [("m.py:0:5-18:20", 5), ("m.py:3:0-4:1", 7), ("m.py:3:5-3:5", 9),
                                              ("m.py:4:1-3:9", 9)])
def test_a_malformed_range_is_refused_at_its_place(text: str, offset: int) -> None:
    with pytest.raises(MalformedAddress) as refused:
        parse_span_address(text)
    assert refused.value.offset == offset


def test_operations_that_take_a_name_refuse_a_range_saying_which_take_one() -> None:
    with pytest.raises(MalformedAddress, match="only extract and inline"):
        parse_address("m.py:3:1-4:2")
    with pytest.raises(MalformedAddress):
        build("rename", {"address": "m.py:3:1-4:2", "new_name": "x"})


SOURCE = "def area(r):\n    # é counts once\n    half = r / 2\n    return half * half\n"


@pytest.fixture()
def engine(tmp_path: Path) -> Engine:
    (tmp_path / "geo.py").write_text(SOURCE, encoding="utf-8")
    return Engine(Workspace(tmp_path, WorkspaceConfig()), source=SourcePreference.AST)


def test_match_finds_the_one_place_in_the_symbol_and_lines_take_whole_lines(engine: Engine) -> None:
    chosen = select(engine, "geo.py:area", match="r / 2")
    assert (chosen.describe(), chosen.text) == ("geo.py:3:12-3:17", "r / 2")
    lines = select(engine, "geo.py:area", lines="3-4")
    assert lines.text == "half = r / 2\n    return half * half"
    assert select(engine, "geo.py:3:12-3:17").text == "r / 2"


def test_match_is_refused_with_every_candidate_when_it_occurs_twice_and_whole_words_only(engine: Engine) -> None:
    with pytest.raises(AmbiguousMatch) as refused:
        select(engine, "geo.py:area", match="half", lines="4")
    assert refused.value.candidates == ["geo.py:4:12-4:16", "geo.py:4:19-4:23"]
    with pytest.raises(MatchNotFound):
        select(engine, "geo.py:area", match="al")  # inside 'half', never a whole word


def test_lines_outside_the_symbol_and_refinements_of_a_range_are_refused(engine: Engine) -> None:
    with pytest.raises(PositionOutOfRange):
        select(engine, "geo.py:area", lines="3-9")
    with pytest.raises(UsageError, match="already names its place"):
        select(engine, "geo.py:3:12-3:17", match="r")
    with pytest.raises(PositionOutOfRange):
        select(engine, "geo.py:3:12-3:40")

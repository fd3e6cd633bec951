"""A position names the name at it: ``FILE:LINE:COL`` on a call is the callee, on a declaration's
name that declaration; a line without a column, or a position past the file or its line, is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from engine.answers import Location
from engine.api import Engine, SourcePreference
from engine.errors import ColumnRequired, PositionOutOfRange, ServiceUnavailable, SymbolNotFound
from engine.extract import FileSymbols
from engine.names import PositionAddress, parse_address
from engine.ports import Answered
from engine.positions import Position, Range
from engine.resolve import checked_position
from engine.symbols import Confidence, Source
from engine.workspace import SourceFile, Workspace
from tests.test_cli import run_json
from tests.test_graph import make_project

M = """\
from pkg.models import Order


def split_cells(text):
    return text.split("|")


def divide(text):
    cells = split_cells(text)
    return len(cells)


def price(order: Order) -> int:
    return order.total()


def unused():
    return f"{divide('a')}"


def chained() -> int:
    return Order().total()
"""
MODELS = "class Order:\n    def total(self) -> int:\n        return 1\n"
CALL = "pkg/m.py:9:15"  # on `split_cells` in `cells = split_cells(text)`, inside divide


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": M, "pkg/models.py": MODELS})


@pytest.fixture
def engine(project: Path) -> Iterator[Engine]:
    opened = Engine(Workspace(project), source=SourcePreference.AST)
    yield opened
    opened.close()


def places(locations: list[Location]) -> list[tuple[str, int, int]]:
    return [(loc.file, loc.range.start.line + 1, loc.range.start.column + 1) for loc in locations]


def test_references_at_a_call_are_the_callees_not_the_enclosing_functions(engine: Engine) -> None:
    found = engine.references(CALL)
    assert places(found.locations) == [("pkg/m.py", 4, 5), ("pkg/m.py", 9, 13)]
    assert (found.source, found.confidence) == (Source.AST, Confidence.MEDIUM)
    assert any("names pkg/m.py:split_cells" in note for note in found.notes), found.notes


def test_definition_at_a_call_and_at_a_method_called_through_an_annotated_parameter(engine: Engine) -> None:
    assert places(engine.definition(CALL).locations) == [("pkg/m.py", 4, 5)]
    through_receiver = engine.definition("pkg/m.py:14:18")  # `total` in order.total()
    assert places(through_receiver.locations) == [("pkg/models.py", 2, 9)]
    after_a_call = engine.definition("pkg/m.py:22:20")  # `total` in Order().total()
    assert places(after_a_call.locations) == [("pkg/models.py", 2, 9)]


def test_a_position_on_a_declarations_own_name_is_that_declaration(engine: Engine) -> None:
    declared = engine.definition("pkg/m.py:8:7")
    assert places(declared.locations) == [("pkg/m.py", 8, 5)] and declared.source is Source.AST
    references = engine.references("pkg/m.py:8:5")  # divide, called once, in an f-string
    assert places(references.locations) == [("pkg/m.py", 8, 5), ("pkg/m.py", 18, 15)]


def test_a_declaration_only_answer_from_the_graph_is_low_confidence(engine: Engine) -> None:
    alone = engine.references("pkg/m.py:unused")
    used = engine.references("pkg/m.py:split_cells")
    assert places(alone.locations) == [("pkg/m.py", 17, 5)]
    assert alone.confidence is Confidence.LOW and any("only its declaration" in note for note in alone.notes)
    assert used.confidence is Confidence.MEDIUM


@pytest.mark.parametrize("ask", ["references", "definition"])
def test_a_line_without_a_column_is_refused_for_references_and_definition(engine: Engine, ask: str) -> None:
    with pytest.raises(ColumnRequired) as refused:
        getattr(engine, ask)("pkg/m.py:9")
    assert refused.value.code == "column_required" and "pkg/m.py:9:COL" in refused.value.message


@pytest.mark.parametrize("ask", ["references", "definition", "find"])
def test_positions_past_the_file_or_the_line_are_refused_not_clamped(engine: Engine, ask: str) -> None:
    def call(address: str) -> object:
        return engine.find(parse_address(address)) if ask == "find" else getattr(engine, ask)(address)

    with pytest.raises(PositionOutOfRange) as past_file:
        call("pkg/m.py:23:1")
    assert past_file.value.limit == 22 and "has 22 line(s)" in past_file.value.message
    assert past_file.value.to_json()["code"] == "position_out_of_range"
    with pytest.raises(PositionOutOfRange) as past_line:
        call("pkg/m.py:9:31")  # the line has 29 characters: column 30 is its end
    assert past_line.value.limit == 30 and "has 29 character(s)" in past_line.value.message


@pytest.mark.parametrize("address", ["pkg/m.py:10:5", "pkg/m.py:9:11", "pkg/m.py:9:30", "pkg/m.py:5:24"],
                         ids=["a keyword", "an operator", "the end of the line", "a string's text"])
def test_a_position_on_no_name_is_refused_for_definition(engine: Engine, address: str) -> None:
    with pytest.raises(SymbolNotFound, match="no name at"):
        engine.definition(address)


def test_find_reads_a_position_as_the_name_at_it(engine: Engine) -> None:
    def found(address: str) -> str:
        return engine.find(parse_address(address)).matches[0].address

    assert found(CALL) == "pkg/m.py:split_cells"  # the callee, not divide around it
    assert found("pkg/m.py:14:18") == "pkg/models.py:Order/total"
    assert found("pkg/m.py:8:5") == "pkg/m.py:divide"  # a declaration's own name
    assert found("pkg/m.py:9") == "pkg/m.py:divide"  # no column: the innermost symbol at the line
    assert found("pkg/m.py:9:11") == "pkg/m.py:divide"  # on no name: the symbol around it
    with pytest.raises(SymbolNotFound):
        found("pkg/m.py:9:5")  # `cells`, a local: no symbol, and not silently divide


class Served:
    """A language server that answers definition and references from fixed locations."""

    def __init__(self, definition: list[Location]) -> None:
        self._definition = definition
        self.asked: list[tuple[str, str, Position]] = []

    def document_symbols(self, source: SourceFile) -> FileSymbols:
        raise ServiceUnavailable("symbols are not served here")  # the graph's symbols come from the tree

    def definition(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        self.asked.append(("definition", source.path, position))
        return Answered(self._definition, "fake", True)

    def references(self, source: SourceFile, position: Position) -> Answered[list[Location]]:
        self.asked.append(("references", source.path, position))
        return Answered([Location(source.path, Range(position, Position(position.line, position.column + 1)))], "fake", True)

    def close(self) -> None:
        pass


def test_with_a_server_its_definition_says_which_symbol_a_position_names(project: Path) -> None:
    split_cells = Location("pkg/m.py", Range(Position(3, 4), Position(3, 15)))
    server = Served([split_cells])
    engine = Engine(Workspace(project), services=server, source=SourcePreference.AUTO)  # type: ignore[arg-type]
    try:
        found = engine.references(CALL)
    finally:
        engine.close()
    assert server.asked == [("definition", "pkg/m.py", Position(8, 14)), ("references", "pkg/m.py", Position(3, 4))]
    assert found.source is Source.LSP and any("names pkg/m.py:split_cells, by fake's definition" in n for n in found.notes)
    # What the server left out and the graph resolves is added, and the answer says so.
    assert ("pkg/m.py", 9, 13) in places(found.locations) and found.confidence is Confidence.MEDIUM


def test_with_a_server_a_name_defined_outside_the_graph_gets_the_references_at_the_position(project: Path) -> None:
    library = Location("/usr/lib/python3/len.pyi", Range(Position(0, 4), Position(0, 7)), inside_workspace=False)
    server = Served([library])
    engine = Engine(Workspace(project), services=server, source=SourcePreference.AUTO)  # type: ignore[arg-type]
    try:
        found = engine.references("pkg/m.py:10:12")  # `len`
    finally:
        engine.close()
    assert [kind for kind, _path, _position in server.asked] == ["definition", "references"]
    assert server.asked[-1][2] == Position(9, 11)
    assert found.source is Source.LSP and places(found.locations) == [("pkg/m.py", 10, 12)]


def test_the_cli_refuses_a_line_without_a_column_as_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _err = run_json(capsys, "--root", str(project), "--source", "ast", "graph", "refs", "pkg/m.py:9")
    assert code == 2 and data["error"]["code"] == "column_required"


@pytest.mark.parametrize(("text", "address", "limit"), [
    ("", "f.py:1", 0),  # an empty file has no line 1
    ("a\n", "f.py:2", 1),  # the "line" after the final line break holds nothing
    ("a\n\n", "f.py:3:1", 2),  # an empty last line is a line
    ("ab\n", "f.py:1:4", 3),  # column 3 is the end of the line; 4 is past it
])
def test_checked_position_refuses_what_lies_past_the_file_or_the_line(text: str, address: str, limit: int) -> None:
    parsed = parse_address(address)
    assert isinstance(parsed, PositionAddress)
    with pytest.raises(PositionOutOfRange) as refused:
        checked_position(text, parsed)
    assert refused.value.limit == limit


def test_checked_position_accepts_the_end_of_a_line_and_an_empty_last_line() -> None:
    for text, address, position in [("ab\n", "f.py:1:3", Position(0, 2)), ("a\n\n", "f.py:2:1", Position(1, 0))]:
        parsed = parse_address(address)
        assert isinstance(parsed, PositionAddress) and checked_position(text, parsed) == position

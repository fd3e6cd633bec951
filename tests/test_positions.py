"""Exact column conversion between code points, UTF-16 code units and UTF-8 bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.api import Engine
from engine.positions import (
    LineIndex,
    Position,
    PositionEncoding,
    Range,
    code_points_to_units,
    line_starts,
    split_lines,
    units_to_code_points,
)
from engine.workspace import Workspace
from tests.conftest import SAMPLE

UTF16 = PositionEncoding.UTF16
UTF8 = PositionEncoding.UTF8


def test_symbols_after_emoji_and_cjk_on_the_same_line() -> None:
    """shop/util.py line 16 holds an emoji, CJK text and then more symbols."""
    listing = Engine(Workspace(SAMPLE)).outline("shop/util.py")
    by_name = {s.name: s for s in listing.symbols}
    line_text = split_lines((SAMPLE / "shop/util.py").read_text(encoding="utf-8"))[15]
    index = LineIndex((SAMPLE / "shop/util.py").read_bytes())
    for name in ("GREETING", "def_label", "PRICE_TAG"):
        selection = by_name[name].selection_range
        # The engine's column is a code-point index: slicing the line there yields the name.
        assert line_text[selection.start.column:selection.end.column] == name
        # UTF-16: every astral character before the name (🛒, 🏷 is BMP) counts twice.
        expected_utf16 = len(line_text[: selection.start.column].encode("utf-16-le")) // 2
        assert index.to_protocol(selection.start, UTF16) == (15, expected_utf16)
        expected_utf8 = len(line_text[: selection.start.column].encode("utf-8"))
        assert index.to_protocol(selection.start, UTF8) == (15, expected_utf8)
        assert index.from_protocol(15, expected_utf16, UTF16) == selection.start
    # Spelled out for def_label: 21 code points precede it, one of them (🛒) astral.
    assert by_name["def_label"].selection_range.start == Position(15, 21)
    assert index.to_protocol(Position(15, 21), UTF16) == (15, 22)


def test_half_a_surrogate_pair_rounds_to_the_end_of_the_character() -> None:
    line = "a😀b"
    assert units_to_code_points(line, 2, UTF16) == 2
    assert units_to_code_points(line, 3, UTF16) == 2
    assert units_to_code_points(line, 99, UTF16) == 3


def test_line_breaks_follow_lsp_not_splitlines() -> None:
    text = "a\r\nb\rc\nd\x0ce\u2028f"
    assert split_lines(text) == ["a", "b", "c", "d\x0ce\u2028f"]
    index = LineIndex(text.encode("utf-8"))
    assert index.line_count == 4
    assert index.position_of_byte(text.encode().index(b"e")) == Position(3, 2)


def test_byte_offsets_to_code_points_on_crlf_lines() -> None:
    data = "x = 1\r\ny = 'é'\r\nz\r\n".encode("utf-8")
    index = LineIndex(data)
    assert index.position_of_byte(data.index(b"z")) == Position(2, 0)
    assert index.position_of_byte(data.index(b"'", data.index(b"\xc3"))) == Position(1, 6)


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n"), max_size=40), st.data())
def test_round_trip_through_every_encoding(line: str, data: st.DataObject) -> None:
    column = data.draw(st.integers(min_value=0, max_value=len(line)))
    for encoding in PositionEncoding:
        units = code_points_to_units(line, column, encoding)
        assert units_to_code_points(line, units, encoding) == column
    assert code_points_to_units(line, column, UTF16) == len(line[:column].encode("utf-16-le")) // 2


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=60))
def test_line_index_agrees_with_slicing(text: str) -> None:
    data = text.encode("utf-8")
    index = LineIndex(data)
    lines = split_lines(text)
    for offset in range(len(data) + 1):
        try:
            prefix = data[:offset].decode("utf-8")
        except UnicodeDecodeError:
            continue  # Not a character boundary; tree-sitter never reports one.
        if data[offset - 1:offset + 1] == b"\r\n":
            continue  # Between the two bytes of one line break: no position names it.
        position = index.position_of_byte(offset)
        assert position.line == len(split_lines(prefix)) - 1
        assert position.column == len(split_lines(prefix)[-1])
        assert position.column <= len(lines[position.line])


@given(st.text(alphabet="ab \n\r\té€😀", max_size=60), st.integers(0, 12), st.integers(0, 12), st.sampled_from(PositionEncoding))
def test_edit_positions_agree_with_from_protocol_up_to_the_clamp(text: str, line: int, character: int, encoding: PositionEncoding) -> None:
    """An edit's ends skip the line table in ASCII files; they differ from from_protocol only by
    the clamp to the line's end, which applying the edit does (offset_of)."""
    from engine.edits.text import offset_of

    data = text.encode("utf-8")
    lazy, full = LineIndex(data), LineIndex(data)
    assert lazy.line_count == len(full._starts)
    exact = full.from_protocol(line, character, encoding)
    fast = lazy.edit_position(line, character, encoding)
    starts = line_starts(text)
    assert offset_of(text, starts, fast) == offset_of(text, starts, exact)


@given(st.text(alphabet="ab \n\r\té€😀", max_size=60), st.integers(0, 12), st.integers(0, 12), st.integers(0, 12),
       st.integers(0, 12), st.sampled_from(PositionEncoding))
def test_an_edits_range_is_its_two_edit_positions(text: str, line: int, character: int, end_line: int, end_character: int,
                                                  encoding: PositionEncoding) -> None:
    """The ASCII case decided once for both ends of an edit (a rename answer converts a thousand)
    gives what each end would on its own, lines past the end included."""
    data = text.encode("utf-8")
    both = LineIndex(data).edit_range(line, character, end_line, end_character, encoding)
    index = LineIndex(data)
    assert both == Range(index.edit_position(line, character, encoding), index.edit_position(end_line, end_character, encoding))

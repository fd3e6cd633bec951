"""Text edits' ranges kept from request to request (lsp_pool.kept_ranges): reused only for the same
file content and encoding, bounded, and converting every answer exactly as each edit converted alone."""

from __future__ import annotations

import gc
import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from engine import read_memo
from engine.answers import FileEdits, ServerEdit, TextEdit
from engine.positions import LineIndex, Position, PositionEncoding
from lsp_pool import convert
from lsp_pool.convert import Converter
from lsp_pool.kept_ranges import KeptRanges


@pytest.fixture(autouse=True)
def kept_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files are kept as soon as they are read (each change below changes the size)."""
    monkeypatch.setattr(read_memo, "RACY_SECONDS", 0.0)


def _answer(path: Path, *spans: tuple[int, int, int, int], new_text: str = "c") -> dict[str, Any]:
    return {"changes": {path.as_uri(): [
        {"range": {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}, "newText": new_text}
        for a, b, c, d in spans]}}


def _ranges(edit: ServerEdit) -> list[Any]:
    return [text_edit.range for file in edit.files for text_edit in file.edits]


def test_a_warm_answer_on_an_unchanged_file_reuses_the_ranges_made_for_it(tmp_path: Path) -> None:
    path = tmp_path / "a.ts"
    path.write_text("const a = 1;\nconst b = a + a;\n")
    spans = ((0, 6, 0, 7), (1, 10, 1, 11), (1, 14, 1, 15))
    first = Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(_answer(path, *spans))
    second = Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(_answer(path, *spans, new_text="other"))
    assert [e.new_text for e in second.files[0].edits] == ["other"] * 3
    assert all(a is b for a, b in zip(_ranges(first), _ranges(second), strict=True)), "each range made anew"


def test_another_encoding_or_a_changed_file_gets_ranges_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "a.ts"
    path.write_text("const é = 1; const b = 2;\n")  # é: one UTF-16 unit, two UTF-8 bytes
    utf16 = Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(_answer(path, (0, 19, 0, 20)))
    utf8 = Converter(tmp_path, PositionEncoding.UTF8).workspace_edit(_answer(path, (0, 19, 0, 20)))
    assert _ranges(utf16)[0].start == Position(0, 19) and _ranges(utf8)[0].start == Position(0, 18)
    path.write_text("const éé = 1; const b = 2;\n")  # one more code point before the same units
    changed = Converter(tmp_path, PositionEncoding.UTF8).workspace_edit(_answer(path, (0, 19, 0, 20)))
    assert _ranges(changed)[0].start == Position(0, 17)
    assert Converter(tmp_path, PositionEncoding.UTF16).workspace_edit(_answer(path, (0, 19, 0, 20))) \
        .files[0].edits[0].range.start == Position(0, 19)


def test_the_kept_ranges_are_bounded_and_the_least_recently_converted_files_go_first() -> None:
    kept = KeptRanges(limit=5)
    indexes = {name: LineIndex(b"abc\n") for name in "abc"}
    for name in "abc":
        ranges = kept.of(name, indexes[name], PositionEncoding.UTF16)
        ranges.update({(0, n, 0, n + 1): (None, None) for n in range(2)})  # type: ignore[misc]  # only counted
        kept.counted(name, PositionEncoding.UTF16, ranges)
        assert kept.held <= 5
    assert kept.held == 3, "a's and b's tables went when b's and c's ranges came (each file's table counts as one)"
    assert len(kept.of("c", indexes["c"], PositionEncoding.UTF16)) == 2
    assert kept.of("a", indexes["a"], PositionEncoding.UTF16) == {}
    for number in range(20):  # files named with no edits: their tables are bounded too
        kept.of(str(number), indexes["a"], PositionEncoding.UTF16)
    assert kept.held <= 5 and len(kept._files) <= 5


def test_the_kept_ranges_do_not_keep_a_files_index_alive(tmp_path: Path) -> None:
    path = tmp_path / "a.ts"
    path.write_text("const a = 1;\n")
    converter = Converter(tmp_path, PositionEncoding.UTF16)
    converter.workspace_edit(_answer(path, (0, 6, 0, 7)))
    index = converter.index(str(path))
    held = convert._KEPT_RANGES._files[(str(path), PositionEncoding.UTF16)].index
    assert held() is index
    path.write_text("const a = 12;\n")  # the memo keeps the new content's index in its place
    Converter(tmp_path, PositionEncoding.UTF8).workspace_edit(_answer(path, (0, 6, 0, 7)))
    del converter, index
    gc.collect()
    assert held() is None


# -- the same edits as each converted alone ------------------------------------------------------

_LINES = st.lists(st.text(st.sampled_from("ab é漢😀\t"), max_size=6), min_size=1, max_size=4)
_BREAKS = st.sampled_from(["\n", "\r\n", "\r"])
_SPAN = st.tuples(st.integers(-1, 5), st.integers(-1, 9), st.integers(-1, 5), st.integers(-1, 9)).map(
    lambda s: (s[0], s[1], s[0], s[1]) if s[2] < s[0] else s)
_NAMES = itertools.count()


def _each_alone(path: Path, encoding: PositionEncoding, edits: list[dict[str, Any]], file: str) -> ServerEdit:
    """What the conversion was before ranges were kept: each edit converted on its own, then a
    replacement repeated in the file dropped (an insertion is never a repeat)."""
    data = path.read_bytes()
    index = LineIndex(data[3:] if data.startswith(b"\xef\xbb\xbf") else data)
    seen, kept = set(), []
    for edit in edits:
        start, end = edit["range"]["start"], edit["range"]["end"]
        made = TextEdit(index.edit_range(start["line"], start["character"], end["line"], end["character"], encoding), edit["newText"])
        ends = (made.range.start.line, made.range.start.column, made.range.end.line, made.range.end.column)
        if ends[:2] != ends[2:]:
            if (ends, made.new_text) in seen:
                continue
            seen.add((ends, made.new_text))
        kept.append(made)
    return ServerEdit(files=(FileEdits(file, tuple(kept)),))


@settings(max_examples=300, deadline=None)
@given(lines=_LINES, line_break=_BREAKS, bom=st.booleans(), encodings=st.lists(st.sampled_from(PositionEncoding), min_size=1, max_size=3),
       answers=st.lists(st.lists(st.tuples(_SPAN, st.sampled_from(["x", "yz"])), max_size=8), min_size=1, max_size=3))
def test_kept_ranges_convert_every_answer_as_each_edit_converted_alone(
        lines: list[str], line_break: str, bom: bool, encodings: list[PositionEncoding],
        answers: list[list[tuple[tuple[int, int, int, int], str]]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        path = root / f"f{next(_NAMES)}.ts"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + line_break.join(lines).encode("utf-8"))
        for encoding, answer in itertools.product(encodings, answers * 2):  # each answer cold, then warm
            edits = [{"range": {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}, "newText": text}
                     for (a, b, c, d), text in answer]
            got = Converter(root, encoding).workspace_edit({"changes": {path.as_uri(): edits}})
            assert got == _each_alone(path, encoding, edits, path.name)

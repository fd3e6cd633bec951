"""The shortcuts that keep a hundred-file rename fast, each held to the slow, obvious answer.

- the syntax check skips files whose edits only swap whole identifiers, and nothing else;
- strings and comments found by one regular expression agree with Python's tokenizer;
- word search, line starts and line splitting agree with their plain definitions;
- the diff summary's counts agree with difflib's on whole files;
- a possible module-level binding is found as its regular expression finds it;
- the lines holding a name are found without listing every line start;
- a doctest example line is found as its regular expression finds it;
- language_of agrees with pathlib's idea of a suffix.
"""

from __future__ import annotations

import io
from bisect import bisect_right
import re
import tokenize
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.edits.diff import _counts
from engine.edits.syntax import swaps_identifiers_only
from engine.edits.text import line_starts, word_offsets
from engine.languages import _BY_EXTENSION, _BY_FILENAME, language_of
from engine.answers import TextEdit
from engine.positions import Position, Range, split_lines
from engine.refactor.python.doctests import _EXAMPLE, _has_example_line
from engine.refactor.leftovers import _lines_at
from engine.refactor.python.local_twins import _may_define
from engine.refactor.python.strings_and_comments import CodeMap

REPO = Path(__file__).resolve().parents[1]


def swap(line: int, start: int, end: int, new: str) -> TextEdit:
    return TextEdit(Range(Position(line, start), Position(line, end)), new)


@pytest.mark.parametrize(
    ("text", "edit", "language"),
    [
        ("x = total(1)\n", swap(0, 4, 9, "amount"), "python"),
        ("from m import total\n", swap(0, 14, 19, "amount"), "python"),
        ("obj.total\n", swap(0, 4, 9, "amount"), "python"),
        ('__all__ = ["total"]\n', swap(0, 0, 7, "names"), "python"),
        ("const a = $total;\n", swap(0, 10, 16, "sum"), "typescript"),
    ],
)
def test_whole_identifier_swaps_skip_the_parse(text: str, edit: TextEdit, language: str) -> None:
    assert swaps_identifiers_only(text, (edit,), language)


@pytest.mark.parametrize(
    ("text", "edit", "language", "why"),
    [
        ("x = total\n", swap(0, 4, 9, "class"), "python", "a keyword comes in"),
        ("type X = int\n", swap(0, 0, 4, "alias"), "python", "a soft keyword goes out"),
        ("x = total\n", swap(0, 4, 9, "match"), "python", "a soft keyword comes in"),
        ('x = rb"data"\n', swap(0, 4, 6, "zz"), "python", "a string prefix, next to its quote"),
        ("x = 0x1f\n", swap(0, 7, 8, "g"), "python", "part of a number"),
        ("x = 1.e5\n", swap(0, 6, 8, "y"), "python", "an exponent after a number's dot"),
        ("x = totals\n", swap(0, 4, 9, "amount"), "python", "part of a longer name"),
        ("const a = $total;\n", swap(0, 11, 16, "sum"), "typescript", "part of a name with a dollar"),
        ("x = total\n", swap(0, 4, 9, "a b"), "python", "not an identifier"),
        ("x = total\ny = 1\n", TextEdit(Range(Position(0, 4), Position(1, 1)), "z"), "python", "spans lines"),
        ("let c = 'a';\n", swap(0, 9, 10, "bc"), "rust", "a character literal"),
        ("x = 1\nvalue = 2\n", swap(0, 6, 11, "other"), "python", "past the line's end: applied, an insertion after 1"),
        ("x = 1", swap(0, 5, 8, "abc"), "python", "past the end of the text"),
        ("a = total\n", swap(0, 4, 9, "amount"), "ruby", "a language without a keyword list"),
    ],
)
def test_anything_else_is_parsed(text: str, edit: TextEdit, language: str, why: str) -> None:
    assert not swaps_identifiers_only(text, (edit,), language), why


def _python_sources() -> list[Path]:
    return sorted((REPO / "engine").rglob("*.py")) + sorted((REPO / "fixtures").rglob("*.py"))[:200]


def test_a_code_map_answers_the_same_in_any_order() -> None:
    """It scans only as far as asked; asking about earlier offsets later must not change answers."""
    text = next(path for path in _python_sources() if path.name == "rename.py").read_text(encoding="utf-8")
    offsets = list(range(0, len(text), 7))
    forward = CodeMap(text)
    expected = [forward.is_code(offset) for offset in offsets]
    backward = CodeMap(text)
    assert [backward.is_code(offset) for offset in reversed(offsets)][::-1] == expected
    assert True in expected and False in expected


def test_maps_of_one_content_share_its_scan_and_answer_as_a_map_of_their_own_does() -> None:
    """By content (the hash of the bytes): a later call's map of the same file goes on from where
    the last one stopped, whichever asked first and however far, and answers as a fresh one."""
    import random

    from engine.refactor.python import strings_and_comments

    rng = random.Random(5)
    for path in _python_sources()[:40]:
        text = path.read_text(encoding="utf-8")
        content = f"test:{path}"
        offsets = [rng.randrange(len(text) + 1) for _ in range(60)]
        alone = CodeMap(text)
        expected = [alone.is_code(offset) for offset in offsets]
        first, second = CodeMap(text, content), CodeMap(text, content)
        answers = [(first if number % 3 else second).is_code(offset) for number, offset in enumerate(offsets)]
        assert answers == expected, path
        assert CodeMap(text, content)._scan is first._scan  # shared
    strings_and_comments.forget_scans()
    assert CodeMap("x = 1\n", "test:anything")._scan is not first._scan


def test_kept_scans_are_bounded_by_the_length_of_their_contents() -> None:
    from engine.refactor.python.strings_and_comments import _ScansByContent

    scans = _ScansByContent(limit=100)
    kept = [scans.scan_of(f"c{number}", 40) for number in range(3)]
    assert scans.scan_of("c0", 40) is not kept[0]  # the oldest went when the third came
    assert scans.scan_of("c2", 40) is kept[2]


def test_strings_and_comments_agree_with_the_tokenizer() -> None:
    checked = 0
    for path in _python_sources():
        text = path.read_text(encoding="utf-8")
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, SyntaxError):
            continue
        starts = line_starts(text)
        code = CodeMap(text)
        for token in tokens:
            if token.start[0] > len(starts):
                continue  # the end marker
            offset = starts[token.start[0] - 1] + token.start[1]
            if token.type == tokenize.NAME:
                assert code.is_code(offset), f"{path}:{token.start}: {token.string} is code"
            elif token.type in (tokenize.STRING, tokenize.COMMENT) and len(token.string) > 2:
                inside = offset + 1 + min(token.string.find(c) for c in "#'\"" if c in token.string)  # past a prefix
                assert not code.is_code(inside), f"{path}:{token.start}: inside {token.string[:20]!r}"
            checked += 1
    assert checked > 10_000


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab_$ .\n\r1", max_size=40))
def test_word_offsets_and_lines_match_their_definitions(text: str) -> None:
    expected = [m.start() for m in re.finditer(r"(?<![\w$])ab(?![\w$])", text)]
    assert word_offsets(text, "ab") == expected
    assert line_starts(text) == [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    assert split_lines(text) == re.split(r"\r\n|\r|\n", text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"b", b"c", b"d"]), max_size=14), st.data())
def test_summary_counts_match_a_line_diff(before: list[bytes], data: st.DataObject) -> None:
    after = list(before)
    for _ in range(data.draw(st.integers(0, 3))):
        if after:
            after[data.draw(st.integers(0, len(after) - 1))] = data.draw(st.sampled_from([b"a", b"x", b"y"]))
    if data.draw(st.booleans()):
        after.insert(data.draw(st.integers(0, len(after))), b"new")
    added, removed = _counts(before, after)
    # A valid line diff turns `before` into `after`: the lengths balance ...
    assert len(before) - removed + added == len(after)
    if len(before) == len(after):
        # ... and, lines changed in place, it removes no more than the lines that differ.
        assert added == removed <= sum(a != b for a, b in zip(before, after))
    elif after == [*before[: after.index(b"new")], b"new", *before[after.index(b"new"):]]:
        assert (added, removed) == (1, 0)  # only a line inserted


@pytest.mark.parametrize(
    "path",
    ["a.py", "pkg/m.PYI", "x/.bashrc", "README", "dir.py/file", "a.tar.gz", "Rakefile", "x/Gemfile", "trailing.", "src/a.tsx"],
)
def test_language_of_agrees_with_pathlib(path: str) -> None:
    pure = PurePosixPath(path)
    expected = _BY_FILENAME.get(pure.name) or _BY_EXTENSION.get(pure.suffix.lower())
    assert language_of(path) == (expected.id if expected is not None else None)


def test_coverage_by_bisection_matches_checking_every_edit() -> None:
    import random

    from engine.edits.text import Coverage, covers

    chooser = random.Random(3)
    for _ in range(500):
        edits, column = [], 0
        for _ in range(chooser.randint(0, 6)):
            column += chooser.randint(1, 3)
            length = chooser.choice([0, 1, 2])
            edits.append(TextEdit(Range(Position(0, column), Position(0, column + length)), "x"))
            column += length
        chooser.shuffle(edits)
        coverage = Coverage(edits)
        for offset in range(column + 2):
            assert coverage.covers(Position(0, offset)) == any(covers(e, Position(0, offset)) for e in edits)


def test_leftovers_of_an_in_line_edit_match_those_of_the_whole_file(tmp_path: Path) -> None:
    from engine.edits.model import FileChange, WorkspaceEdit
    from engine.edits.text import apply_text_edits
    from engine.refactor.corpus import Corpus
    from engine.refactor.leftovers import Leftovers
    from engine.workspace import Workspace

    text = '\ufeffold = 1  # old\nx = old + old\ny = "old"\nz = old_er\ngetattr(m, "old")\n'
    (tmp_path / "m.py").write_text(text, encoding="utf-8")
    workspace = Workspace(tmp_path)
    source = workspace.read("m.py")
    renames = (swap(0, 0, 3, "new"), swap(1, 4, 7, "new"), swap(3, 4, 7, "new"))
    leftovers = Leftovers(Corpus(workspace, ["m.py"]), "old", "python")
    fast = leftovers._lines_after(WorkspaceEdit((FileChange("m.py", renames, source.sha256),)))["m.py"]
    whole = leftovers._lines(apply_text_edits(source.text, renames, "\n").encode())
    assert fast == whole == [(0, "new = 1  # old"), (1, "x = new + old"), (2, 'y = "old"'), (4, 'getattr(m, "old")')]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="abc ", max_size=6), min_size=1, max_size=8), st.data())
def test_lines_changed_in_place_are_the_lines_that_differ(lines: list[str], data: st.DataObject) -> None:
    from engine.edits.text import apply_text_edits, changed_lines_in_place

    text = "\n".join(lines) + "\n"
    edits: list[TextEdit] = []
    for number, line in enumerate(lines):
        if line and data.draw(st.booleans()):
            start = data.draw(st.integers(0, len(line)))
            end = data.draw(st.integers(start, len(line)))
            edits.append(swap(number, start, end, data.draw(st.text(alphabet="abx", max_size=3))))
    starts = line_starts(text)
    after = apply_text_edits(text, tuple(edits), "\n", starts)
    changed = changed_lines_in_place(text, starts, tuple(edits))
    before_lines, after_lines = text.splitlines(), after.splitlines()
    # Within lines, the line structure stays: a changed line is one that differs where it stands
    # (a diff may align repeated lines otherwise, for the same or a smaller count).
    assert len(before_lines) == len(after_lines)
    assert changed == {number: new for number, (old, new) in enumerate(zip(before_lines, after_lines)) if old != new}
    assert len(changed) >= _counts([line.encode() for line in before_lines], [line.encode() for line in after_lines])[0]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(alphabet="ab é", max_size=6), min_size=1, max_size=8), st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=8, max_size=8),
       st.booleans(), st.data())
def test_a_text_rebuilt_from_its_changed_lines_is_the_edited_text(
    lines: list[str], breaks: list[str], final_break: bool, data: st.DataObject,
) -> None:
    """The preview's after-text of an edit within lines (engine.edits.materialize) comes from its
    changed lines: each line's own break kept, columns past a line's end stopping there."""
    from engine.edits.text import apply_text_edits, changed_lines_in_place, with_changed_lines

    text = "".join(line + brk for line, brk in zip(lines, breaks))
    text = text if final_break else text.rstrip("\r\n")
    edits: list[TextEdit] = []
    for number, line in enumerate(lines):
        if data.draw(st.booleans()):
            start = data.draw(st.integers(0, len(line) + 2))
            end = data.draw(st.integers(start, len(line) + 3))
            edits.append(swap(number, start, end, data.draw(st.text(alphabet="xyé", max_size=3))))
    starts = line_starts(text)
    changed = changed_lines_in_place(text, starts, tuple(edits))
    if changed is not None:
        assert with_changed_lines(text, starts, changed) == apply_text_edits(text, tuple(edits), "\n", starts)


def test_line_starts_are_shared_by_content_and_dropped_least_recent_first(tmp_path: Path) -> None:
    from engine.workspace import Workspace, _LineStartsByContent

    texts = {"a.py": "x = 1\ny = 2\n", "b.py": "one\r\ntwo\rthree\n", "c.py": "no newline at end"}
    for name, text in texts.items():
        (tmp_path / name).write_bytes(text.encode())
    workspace = Workspace(tmp_path)
    for name, text in texts.items():
        first, again = workspace.read(name), workspace.read(name)
        assert first.line_starts == line_starts(text) and again.line_starts is first.line_starts
    memo = _LineStartsByContent(limit=5)
    assert memo.get("a", "1\n2\n3\n") == [0, 2, 4, 6] and memo.get("b", "1\n") == [0, 2]
    assert memo.get("c", "x") == [0]  # holds 4 + 2 + 1 > 5 offsets: "a" goes
    assert memo.get("b", "changed?") == [0, 2]  # kept: the hash fixes the text
    assert memo.get("a", "1\n") == [0, 2]  # recomputed from the text given


_PIECES = ["cached", "cached_x", "x_cached", "def", "class", "undef", " ", "  ", "\n", "\t", "\u00a0", "=", "==", ":",
           ": int", "(", ")", "é", "1", "_"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_a_possible_definition_is_found_as_its_regular_expression_finds_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    definition = re.search(r"(?:\bdef|\bclass)\s+cached\b|\bcached\s*(?::[^=\n]*)?=(?!=)", text) is not None
    assert _may_define(text, "cached") == definition, text


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["old", "x", " ", "\n", "\n\n", "é", "old_", "."]), max_size=30))
def test_the_lines_holding_offsets_are_those_line_starts_give(pieces: list[str]) -> None:
    text = "".join(pieces)
    offsets = word_offsets(text, "old")
    starts = line_starts(text)
    expected: dict[int, str] = {}
    spots = set()
    for offset in offsets:
        number = bisect_right(starts, offset) - 1
        end = starts[number + 1] if number + 1 < len(starts) else len(text)
        expected.setdefault(number, text[starts[number]:end].rstrip("\r\n"))
        spots.add((number, offset - starts[number], number, offset - starts[number] + 3))
    assert _lines_at(text, offsets, 3) == (list(expected.items()), spots)


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([">>>", "...", ".", ">", " ", "\t", "\n", "\r", "x", "\u00a0"]), max_size=14))
def test_an_example_line_is_found_as_its_regular_expression_finds_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _has_example_line(text) == (_EXAMPLE.search(text) is not None), repr(text)


def test_recent_python_trees_are_kept_by_text_within_their_budget() -> None:
    """parse_python keeps the last few trees by their text (a rename's passes parse its defining
    module several times per call): the same text gives the same tree, another text its own,
    and what is kept stays within the character budget (a daemon's memory is held to one)."""
    from engine.refactor.python import pytrees

    first = pytrees.parse_python("def f():\n    return 1\n")
    assert first is not None and pytrees.parse_python("def f():\n    return 1\n") is first
    assert pytrees.parse_python("def f():\n    return 2\n") is not first
    assert pytrees.parse_python("def (:\n") is None  # a text that does not parse: None, kept as such too
    large = "x = 1\n" * (pytrees._RECENT_CHARACTERS // 6 + 1)
    assert pytrees.parse_python(large) is not pytrees.parse_python(large)  # over the budget: never kept
    for number in range(pytrees._RECENT_TREES + 3):
        pytrees.parse_python(f"y = {number}\n")
    assert len(pytrees._recent) <= pytrees._RECENT_TREES
    assert sum(map(len, pytrees._recent)) <= pytrees._RECENT_CHARACTERS
    assert pytrees.parse_python("def f():\n    return 1\n") is not first  # pushed out by the newer ones

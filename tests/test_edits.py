"""The edit value, text application, LSP JSON conversion and diffs, without touching the disk."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.edits.diff import summarize, unified_diff
from engine.edits.lsp_json import MalformedEdit, from_lsp, to_lsp
from engine.edits.model import FileChange, OverlappingEdits, WorkspaceEdit
from engine.edits.materialize import FileState, StalePlan, materialize
from engine.edits.text import apply_text_edits, line_starts
from engine.errors import UnsafePath
from engine.answers import TextEdit
from engine.positions import Position, PositionEncoding, Range
from engine.workspace import Workspace


def edit(line: int, start: int, end: int, text: str, end_line: int | None = None) -> TextEdit:
    return TextEdit(Range(Position(line, start), Position(line if end_line is None else end_line, end)), text)


def test_overlapping_edits_are_rejected_when_built() -> None:
    with pytest.raises(OverlappingEdits, match="edits overlap at line 1, column 3"):
        WorkspaceEdit((FileChange("a.py", (edit(0, 0, 4, "x"), edit(0, 2, 6, "y"))),))
    with pytest.raises(OverlappingEdits, match="two insertions"):
        WorkspaceEdit((FileChange("a.py", (edit(0, 1, 1, "x"), edit(0, 1, 1, "y"))),))
    WorkspaceEdit((FileChange("a.py", (edit(0, 0, 2, "x"), edit(0, 2, 2, "y"))),))  # touching is fine


def test_inserted_line_breaks_follow_the_file() -> None:
    text = "a\r\nb\r\n"
    assert apply_text_edits(text, (edit(1, 0, 0, "one\ntwo\n"),), "\r\n") == "a\r\none\r\ntwo\r\nb\r\n"
    assert apply_text_edits("x\n", (edit(0, 1, 1, "\r\ny"),), "\n") == "x\ny\n"


def test_a_column_past_the_end_stops_before_the_line_break() -> None:
    assert apply_text_edits("ab\ncd\n", (edit(0, 1, 99, "Z"),), "\n") == "aZ\ncd\n"


@st.composite
def text_and_edits(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, str]]]:
    lines = draw(st.lists(st.text(alphabet="ab😀字 ", max_size=6), min_size=1, max_size=5))
    text = "\n".join(lines) + "\n"
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=6)))
    pairs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    return text, [(a, b, draw(st.text(alphabet="xy\n", max_size=3))) for a, b in pairs]


@given(text_and_edits())
@settings(max_examples=300)
def test_edits_apply_like_offsets_do(case: tuple[str, list[tuple[int, int, str]]]) -> None:
    text, spans = case
    starts = line_starts(text)

    def position(offset: int) -> Position:
        line = max(i for i, s in enumerate(starts) if s <= offset)
        return Position(line, offset - starts[line])

    edits = tuple(TextEdit(Range(position(a), position(b)), t) for a, b, t in spans)
    if any(a == b for a, b, _t in spans) and len({(a, b) for a, b, _t in spans}) < len(spans):
        return  # equal insertion points have no defined order; the model refuses those
    expected = text
    for a, b, t in sorted(spans, reverse=True):
        expected = expected[:a] + t + expected[b:]
    assert apply_text_edits(text, edits, "\n") == expected


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "m.py").write_bytes(b'\xef\xbb\xbfx = "\xf0\x9f\x9b\x92"; target = 1\r\ny = 2\r\n')
    return Workspace(tmp_path)


def test_lsp_json_round_trip_with_utf16_columns_bom_and_crlf(workspace: Workspace) -> None:
    # `target` starts at code point 9, UTF-16 unit 10 (🛒 is a surrogate pair) and UTF-8 byte 12.
    lsp = {"changes": {"m.py": [{"range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 16}},
                                 "newText": "goal"}]}}
    value = from_lsp(lsp, workspace)
    [change] = value.operations
    assert isinstance(change, FileChange) and change.edits[0].range.start == Position(0, 9)
    back = to_lsp(value, workspace)
    assert back["documentChanges"][0]["edits"][0]["range"] == lsp["changes"]["m.py"][0]["range"]
    [state] = materialize(value, workspace)
    assert state.after == b'\xef\xbb\xbfx = "\xf0\x9f\x9b\x92"; goal = 1\r\ny = 2\r\n'
    utf8 = from_lsp({"changes": {"m.py": [{"range": {"start": {"line": 0, "character": 12}, "end": {"line": 0, "character": 18}},
                                          "newText": "goal"}]}}, workspace, PositionEncoding.UTF8)
    assert materialize(utf8, workspace)[0].after == state.after


def test_document_changes_resource_operations_and_annotations(workspace: Workspace) -> None:
    root = workspace.root
    lsp = {
        "documentChanges": [
            {"kind": "create", "uri": (root / "new.py").as_uri()},
            {"textDocument": {"uri": (root / "new.py").as_uri(), "version": None},
             "edits": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                        "newText": "print(1)\n", "annotationId": "a"}]},
            {"kind": "rename", "oldUri": (root / "m.py").as_uri(), "newUri": (root / "n.py").as_uri()},
            {"kind": "delete", "uri": (root / "gone.py").as_uri(), "options": {"ignoreIfNotExists": True}},
        ],
        "changeAnnotations": {"a": {"label": "Add a print", "needsConfirmation": True}},
    }
    value = from_lsp(lsp, workspace)
    assert value.annotations["a"].needs_confirmation
    states = {s.path: s for s in materialize(value, workspace)}
    assert states["new.py"].after == b"print(1)\n" and states["new.py"].before is None
    assert states["m.py"].after is None and states["n.py"].after == states["m.py"].before
    summary = {s.path: s.status for s in summarize(list(states.values()))}
    assert summary == {"new.py": "created", "m.py": "deleted", "n.py": "created", "gone.py": "unchanged"}
    assert "+++ b/new.py" in unified_diff(list(states.values())) and "\x1b[" not in unified_diff(list(states.values()))
    assert "\x1b[32m+print(1)\x1b[0m" in unified_diff(list(states.values()), colour=True)


def test_bad_edits_are_refused_clearly(workspace: Workspace) -> None:
    with pytest.raises(MalformedEdit, match="neither 'changes' nor 'documentChanges'"):
        from_lsp({}, workspace)
    with pytest.raises(MalformedEdit, match=r"range.start must be a JSON object"):
        from_lsp({"changes": {"m.py": [{"range": {}}]}}, workspace)
    with pytest.raises(UnsafePath):
        from_lsp({"changes": {"../outside.py": []}}, workspace)
    with pytest.raises(UnsafePath):
        from_lsp({"changes": {"file:///etc/passwd": []}}, workspace)
    stale = from_lsp({"changes": {"m.py": []}, "graft:sha256": {"m.py": "0" * 64}}, workspace)
    with pytest.raises(StalePlan, match="m.py changed since the plan was made; re-run"):
        materialize(stale, workspace)


# -- the preview diff: difflib's format, computed on the lines that differ ------------------------


def _diff_of(before: list[str], after: list[str]) -> list[str]:
    state = FileState("x.py", "".join(f"{line}\n" for line in before).encode(), "".join(f"{line}\n" for line in after).encode(), None)
    text = unified_diff([state])
    return text.split("\n") if text else []


def _patched(before: list[str], diff: list[str]) -> list[str]:
    """``diff`` applied to ``before`` the way patch does: hunk by hunk, context checked."""
    result: list[str] = []
    taken = 0
    for line in diff[2:]:
        if line.startswith("@@"):
            start = int(line.split()[1][1:].split(",")[0])
            length = line.split()[1].split(",")
            first = start - 1 if len(length) == 1 or length[1] != "0" else start
            result += before[taken:first]
            taken = first
        elif line.startswith("+"):
            result.append(line[1:])
        else:
            assert before[taken] == line[1:], "context or removed line does not match"
            taken += 1
            if line.startswith(" "):
                result.append(line[1:])
    return result + before[taken:]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["", "a", "b", "pass", "return x"]), max_size=30),
       st.lists(st.tuples(st.sampled_from(["put", "insert", "delete"]), st.integers(0, 40),
                          st.sampled_from(["", "a", "b", "new"])), max_size=5))
def test_the_diff_applies_back_to_what_was_planned(before: list[str], changes: list[tuple[str, int, str]]) -> None:
    """Repeated lines make several diffs right; whichever is shown must patch before into after."""
    after = list(before)
    for kind, index, line in changes:
        if kind == "insert":
            after.insert(index % (len(after) + 1), line)
        elif after:
            if kind == "put":
                after[index % len(after)] = line
            else:
                del after[index % len(after)]
    diff = _diff_of(before, after)
    assert (diff == []) == (before == after)
    assert _patched(before, diff) == after


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 60), st.sets(st.integers(0, 59), max_size=6), st.integers(0, 3))
def test_a_rename_of_distinct_lines_diffs_exactly_as_difflib(length: int, renamed: set[int], inserted: int) -> None:
    """Code lines are nearly all distinct: there the shortcut (trimmed ends, in-place runs) must
    give difflib's own diff of the whole file, hunk for hunk."""
    before = [f"line_{n} = value_{n}" for n in range(length)]
    after = [line.replace("value", "renamed") if n in renamed else line for n, line in enumerate(before)]
    after[length // 2:length // 2] = [f"added_{n}" for n in range(inserted)]
    expected = list(difflib.unified_diff(before, after, "a/x.py", "b/x.py", lineterm=""))
    assert _diff_of(before, after) == expected


_LINE_TEXT = st.text(alphabet="ab é😀_\x0c\u2028", max_size=8)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_LINE_TEXT, st.sampled_from(["\n", "\r\n", "\r"])), min_size=1, max_size=12),
       st.booleans(), st.booleans(), st.data())
def test_an_edit_within_lines_diffs_as_the_whole_files_do(
    lines: list[tuple[str, str]], last_line_ends: bool, bom: bool, data: st.DataObject,
) -> None:
    """A rename's diff is read from the changed lines alone (the lines kept by the edit); it must
    be the diff of the whole files, byte for byte: CRLF and lone CR, characters beyond ASCII and
    the BMP, a BOM, and breaks that only ``str.splitlines`` knows (form feed, U+2028), which send
    it back to the whole files, included; so are text put on the line after a final break and a
    last line emptied, which change the number of lines."""
    import tempfile
    from dataclasses import replace

    text = "".join(content + ending for content, ending in lines)
    if not last_line_ends:
        text = text[: -len(lines[-1][1])]
    starts = line_starts(text)
    edits = []
    for number in range(len(starts)):
        if data.draw(st.booleans()):
            content_end = (starts[number + 1] if number + 1 < len(starts) else len(text)) - starts[number]
            content = text[starts[number]:starts[number] + content_end].rstrip("\r\n")
            start = data.draw(st.integers(0, len(content)))
            end = data.draw(st.integers(start, len(content)))
            edits.append(edit(number, start, end, data.draw(st.text(alphabet="xé😀\x0c", max_size=3))))
    with tempfile.TemporaryDirectory() as folder:
        raw = ("\ufeff" if bom else "").encode() + text.encode()
        (Path(folder) / "m.py").write_bytes(raw)
        workspace = Workspace(Path(folder))
        change = FileChange("m.py", tuple(edits), workspace.read("m.py").sha256)
        state = materialize(WorkspaceEdit((change,)), workspace)[0]
    assert state.in_place is not None
    assert unified_diff([state]) == unified_diff([replace(state, in_place=None)])


def test_a_rename_diff_reads_only_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut above is taken on a plain rename: the whole files are never split (the
    property test would hold without the shortcut)."""
    from engine.edits import diff as diffs
    from engine.edits.materialize import InPlaceLines

    text = "a = 1\nb = a\n"
    state = FileState("x.py", text.encode(), b"a = 1\nb = c\n", None,
                      InPlaceLines(text, line_starts(text), {1: "b = c"}, utf8=True))
    monkeypatch.setattr(diffs, "_lines", lambda data: pytest.fail("a whole file was split into lines"))
    assert unified_diff([state]) == "\n".join(difflib.unified_diff(["a = 1", "b = a"], ["a = 1", "b = c"], "a/x.py", "b/x.py",
                                                                    lineterm=""))

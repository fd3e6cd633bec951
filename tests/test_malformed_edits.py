"""Whatever a WorkspaceEdit's JSON holds, the result is a typed error or a correct edit: never a
traceback, never a change (issue 19, item 2)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.edits.apply import Transactions
from engine.edits.lsp_json import MalformedEdit, from_lsp
from engine.edits.materialize import materialize
from engine.errors import GraftError
from engine.positions import PositionEncoding
from engine.workspace import Workspace
from tests.conftest import tree_fingerprint

TEXT = "alpha = 1\nbeta = 'é€😀'\n\ngamma = [\n    3,\n]\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text(TEXT, encoding="utf-8")
    return tmp_path


def edit(start: Any, end: Any, new_text: Any = "X") -> dict[str, Any]:
    return {"changes": {"m.py": [{"range": {"start": start, "end": end}, "newText": new_text}]}}


def at(line: Any, character: Any) -> dict[str, Any]:
    return {"line": line, "character": character}


MALFORMED = {
    "reversed range": edit(at(1, 4), at(0, 2)),
    "negative line": edit(at(-1, 0), at(0, 1)),
    "negative character": edit(at(0, -3), at(0, 1)),
    "newText null": edit(at(0, 0), at(0, 1), None),
    "newText a number": edit(at(0, 0), at(0, 1), 42),
    "float line": edit(at(0.5, 0), at(0, 1)),
    "string line": edit(at("0", 0), at(0, 1)),
    "boolean character": edit(at(0, True), at(0, 1)),
    "edits an int": {"changes": {"m.py": 3}},
    "changes a list": {"changes": [["m.py", []]]},
    "create without uri": {"documentChanges": [{"kind": "create"}]},
    "rename without newUri": {"documentChanges": [{"kind": "rename", "oldUri": "m.py"}]},
    "options a string": {"documentChanges": [{"kind": "create", "uri": "n.py", "options": "overwrite"}]},
    "graft:sha256 a list": {**edit(at(0, 0), at(0, 1)), "graft:sha256": ["abc"]},
    "changeAnnotations a list": {**edit(at(0, 0), at(0, 1)), "changeAnnotations": ["x"]},
    "unknown kind": {"documentChanges": [{"kind": "chmod", "uri": "m.py"}]},
    "textDocument without uri": {"documentChanges": [{"textDocument": {"version": 1}, "edits": []}]},
    "version a string": {"documentChanges": [{"textDocument": {"uri": "m.py", "version": "1"}, "edits": []}]},
    "not an object": [1, 2, 3],
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_each_malformed_shape_is_refused_as_malformed_edit(root: Path, name: str) -> None:
    before = tree_fingerprint(root)
    with pytest.raises(MalformedEdit):
        Transactions(Workspace(root)).apply(from_lsp(MALFORMED[name], Workspace(root)))
    assert tree_fingerprint(root) == before


def test_the_cli_answers_malformed_edit_in_json(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from frontends.cli.main import main

    (root / "edit.json").write_text(json.dumps(MALFORMED["reversed range"]))
    assert main(["--root", str(root), "--json", "--source", "ast", "apply", str(root / "edit.json"), "--apply"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["error"]["code"] == "malformed_edit" and "ends (0:2) before it starts (1:4)" in out["error"]["message"]


# -- the fuzz: random shapes, and random ranges against random files ------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 20) | st.floats(allow_nan=False, width=16) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["changes", "documentChanges", "range", "start", "end", "line", "character", "newText", "uri",
                         "kind", "edits", "textDocument", "m.py", "options", "graft:sha256", "changeAnnotations"]),
        inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSON)
def test_random_shapes_are_a_typed_error_or_an_edit(root: Path, data: Any) -> None:
    before = tree_fingerprint(root)
    try:
        materialize(from_lsp(data, Workspace(root)), Workspace(root))
    except GraftError:
        pass
    assert tree_fingerprint(root) == before


def _references(text: str, start: tuple[int, int], end: tuple[int, int], new: str) -> set[str]:
    """The edit applied the slow, obvious way: UTF-16 units counted per line, lines past the end
    and characters past a line's end clamped, as the protocol says. A position inside a surrogate
    pair, which the protocol leaves undefined, is rounded up past the pair (engine/positions.py
    says so; one answer, not either)."""
    lines = text.split("\n")

    def offsets(line: int, character: int) -> set[int]:
        if line >= len(lines):
            return {len(text)}
        units, column = 0, 0
        base = sum(len(l) + 1 for l in lines[:line])
        for char in lines[line]:
            width = 2 if ord(char) > 0xFFFF else 1
            if units + width > character:
                inside_pair = units < character < units + width
                return {base + column + 1} if inside_pair else {base + column}
            units += width
            column += 1
        return {base + column}

    return {text[:a] + new + text[max(a, b):] for a in offsets(*start) for b in offsets(*end)}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.text(alphabet=st.sampled_from("ab é€😀\n"), max_size=30),
       points=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 8)), min_size=2, max_size=2),
       new=st.text(alphabet=st.sampled_from("xy\n😀"), max_size=3))
def test_random_ranges_against_random_files_are_refused_or_exact(root: Path, body: str, points: list[tuple[int, int]], new: str) -> None:
    (root / "f.txt").write_text(body, encoding="utf-8", newline="")
    data = (root / "f.txt").read_bytes()
    start, end = points
    change = {"changes": {"f.txt": [{"range": {"start": at(*start), "end": at(*end)}, "newText": new}]},
              "graft:sha256": {"f.txt": hashlib.sha256(data).hexdigest()}}
    try:
        states = materialize(from_lsp(change, Workspace(root), PositionEncoding.UTF16), Workspace(root))
    except GraftError:
        assert end < start or "\r" in body, "a well-formed edit was refused"
        return
    assert end >= start
    after = {s.path: s.after for s in states}.get("f.txt", data)
    assert after is not None and after.decode("utf-8") in _references(body, start, end, new)


def test_an_edit_without_a_base_says_so(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 19, item 3: with no base hash, an edit applies to whatever the file now holds; the
    preview says so rather than staying silent."""
    from frontends.cli.main import main

    (root / "edit.json").write_text(json.dumps(edit(at(0, 0), at(0, 5), "delta")))
    assert main(["--root", str(root), "--json", "--source", "ast", "apply", str(root / "edit.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["warnings"] and "no base for m.py" in out["warnings"][0]
    based = {**edit(at(0, 0), at(0, 5), "delta"), "graft:sha256": {"m.py": hashlib.sha256((root / "m.py").read_bytes()).hexdigest()}}
    (root / "edit.json").write_text(json.dumps(based))
    assert main(["--root", str(root), "--json", "--source", "ast", "apply", str(root / "edit.json")]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []

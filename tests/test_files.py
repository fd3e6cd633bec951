"""The code-aware file tools (engine.files) through the per-client facade: read-before-write,
the three ways to address an edit, line endings and pasted gutters, search and replace."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine
from engine.client import EngineClient
from engine.files import ChangedSinceRead, EditRequest, NoUniqueMatch, NotRead
from engine.workspace import Workspace


@pytest.fixture()
def client(tmp_path: Path) -> EngineClient:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "app.py").write_bytes(b"import os\r\n\r\n\r\ndef main():\r\n    return os.getcwd()\r\n\r\n\r\ndef other():\r\n    return 2\r\n")
    return EngineClient(Engine(Workspace(tmp_path)))


def test_a_blind_or_stale_write_is_refused_and_nothing_changes(client: EngineClient) -> None:
    path = client.engine.workspace.root / "app.py"
    before = path.read_bytes()
    with pytest.raises(NotRead):
        client.write_file("app.py", "x = 1\n", apply=True)
    client.read_file("app.py")
    path.write_bytes(before + b"# edited elsewhere\r\n")
    with pytest.raises(ChangedSinceRead):
        client.edit_file(EditRequest("app.py", "y", old_string="return 2"), apply=True)
    assert path.read_bytes() == before + b"# edited elsewhere\r\n"
    done = client.write_file("app.py", "x = 1\n", overwrite_changed=True, apply=True)
    assert done.applied and path.read_text() == "x = 1\n"


def test_old_string_with_lf_matches_a_crlf_file_and_keeps_crlf(client: EngineClient) -> None:
    client.read_file("app.py")
    result = client.edit_file(EditRequest("app.py", "def main():\n    return os.getcwd() + '/'", old_string="def main():\n    return os.getcwd()"), apply=True)
    assert result.applied
    data = (client.engine.workspace.root / "app.py").read_bytes()
    assert b"return os.getcwd() + '/'\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_a_pasted_gutter_is_stripped_from_both_strings(client: EngineClient) -> None:
    view = client.read_file("app.py")
    pasted = "\n".join(line for line in view.render().splitlines() if "def other" in line or "return 2" in line)
    replacement = pasted.replace("return 2", "return 3")
    client.edit_file(EditRequest("app.py", replacement, old_string=pasted), apply=True)
    assert b"def other():\r\n    return 3\r\n" in (client.engine.workspace.root / "app.py").read_bytes()


def test_anchor_pair_and_line_range(client: EngineClient) -> None:
    client.read_file("app.py")
    client.edit_file(EditRequest("app.py", "def main():\n    return '.'", start_anchor="def main", end_anchor="getcwd"), apply=True)
    assert "return '.'" in (client.engine.workspace.root / "app.py").read_text()
    client.edit_file(EditRequest("app.py", "def other():\n    return 4", start_line=8, end_line=9), apply=True)
    text = (client.engine.workspace.root / "app.py").read_text()
    assert text.endswith("def other():\n    return 4\n") and "return 2" not in text


def test_ambiguous_or_missing_old_string_is_refused(client: EngineClient) -> None:
    client.read_file("app.py")
    with pytest.raises(NoUniqueMatch, match="matches 2 times"):
        client.edit_file(EditRequest("app.py", "x", old_string="return"))
    with pytest.raises(NoUniqueMatch, match="matches 0 times"):
        client.edit_file(EditRequest("app.py", "x", old_string="nowhere"))


def test_search_names_the_enclosing_symbol_and_find_replace_previews(client: EngineClient) -> None:
    hits, total = client.search("return", glob="*.py")
    assert total == 2 and {h.symbol for h in hits} == {"main", "other"}
    preview = client.find_replace(r"return (\d)", r"return \1\1", regex=True, glob="*.py")
    assert not preview.applied and "+    return 22" in preview.diff

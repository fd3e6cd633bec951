"""A journal or history record is acted on only when this user's own codegraft wrote it for this
workspace, and a restore never grants a file privileges it does not have (issue 38, item 1).

The attack these guard against: a workspace ships a ``.graft/journal`` (or another user plants
one) naming a file of the workspace with mode 6755; root runs a read-only command, recovery
"rolls back" the planted transaction, and the file becomes setuid root."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.choices import SourcePreference
from engine.edits.apply import Transactions, UndoRefused
from engine.edits.journal_trust import StateHomeUnusable, restorable_mode, seal, user_state_home, workspace_secret
from engine.workspace import Workspace
from tests.conftest import REPO
from tests.journal_helpers import manifest, sealed

TRANSACTION = "20260101T000000.000000-planted"
PAYLOAD = b"#!/bin/sh\nid -u\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "a.py").write_text("def f():\n    return 1\n")
    (folder / "tool.sh").write_bytes(b"echo harmless\n")
    os.chmod(folder / "tool.sh", 0o755)
    return folder


def _plant_journal(root: Path, mode: int, *, text: str | None = None, where: str = "journal",
                   committed: bool = False, target: str = "tool.sh") -> Path:
    """An uncommitted transaction (journal/) or a committed one (history/) whose before-image of
    ``target`` is PAYLOAD with ``mode``; ``text`` is the manifest, unsealed unless given."""
    folder = root / ".graft" / where / TRANSACTION
    folder.mkdir(parents=True)
    (folder / "before").mkdir()
    (folder / "before.pack").write_bytes(PAYLOAD)
    current = (root / target).read_bytes()
    entries = [{"path": target, "before_sha256": _sha(PAYLOAD), "after_sha256": _sha(current), "mode": mode,
                "image": [0, len(PAYLOAD)]}]
    (folder / "manifest.json").write_text(text if text is not None else json.dumps(manifest(entries, TRANSACTION)))
    if committed:
        (folder / "COMMITTED").write_text("")
    return folder


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _graft(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "frontends.cli.main", "--root", str(root), "--no-daemon", "--json", *args]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False, timeout=120)


# -- shipped or planted records are never acted on ---------------------------------------------


def test_a_shipped_journal_never_makes_a_file_setuid_on_a_read_only_command(root: Path) -> None:
    _plant_journal(root, 0o6755)
    before = (root / "tool.sh").read_bytes()
    result = _graft(root, "--source", "ast", "find", "a.py:f")
    assert result.returncode == 0, result.stderr
    assert (root / "tool.sh").read_bytes() == before and _mode(root / "tool.sh") == 0o755
    assert "not written by your own codegraft" in result.stderr and "moved aside" in result.stderr
    assert not (root / ".graft" / "journal" / TRANSACTION).exists()
    [moved] = list((root / ".graft" / "quarantine").iterdir())
    assert moved.name.endswith(TRANSACTION)


def test_a_shipped_history_entry_is_never_undone(root: Path) -> None:
    _plant_journal(root, 0o4777, where="history", committed=True)
    before = (root / "tool.sh").read_bytes()
    result = _graft(root, "undo")
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"]["code"] == "undo_refused"
    assert (root / "tool.sh").read_bytes() == before and _mode(root / "tool.sh") == 0o755


def test_recover_reports_the_untrusted_record_with_its_code(root: Path) -> None:
    _plant_journal(root, 0o6755)
    [report] = Transactions(Workspace(root)).recover()
    assert (report.action, report.code, report.files) == ("quarantined", "untrusted_journal", [])
    assert "moved aside" in report.message()
    assert _mode(root / "tool.sh") == 0o755


def test_another_users_record_is_not_trusted_even_with_the_right_key(root: Path) -> None:
    """The seal covers the creator's uid: a record that names another creator is refused, whatever it carries."""
    fields = manifest([{"path": "tool.sh", "before_sha256": _sha(PAYLOAD), "after_sha256": None, "mode": 0o755,
                        "image": [0, len(PAYLOAD)]}], TRANSACTION)
    fields["creator_uid"] = os.getuid() + 1
    fields["seal"] = seal(fields, workspace_secret(root))
    _plant_journal(root, 0o755, text=json.dumps(fields))
    [report] = Transactions(Workspace(root)).recover()
    assert report.code == "untrusted_journal" and "creator" in report.reason
    assert (root / "tool.sh").read_bytes() == b"echo harmless\n"


def test_a_sealed_record_changed_afterwards_is_not_trusted(root: Path) -> None:
    entries = [{"path": "tool.sh", "before_sha256": _sha(PAYLOAD), "after_sha256": None, "mode": 0o755, "image": [0, len(PAYLOAD)]}]
    tampered = json.loads(sealed(root, manifest(entries, TRANSACTION)))
    tampered["entries"][0]["mode"] = 0o6755
    _plant_journal(root, 0o755, text=json.dumps(tampered))
    [report] = Transactions(Workspace(root)).recover()
    assert report.code == "untrusted_journal" and "seal does not match" in report.reason
    assert _mode(root / "tool.sh") == 0o755


def test_a_record_sealed_for_another_workspace_is_not_trusted_here(root: Path, tmp_path: Path) -> None:
    """A workspace copied with its .graft (or a record moved between checkouts) is not this one's."""
    other = tmp_path / "other"
    other.mkdir()
    entries = [{"path": "tool.sh", "before_sha256": _sha(PAYLOAD), "after_sha256": None, "mode": 0o755, "image": [0, len(PAYLOAD)]}]
    _plant_journal(root, 0o755, text=sealed(other, manifest(entries, TRANSACTION)))
    [report] = Transactions(Workspace(root)).recover()
    assert report.code == "untrusted_journal"


# -- this user's own records: restored, but never with added privileges -------------------------


@pytest.mark.parametrize("recorded, current, expected", [
    (0o6755, 0o755, 0o755),    # setuid and setgid are never added
    (0o1777, 0o755, 0o755),    # nor sticky, nor write for group and others
    (0o664, 0o644, 0o644),
    (0o4755, 0o4755, 0o4755),  # what the file already has is kept
    (0o775, 0o775, 0o775),
    (0o600, 0o644, 0o600),     # bits may always be taken away
])
def test_an_own_interrupted_transaction_is_rolled_back_without_added_privileges(root: Path, recorded: int, current: int,
                                                                                  expected: int) -> None:
    os.chmod(root / "tool.sh", current)
    entries = [{"path": "tool.sh", "before_sha256": _sha(PAYLOAD), "after_sha256": None, "mode": recorded, "image": [0, len(PAYLOAD)]}]
    _plant_journal(root, recorded, text=sealed(root, manifest(entries, TRANSACTION)))
    [report] = Transactions(Workspace(root)).recover()
    assert report.action == "rolled-back"
    assert (root / "tool.sh").read_bytes() == PAYLOAD and _mode(root / "tool.sh") == expected


def test_an_own_history_entry_is_undone_without_added_privileges(root: Path) -> None:
    current = (root / "tool.sh").read_bytes()
    entries = [{"path": "tool.sh", "before_sha256": _sha(PAYLOAD), "after_sha256": _sha(current), "mode": 0o4777,
                "image": [0, len(PAYLOAD)]}]
    _plant_journal(root, 0o4777, where="history", committed=True, text=sealed(root, manifest(entries, TRANSACTION)))
    Transactions(Workspace(root)).undo()
    assert (root / "tool.sh").read_bytes() == PAYLOAD and _mode(root / "tool.sh") == 0o755


def test_a_file_that_is_gone_is_restored_with_no_privileged_bits() -> None:
    assert restorable_mode(0o6775, Path("/nonexistent/graft/file")) == 0o755
    assert restorable_mode(None, Path("/nonexistent/graft/file")) is None


def test_a_real_apply_and_its_undo_still_work_and_keep_modes(root: Path) -> None:
    """The seal is written by every apply: an ordinary round trip is untouched by the checks."""
    from engine.edits.model import FileChange, WorkspaceEdit
    from engine.answers import TextEdit
    from engine.positions import Position, Range
    data = (root / "tool.sh").read_bytes()
    edit = WorkspaceEdit((FileChange("tool.sh", (TextEdit(Range(Position(0, 5), Position(0, 13)), "changed"),), _sha(data)),))
    transactions = Transactions(Workspace(root))
    applied = transactions.apply(edit)
    assert (root / "tool.sh").read_bytes() == b"echo changed\n" and _mode(root / "tool.sh") == 0o755
    assert applied.transaction is not None
    record = json.loads((root / ".graft" / "history" / applied.transaction / "manifest.json").read_text())
    assert record["creator_uid"] == os.getuid() and len(record["seal"]) == 64
    Transactions(Workspace(root)).undo()
    assert (root / "tool.sh").read_bytes() == data and _mode(root / "tool.sh") == 0o755


# -- the key itself ------------------------------------------------------------------------------


def test_the_key_lives_outside_the_workspace_and_is_private(root: Path) -> None:
    workspace_secret(root)
    keys = list((user_state_home() / "workspaces").glob("*/journal.key"))
    assert keys and all(not str(k).startswith(str(root)) for k in keys)
    for key in keys:
        assert _mode(key) == 0o600 and _mode(key.parent) == 0o700


def test_a_key_others_can_read_is_refused(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    workspace_secret(root)
    [key] = list((tmp_path / "state" / "codegraft" / "workspaces").glob("*/journal.key"))
    os.chmod(key, 0o644)
    with pytest.raises(StateHomeUnusable, match="only you can read"):
        workspace_secret(root)


def test_an_unwritable_state_home_refuses_the_apply_and_writes_nothing(root: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "not-a-folder"))
    from engine.edits.model import FileChange, WorkspaceEdit
    from engine.answers import TextEdit
    from engine.positions import Position, Range
    data = (root / "a.py").read_bytes()
    edit = WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(1, 11), Position(1, 12)), "2"),), _sha(data)),))
    with pytest.raises(StateHomeUnusable, match="XDG_STATE_HOME"):
        Transactions(Workspace(root)).apply(edit)
    assert (root / "a.py").read_bytes() == data


# -- a fuzz test of the reader with hostile records ---------------------------------------------

_paths = st.sampled_from(["tool.sh", "a.py", "../outside.txt", "/etc/passwd", ".git/config", ".graft/locks/x", "sub/new.py",
                          "link.py", "", "a.py/../../x"])
_modes = st.one_of(st.none(), st.integers(0, 0o7777), st.sampled_from([0o6755, 0o4777, 0o2775, 0o1777, -1, 0o10000, "755"]))
_hashes = st.one_of(st.none(), st.sampled_from([_sha(PAYLOAD), _sha(b""), "0" * 64, "short"]))
_images = st.one_of(st.none(), st.tuples(st.integers(-2, 40), st.integers(-2, 40)).map(list))
_entries = st.fixed_dictionaries({"path": _paths, "before_sha256": _hashes, "after_sha256": _hashes, "mode": _modes, "image": _images})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(_entries, max_size=3), seal_it=st.booleans(), committed=st.booleans(),
       image_is_link=st.booleans(), where=st.sampled_from(["journal", "history"]))
def test_fuzzed_records_never_write_outside_never_grant_privileges_never_crash(
        tmp_path_factory: pytest.TempPathFactory, entries: list[dict[str, Any]], seal_it: bool, committed: bool,
        image_is_link: bool, where: str) -> None:
    base = tmp_path_factory.mktemp("fuzz")
    root, outside = base / "workspace", base / "outside.txt"
    root.mkdir()
    outside.write_bytes(b"outside\n")
    (root / "a.py").write_text("x = 1\n")
    (root / "tool.sh").write_bytes(b"echo harmless\n")
    os.chmod(root / "tool.sh", 0o755)
    os.symlink(outside, root / "link.py")
    folder = root / ".graft" / where / TRANSACTION
    (folder / "before").mkdir(parents=True)
    if image_is_link:
        os.symlink(outside, folder / "before.pack")
    else:
        (folder / "before.pack").write_bytes(PAYLOAD)
    fields = manifest(entries, TRANSACTION)
    (folder / "manifest.json").write_text(sealed(root, fields) if seal_it else json.dumps(fields))
    if committed:
        (folder / "COMMITTED").write_text("")
    modes_before = {p: _mode(root / p) for p in ("a.py", "tool.sh")}
    transactions = Transactions(Workspace(root))
    transactions.recover()
    try:
        transactions.undo()
    except UndoRefused:
        pass
    assert outside.read_bytes() == b"outside\n" and (root / "link.py").is_symlink()
    assert not (root / ".git").exists()
    for path, mode in modes_before.items():
        if (root / path).exists():
            assert _mode(root / path) & ~mode & 0o7022 == 0, f"{path} gained privileged bits"
    for created in root.rglob("*"):
        if created.is_file() and not created.is_symlink() and ".graft" not in created.parts:
            assert _mode(created) & 0o7022 == 0 or created.name in modes_before
    if not seal_it:
        # Nobody's seal: nothing of the workspace is touched at all.
        assert (root / "a.py").read_text() == "x = 1\n" and (root / "tool.sh").read_bytes() == b"echo harmless\n"


def test_a_fleet_run_on_a_foreign_repository_never_acts_on_its_shipped_journal(root: Path, tmp_path: Path) -> None:
    """Fleet tasks open each repository as every front end does: the same refusal holds there."""
    from engine.fleet import FleetOptions, run
    _plant_journal(root, 0o6755)
    rows = run([{"op": "rename", "address": "a.py:f", "new_name": "g"}], [root], out=tmp_path / "out",
               options=FleetOptions(source=SourcePreference.AST), executor="local")
    assert [row.status for row in rows] == ["planned"]
    assert (root / "tool.sh").read_bytes() == b"echo harmless\n" and _mode(root / "tool.sh") == 0o755
    assert not (root / ".graft" / "journal" / TRANSACTION).exists()

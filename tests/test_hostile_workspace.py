"""A workspace is not trusted: a cloned repository can ship its own ``.graft/`` and ``.git/config``
(issue 19, items 4 and 5). Nothing in them may make codegraft read or write outside the root,
write into ``.git`` or ``.graft``, or run a program the repository names."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.api import Engine, SourcePreference
from engine.edits.apply import Transactions, UndoRefused
from engine.edits.model import CreateFile, FileChange, WorkspaceEdit
from engine.errors import ProtectedPath
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.state_folder import UnsafeStateFolder
from engine.workspace import Workspace, WorkspaceConfig
from tests.conftest import REPO
from tests.journal_helpers import manifest as _unsealed, sealed

TRANSACTION = "20260101T000000.000000-crafted"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("the secret outside the workspace\n")
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "a.py").write_text("x = 1\n")
    return folder


def _manifest(entries: list[dict[str, Any]], transaction: str = TRANSACTION) -> str:
    return json.dumps(_unsealed(entries, transaction))


def _sealed(root: Path, entries: list[dict[str, Any]], transaction: str = TRANSACTION) -> str:
    """A record this user's codegraft could have written: the checks below the seal still hold for it."""
    return sealed(root, _unsealed(entries, transaction))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _edit_a(root: Path, new: str) -> WorkspaceEdit:
    data = (root / "a.py").read_bytes()
    return WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(0, 4), Position(0, 5)), new),), _sha(data)),))


# -- item 4: .graft is not trusted -------------------------------------------------------------


@pytest.mark.parametrize("image_kind", ["before/0", "before.pack", "before folder"])
def test_a_before_image_that_is_a_symlink_never_brings_an_outside_file_in(root: Path, outside: Path, image_kind: str) -> None:
    secret = (outside / "secret.txt").read_bytes()
    journal = root / ".graft" / "journal" / TRANSACTION
    journal.mkdir(parents=True)
    entry: dict[str, Any] = {"path": "a.py", "before_sha256": _sha(secret), "after_sha256": None, "mode": 0o644}
    if image_kind == "before/0":
        (journal / "before").mkdir()
        os.symlink(outside / "secret.txt", journal / "before" / "0")
    elif image_kind == "before.pack":
        os.symlink(outside / "secret.txt", journal / "before.pack")
        entry["image"] = [0, len(secret)]
    else:
        (outside / "images").mkdir()
        (outside / "images" / "0").write_bytes(secret)
        os.symlink(outside / "images", journal / "before")
    (journal / "manifest.json").write_text(_sealed(root, [entry]))
    engine = Engine(Workspace(root))  # recovery runs on every start
    engine.close()
    assert (root / "a.py").read_text() == "x = 1\n"
    [report] = engine.recovered
    assert report.action == "quarantined" and report.files == ["a.py"] and "moved aside" in report.reason
    assert not journal.exists()
    # Moved aside, it blocks nothing: the next command starts clean and applies.
    engine = Engine(Workspace(root))
    assert engine.recovered == []
    engine.edits().apply(_edit_a(root, "2"))
    engine.close()
    assert (root / "a.py").read_text() == "x = 2\n"


def test_a_transaction_folder_that_is_a_symlink_creates_nothing_outside(root: Path, outside: Path) -> None:
    target = outside / "transaction"
    target.mkdir()
    (target / "manifest.json").write_text(_manifest([{"path": "new.py", "before_sha256": None, "after_sha256": None, "mode": 0o644}]))
    (root / ".graft" / "journal").mkdir(parents=True)
    os.symlink(target, root / ".graft" / "journal" / TRANSACTION)
    before = _listing(outside)
    engine = Engine(Workspace(root))
    engine.close()
    assert _listing(outside) == before  # no lock file, no rollback, nothing removed
    [report] = engine.recovered
    assert report.action == "quarantined" and "is a link" in report.reason


def test_a_state_folder_that_is_a_symlink_is_refused_and_nothing_is_written_outside(root: Path, outside: Path) -> None:
    os.symlink(outside, root / ".graft")
    before = _listing(outside)
    with pytest.raises(UnsafeStateFolder, match=r"is a symlink .*Remove the link"):
        Engine(Workspace(root))
    with pytest.raises(UnsafeStateFolder):
        Transactions(Workspace(root)).apply(_edit_a(root, "2"))
    assert _listing(outside) == before
    assert (root / "a.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("folder", ["cache", "locks", "history", "scratch", "quarantine"])
def test_a_symlinked_subfolder_is_moved_aside_and_a_real_one_used(root: Path, outside: Path, folder: str) -> None:
    (root / ".graft").mkdir()
    os.symlink(outside, root / ".graft" / folder)
    before = _listing(outside)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.index()
    engine.edits().apply(_edit_a(root, "2"))
    engine.edits().undo()
    engine.close()
    assert _listing(outside) == before
    assert [r.action for r in engine.recovered] == ["quarantined"]
    assert not (root / ".graft" / folder).is_symlink()
    assert (root / ".graft" / folder).is_dir() or folder in ("scratch", "quarantine")  # made on first use only


def test_a_cache_holding_a_symlink_is_moved_aside(root: Path, outside: Path) -> None:
    (root / ".graft" / "cache").mkdir(parents=True)
    os.symlink(outside / "cache.db", root / ".graft" / "cache" / "cache.db")
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.index()
    engine.close()
    assert not (outside / "cache.db").exists()
    assert [r.action for r in engine.recovered] == ["quarantined"]


def test_a_crafted_history_record_is_moved_aside_not_undone(root: Path, outside: Path) -> None:
    history = root / ".graft" / "history" / TRANSACTION
    (history / "before").mkdir(parents=True)
    os.symlink(outside / "secret.txt", history / "before" / "0")
    (history / "COMMITTED").write_text("")
    current = (root / "a.py").read_bytes()
    secret = (outside / "secret.txt").read_bytes()
    (history / "manifest.json").write_text(_sealed(root, [
        {"path": "a.py", "before_sha256": _sha(secret), "after_sha256": _sha(current), "mode": 0o644}]))
    transactions = Transactions(Workspace(root))
    with pytest.raises(UndoRefused, match="missing or changed"):
        transactions.undo()
    assert (root / "a.py").read_bytes() == current
    # A record naming a path in .git is moved aside, and undo then has nothing left to do.
    (history / "manifest.json").write_text(_sealed(root, [
        {"path": ".git/config", "before_sha256": _sha(secret), "after_sha256": None, "mode": 0o644}]))
    with pytest.raises(UndoRefused, match="moved aside"):
        transactions.undo()
    with pytest.raises(UndoRefused, match="nothing to undo"):
        Transactions(Workspace(root)).undo()
    assert not (root / ".git").exists()


@pytest.mark.parametrize("manifest", [
    "[]", "{}", "not json",
    _manifest([{"path": "a.py", "before_sha256": "x", "after_sha256": None, "mode": 420}]),
    _manifest([{"path": "a.py", "before_sha256": None, "after_sha256": None, "mode": "rwx"}]),
    _manifest([{"path": 7, "before_sha256": None, "after_sha256": None, "mode": 420}]),
    _manifest([{"path": "a.py", "before_sha256": None, "after_sha256": None, "mode": 420, "image": [-1, 3]}]),
    _manifest([], transaction="another-id"),
])
def test_a_malformed_manifest_is_quarantined_and_blocks_nothing(root: Path, manifest: str) -> None:
    journal = root / ".graft" / "journal" / TRANSACTION
    journal.mkdir(parents=True)
    (journal / "manifest.json").write_text(manifest)
    [report] = Transactions(Workspace(root)).recover()
    assert report.action == "quarantined"
    assert Transactions(Workspace(root)).recover() == []
    assert (root / "a.py").read_text() == "x = 1\n"


def test_the_cli_reports_a_quarantine_once_and_goes_on(root: Path) -> None:
    journal = root / ".graft" / "journal" / TRANSACTION
    journal.mkdir(parents=True)
    (journal / "manifest.json").write_text("{")
    graft = [sys.executable, "-m", "frontends.cli.main", "--root", str(root), "--source", "ast", "outline", "a.py"]
    first = subprocess.run(graft, cwd=REPO, capture_output=True, text=True, check=False)
    second = subprocess.run(graft, cwd=REPO, capture_output=True, text=True, check=False)
    assert first.returncode == 0 and "could not be trusted" in first.stderr and "moved aside" in first.stderr
    assert second.returncode == 0 and "could not be trusted" not in second.stderr


# -- item 5: no writes into .git or .graft, and git runs nothing the repository names ----------


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", ".graft/journal/x/manifest.json", "sub/.git/config", ".GIT/config"])
def test_no_edit_writes_into_version_control_or_state_folders(root: Path, path: str) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    before = _listing(root)
    with pytest.raises(ProtectedPath):
        Transactions(Workspace(root)).apply(WorkspaceEdit((CreateFile(path, "[core]\n\tfsmonitor = touch owned\n", overwrite=True),)))
    assert _listing(root) == before


def test_a_symlink_into_git_is_seen_for_what_it_is(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    os.symlink(root / ".git" / "config", root / "settings.cfg")
    data = (root / "settings.cfg").read_bytes()
    change = FileChange("settings.cfg", (TextEdit(Range(Position(0, 0), Position(0, 0)), "[x]\n"),), _sha(data))
    with pytest.raises(ProtectedPath, match=r"\.git/config lies in \.git/"):
        Transactions(Workspace(root)).apply(WorkspaceEdit((change,)))
    assert (root / ".git" / "config").read_text() == "[core]\n"


def test_mcp_write_file_into_git_or_graft_is_refused(root: Path) -> None:
    from mcp.client import Client

    from frontends.mcp_server import build_server

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    config_before = (root / ".git" / "config").read_text()
    engine = Engine(Workspace(root), source=SourcePreference.AST)

    async def steps() -> list[Any]:
        async with Client(build_server(engine)) as client:
            await client.call_tool("read_file", {"path": ".git/config"})
            return [
                await client.call_tool("write_file", {"path": path, "content": "[core]\n\tfsmonitor = touch owned\n", "apply": True,
                                                      "overwrite_changed": True})
                for path in (".git/config", ".git/hooks/post-index-change", ".graft/journal/x")
            ]

    try:
        results = asyncio.run(steps())
    finally:
        engine.close()
    assert [r.structured_content["error"]["code"] for r in results] == ["protected_path"] * 3
    assert (root / ".git" / "config").read_text() == config_before
    assert not (root / ".git" / "hooks" / "post-index-change").exists()
    assert not (root / ".graft" / "journal" / "x").exists()


def test_the_dirty_check_runs_no_program_the_repository_names(root: Path, tmp_path: Path) -> None:
    """A repository whose config names an fsmonitor, a filter driver and an index hook: git
    status runs all three unless told not to."""
    from process_tools.adapter import ProcessTools

    ran = tmp_path / "ran"
    ran.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitattributes").write_text("*.py filter=hostile\n")
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "initial"], cwd=root, check=True)
    for key, marker in (("core.fsmonitor", "fsmonitor"), ("filter.hostile.clean", "filter")):
        subprocess.run(["git", "config", key, f"sh -c 'touch {ran / marker}; cat'"], cwd=root, check=True)
    hook = root / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {ran / 'hook'}\n")
    hook.chmod(0o755)
    (root / "a.py").write_text("x = 2\n")
    os.utime(root / "a.py", (0, 0))  # stat differs from the index: git must look at the content
    transactions = Transactions(Workspace(root), dirty_check=ProcessTools(Workspace(root)).dirty_files)
    with pytest.raises(Exception, match="uncommitted changes in a.py"):
        transactions.apply(_edit_a(root, "3"))
    assert sorted(p.name for p in ran.iterdir()) == []
    shutil.rmtree(ran)


class _RunsACommand:
    """What a crafted cache entry would hold: unpickling it runs a command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


class _StartsAProcess(_RunsACommand):
    """The same through a class (subprocess.Popen), which a check for "classes only" lets by:
    only the cache's list of its own modules stops it."""

    def __reduce__(self) -> tuple[Any, tuple[list[str]]]:  # type: ignore[override]
        return subprocess.Popen, (["touch", str(self.marker)],)


@pytest.mark.parametrize("crafted", [_RunsACommand, _StartsAProcess], ids=["function", "class"])
def test_a_crafted_cache_runs_nothing_and_touches_nothing_outside(root: Path, outside: Path, crafted: type[_RunsACommand]) -> None:
    import diskcache

    (root / "b.py").write_text("def f():\n    return 1\n")
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.index()
    engine.close()
    marker, victim = outside / "ran", outside / "victim.val"
    victim.write_text("a file outside the workspace\n")
    folder = root / ".graft" / "cache"
    with diskcache.Cache(str(folder)) as cache:  # diskcache's own pickler, as a crafted cache would be written
        keys = [k for k in cache.iterkeys() if isinstance(k, str)]
        assert keys
        for key in keys:
            cache.set(key, crafted(marker))
        cache.set(("a", "tuple", "key"), crafted(marker))
    facts_key = next(k for k in keys if k.startswith("facts") and "a.py" in k)
    import sqlite3

    with sqlite3.connect(folder / "cache.db") as database:  # a value "stored in a file" outside the cache
        database.execute("UPDATE Cache SET filename = ?, mode = 2, value = NULL WHERE key = ?",
                         (os.path.relpath(victim, folder), facts_key))
    (root / "a.py").unlink()  # its facts are stale now: culling them would remove the "value file"
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.index()
    found = engine.find(engine_address("b.py:f"))
    engine.close()
    assert not marker.exists(), "unpickling a cache entry ran a command"
    assert victim.exists(), "culling the cache removed a file outside it"
    assert [s.name for s in found.matches] == ["f"]


def engine_address(text: str) -> Any:
    from engine.names import parse_address

    return parse_address(text)


# -- item 7 and 8: typed errors for refused writes and full disks, and the size limit on every path --


@pytest.mark.parametrize(("failure", "code"), [(PermissionError(13, "Operation not permitted"), "write_failed"),
                                               (OSError(28, "No space left on device"), "disk_full")])
def test_a_write_the_system_refuses_is_a_typed_error_and_rolls_back(root: Path, failure: OSError, code: str) -> None:
    (root / "b.py").write_text("y = 1\n")
    second = FileChange("b.py", (TextEdit(Range(Position(0, 4), Position(0, 5)), "2"),), _sha((root / "b.py").read_bytes()))
    edit = WorkspaceEdit((*_edit_a(root, "2").operations, second))

    def hook(step: str) -> None:
        if step == "staged:b.py":
            raise failure

    with pytest.raises(Exception) as refused:
        Transactions(Workspace(root), hook=hook).apply(edit)
    assert getattr(refused.value, "code", None) == code
    assert "b.py" in refused.value.args[0] and "nothing was changed" in refused.value.args[0]
    assert (root / "a.py").read_text() == "x = 1\n" and (root / "b.py").read_text() == "y = 1\n"
    assert not list(root.glob(".*.tmp"))


def test_a_full_disk_is_reported_as_such_on_a_small_tmpfs(tmp_path: Path) -> None:
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        (folder / "a.py").write_text("x = 1\n")
        big = "x = '" + "y" * 400_000 + "'\n"
        edit = WorkspaceEdit((FileChange("a.py", (TextEdit(Range(Position(0, 0), Position(1, 0)), big),),
                                         _sha((folder / "a.py").read_bytes())),))
        with pytest.raises(Exception) as refused:
            Transactions(Workspace(folder, WorkspaceConfig(max_file_bytes=10**7))).apply(edit)
        assert getattr(refused.value, "code", None) == "disk_full", refused.value
        assert (folder / "a.py").read_text() == "x = 1\n"
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def test_apply_keeps_the_size_limit_of_every_read(root: Path) -> None:
    from engine.errors import UnreadableFile

    (root / "big.py").write_text("x = 1\n" + "#" * 2000 + "\n")
    data = (root / "big.py").read_bytes()
    edit = WorkspaceEdit((FileChange("big.py", (TextEdit(Range(Position(0, 4), Position(0, 5)), "2"),), _sha(data)),))
    with pytest.raises(UnreadableFile, match="over the 0.0 MiB limit") as refused:
        Transactions(Workspace(root, WorkspaceConfig(max_file_bytes=1000))).apply(edit)
    assert refused.value.option == "max_file_bytes"  # each front end says how to raise it
    assert (root / "big.py").read_bytes() == data


def test_cli_json_carries_the_typed_write_error(tmp_path: Path) -> None:
    """Not a traceback with nothing on stdout: the JSON error, with exit 1, when the disk fills."""
    folder = tmp_path / "small"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        (folder / "pyproject.toml").write_text("")
        (folder / "a.py").write_text("x = 1\n")
        big = "x = '" + "y" * 400_000 + "'\n"
        edit = {"changes": {(folder / "a.py").as_uri(): [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}, "newText": big}]}}
        (tmp_path / "edit.json").write_text(json.dumps(edit))
        ran = subprocess.run([sys.executable, "-m", "frontends.cli.main", "--root", str(folder), "--json", "--source", "ast",
                              "--max-file-bytes", "10000000", "apply", str(tmp_path / "edit.json"), "--apply"],
                             cwd=REPO, capture_output=True, text=True, check=False)
        assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
        error = json.loads(ran.stdout)["error"]
        # Where it runs out (the journal, or staging a.py: the check's graph cache takes room first) is said.
        assert error["code"] == "disk_full" and ("a.py" in error["message"] or "journal" in error["message"])
        assert (folder / "a.py").read_text() == "x = 1\n"
    finally:
        subprocess.run(["umount", str(folder)], check=False)


# -- item 6: MCP path quirks ---------------------------------------------------------------------


def test_mcp_file_uris_are_paths_and_overview_refuses_what_it_cannot_show(root: Path, outside: Path) -> None:
    from mcp.client import Client

    from frontends.mcp_server import build_server

    (root / "pkg").mkdir()
    (root / "pkg" / "m.py").write_text("def f():\n    return 1\n")
    os.symlink(root / "pkg", root / "linked")
    os.symlink(outside, root / "elsewhere")
    engine = Engine(Workspace(root), source=SourcePreference.AST)

    async def steps() -> list[Any]:
        async with Client(build_server(engine)) as client:
            return [
                await client.call_tool("write_file", {"path": (root / "new.py").as_uri(), "content": "x = 1\n", "apply": True}),
                await client.call_tool("write_file", {"path": (outside / "x.py").as_uri(), "content": "x = 1\n", "apply": True}),
                await client.call_tool("project_overview", {"under": "../x"}),
                await client.call_tool("project_overview", {"under": "linked"}),
                await client.call_tool("project_overview", {"under": "elsewhere"}),
                await client.call_tool("project_overview", {"under": "missing"}),
                await client.call_tool("project_overview", {"under": "pkg"}),
            ]

    try:
        created, escaped, above, linked, elsewhere, missing, listed = asyncio.run(steps())
    finally:
        engine.close()
    assert not created.is_error and (root / "new.py").read_text() == "x = 1\n" and not (root / "file:").exists()
    assert escaped.is_error and escaped.structured_content["error"]["code"] == "unsafe_path" and not (outside / "x.py").exists()
    assert [r.structured_content["error"]["code"] for r in (above, linked, elsewhere, missing)] == [
        "unsafe_path", "unsafe_path", "unsafe_path", "file_not_found"]
    assert not listed.is_error and "m.py" in listed.content[0].text


# -- item 9: a file whose mode denies writing ------------------------------------------------------


def test_a_read_only_file_is_refused_unless_forced_and_keeps_its_mode(root: Path) -> None:
    from engine.edits.apply import ApplyOptions
    from engine.edits.materialize import ReadOnlyFile

    os.chmod(root / "a.py", 0o444)
    with pytest.raises(ReadOnlyFile, match=r"read-only \(mode 0444\)") as refused:
        Transactions(Workspace(root)).apply(_edit_a(root, "2"))
    assert refused.value.option == "force"
    assert (root / "a.py").read_text() == "x = 1\n"
    Transactions(Workspace(root)).apply(_edit_a(root, "2"), ApplyOptions(force=True))
    assert (root / "a.py").read_text() == "x = 2\n" and os.stat(root / "a.py").st_mode & 0o777 == 0o444


# -- issue 38, item 5: dangling symlinks and symlink loops named *.py ------------------------------

_GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))


def _graft(root: Path, *argv: str, daemon: bool) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    if not daemon:
        environment["GRAFT_DAEMON"] = "0"
    return subprocess.run([str(_GRAFT), "--root", str(root), "--source", "ast", "--json", *argv], cwd=root, env=environment,
                          capture_output=True, text=True, timeout=180, check=False)


@pytest.mark.skipif(_GRAFT is None, reason="the graft console script is not installed")
@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_dangling_symlinks_and_loops_are_skipped_with_a_note_by_every_command(tmp_path: Path, daemon: bool) -> None:
    from frontends.cli import daemon_client

    root = tmp_path / "links"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "a.py").write_text("def helper():\n    return 1\n")
    (root / "b.py").write_text("from a import helper\n\nhelper()\n")
    os.symlink("missing.py", root / "dangling.py")
    os.symlink("loop.py", root / "loop.py")
    try:
        answers = {command[0]: _graft(root, *command, daemon=daemon) for command in (
            ["index"], ["rename", "a.py:helper", "assist"], ["search", "helper"], ["find-replace", "helper", "assist"],
            ["find-files", "*.py"])}
    finally:
        if daemon:
            daemon_client.stop(root)
    for command, ran in answers.items():
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, (command, ran.stderr)
        assert json.loads(ran.stdout)["ok"] is True, command
    index = json.loads(answers["index"].stdout)
    assert {s["path"]: s["reason"].split(" (")[0] for s in index["skipped"]} == {
        "dangling.py": "dangling symlink", "loop.py": "symlink loop"}
    assert {s["path"] for s in json.loads(answers["search"].stdout)["skipped"]} == {"dangling.py", "loop.py"}
    assert "skipped dangling.py: dangling symlink" in answers["search"].stderr
    replaced = json.loads(answers["find-replace"].stdout)
    assert {f["path"] for f in replaced["files"]} == {"a.py", "b.py"}
    assert any(w.startswith("skipped loop.py: symlink loop") for w in replaced["warnings"])
    assert {f["path"] for f in json.loads(answers["rename"].stdout)["files"]} == {"a.py", "b.py"}
    assert json.loads(answers["find-files"].stdout)["files"] == ["a.py", "b.py"]
    assert os.readlink(root / "dangling.py") == "missing.py" and os.readlink(root / "loop.py") == "loop.py"


# -- issue 38, item 8: terminal escape codes in file names -----------------------------------------

EVIL = "evil\x1b[2J\x1b]0;owned\x07\x9b31m.py"
"""Clears the screen, sets the window title, and a C1 CSI: each must reach a terminal as text."""


def _escape_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "escapes"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "good.py").write_text("def helper():\n    return 1\n")
    (root / EVIL).write_text("from good import helper\n\n\ndef caller():\n    return helper()\n")
    return root


@pytest.mark.skipif(_GRAFT is None, reason="the graft console script is not installed")
@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_control_characters_in_file_names_are_escaped_in_human_output_only(tmp_path: Path, daemon: bool) -> None:
    from frontends.cli import daemon_client

    root = _escape_workspace(tmp_path)
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    if not daemon:
        environment["GRAFT_DAEMON"] = "0"

    def graft(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(_GRAFT), "--root", str(root), "--source", "ast", *argv], cwd=root, env=environment,
                              capture_output=True, text=True, timeout=180, check=False)

    try:
        human = {command[0]: graft(*command) for command in (
            ["find-files", "*.py"], ["rename", "good.py:helper", "assist"], ["search", "helper"], ["find", "caller"],
            ["outline", EVIL], ["delete-file", EVIL])}
        listed = graft("--json", "find-files", "*.py")
    finally:
        if daemon:
            daemon_client.stop(root)
    shown = "evil\\x1b[2J\\x1b]0;owned\\x07\\x9b31m.py"
    for command, ran in human.items():
        printed = ran.stdout + ran.stderr
        assert not any(char in printed for char in "\x1b\x07\x9b"), (command, printed)
        assert shown in printed, (command, printed)
    assert f"--- a/{shown}\n+++ b/{shown}\n" in human["rename"].stdout
    assert human["find-files"].stdout.splitlines() == [shown, "good.py"]
    assert json.loads(listed.stdout)["files"] == [EVIL, "good.py"]  # JSON carries the name itself


def test_a_coloured_diff_keeps_its_own_colours_and_escapes_the_names() -> None:
    from engine.edits.diff import FileSummary
    from engine.edits.outcome import EditOutcome
    from engine.symbols import Confidence, Source
    from frontends.render.edits import outcome_text

    diff = f"--- a/{EVIL}\n+++ b/{EVIL}\n@@ -1 +1 @@\n-x = 1\n+x = 2"
    outcome = EditOutcome("rename", False, [FileSummary(EVIL, "modified", 1, 1)], None, 1, diff, Source.AST, Confidence.HIGH,
                          [f"mentioned in {EVIL}"])
    text, notes = outcome_text(outcome, target="good.py:helper", colour=True)
    assert "\x1b[31m-x = 1" in text and "\x1b[32m+x = 2" in text  # the diff's own colours
    assert "\x1b[2J" not in text and "\x07" not in text and "\x9b" not in text and "\x1b]0" not in text
    assert "a/evil\\x1b[2J\\x1b]0;owned\\x07\\x9b31m.py" in text

"""No silent partial refactorings (issue 38, item 4): a source file the project graph skipped
(over the size limit, binary, undecodable) is searched by no pass, so a reference there would
be left behind with nothing said. Each such file that mentions a name the refactoring changes
is named in a warning and the confidence drops; with ``strict`` the refactoring is refused
(``skipped_files``), before anything is planned and with nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.api import Engine, SourcePreference
from engine.errors import GraftError
from engine.refactor.operations import build
from engine.symbols import Confidence
from engine.workspace import Workspace, WorkspaceConfig
from tests.conftest import tree_fingerprint

LIMIT = 10_000
PADDING = "\n".join(f"VALUE_{i} = {i}  # a line that makes this module larger than the limit" for i in range(400)) + "\n"


def _project(root: Path, large: str) -> Path:
    """``pkg.core.helper``, a small importer, and ``pkg/large.py`` (over LIMIT) holding ``large``."""
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def helper():\n    return 1\n")
    (root / "pkg" / "small.py").write_text("from pkg.core import helper\n\nprint(helper())\n")
    (root / "pkg" / "large.py").write_text(large + PADDING)
    assert (root / "pkg" / "large.py").stat().st_size > LIMIT
    return root


# The big importer reaches the function through a string, which codegraft's own passes rename in
# a file they read (a getattr on the module, a mock.patch target) and no rename of the server's
# or jedi's sees: skipped, it would be left naming a function that no longer exists.
MENTIONING = ("from unittest import mock\n\nfrom pkg import core\n\n\ndef use():\n    return getattr(core, 'helper')()\n\n\n"
              "@mock.patch('pkg.core.helper')\ndef test(patched):\n    pass\n\n\n")

OPERATIONS: dict[str, dict[str, Any]] = {
    "rename": {"address": "pkg/core.py:helper", "new_name": "assist"},
    "move": {"address": "pkg/core.py:helper", "dest": "pkg/other.py", "create": True, "import_check": False},
    "rename-file": {"old": "pkg/core.py", "new": "pkg/kernel.py", "import_check": False},
}


def _engine(root: Path) -> Engine:
    return Engine(Workspace(root, WorkspaceConfig(max_file_bytes=LIMIT)), source=SourcePreference.AST)


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_a_skipped_file_that_mentions_the_name_is_named_and_lowers_the_confidence(tmp_path: Path, operation: str) -> None:
    root = _project(tmp_path / "project", MENTIONING)
    engine = _engine(root)
    try:
        planned = engine.plan(build(operation, OPERATIONS[operation]))
        alike = _engine(_project(tmp_path / "small", MENTIONING.replace("helper", "other_name").replace("core", "base")))
        try:
            unmentioned = alike.plan(build(operation, OPERATIONS[operation]))
        finally:
            alike.close()
    finally:
        engine.close()
    named = [w for w in planned.warnings if w.startswith("not searched: pkg/large.py")]
    assert len(named) == 1, planned.warnings
    assert "over the 10,000-byte limit" in named[0]
    assert "pkg/large.py" not in planned.edit.touched
    # The same plan where the skipped file does not mention the name: nothing said, nothing lowered.
    assert not any("not searched" in w for w in unmentioned.warnings)
    order = [Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW]
    assert order.index(planned.confidence) == min(order.index(unmentioned.confidence) + 1, 2)
    assert planned.confidence is not Confidence.HIGH


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
def test_strict_refuses_naming_each_skipped_file_and_writes_nothing(tmp_path: Path, operation: str) -> None:
    root = _project(tmp_path / "project", MENTIONING)
    (root / "pkg" / "binary.py").write_bytes(b"\x00pkg.core.helper\x00")  # skipped as binary: it mentions the names too
    (root / "pkg" / "unrelated.py").write_bytes(b"\x00\x00")  # skipped, but mentions nothing
    before = tree_fingerprint(root)
    engine = _engine(root)
    try:
        with pytest.raises(GraftError) as refused:
            engine.plan(build(operation, {**OPERATIONS[operation], "strict": True}))
    finally:
        engine.close()
    error = refused.value
    assert error.code == "skipped_files" and error.option == "max_file_bytes"
    files = error.to_json()["files"]
    assert isinstance(files, list)
    assert [entry["path"] for entry in files] == ["pkg/binary.py", "pkg/large.py"]
    assert "binary" in files[0]["reason"] and "10,000-byte limit" in files[1]["reason"]
    assert "pkg/large.py" in error.message and "unrelated" not in error.message
    assert tree_fingerprint(root) == before


def test_the_search_finds_a_name_across_the_boundary_of_two_reads(tmp_path: Path) -> None:
    from engine.refactor.skipped_files import _holds_any

    path = tmp_path / "big.py"
    path.write_bytes(b"x" * ((1 << 20) - 3) + b"helper" + b"y" * 100)
    assert _holds_any(str(path), [b"helper"])
    assert not _holds_any(str(path), [b"assist"])


_GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))
_SERVER = shutil.which("basedpyright-langserver", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def _graft(root: Path, *argv: str, daemon: bool) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    if not daemon:
        environment["GRAFT_DAEMON"] = "0"
    return subprocess.run([str(_GRAFT), "--root", str(root), "--max-file-bytes", str(LIMIT), "--json", *argv], cwd=root,
                          env=environment, capture_output=True, text=True, timeout=240, check=False)


@pytest.mark.skipif(_GRAFT is None, reason="the graft console script is not installed")
@pytest.mark.skipif(_SERVER is None, reason="basedpyright is not installed")
@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_the_cli_with_a_server_names_a_skipped_importer_and_strict_exits_1(tmp_path: Path, daemon: bool) -> None:
    """Through basedpyright, as the issue saw it: exit 0 and high confidence with the file
    silently left behind. Through the daemon, the file grows past the limit after the daemon has
    indexed it (it was read then, and must now be left out of the graph, not fail the call)."""
    from frontends.cli import daemon_client

    root = _project(tmp_path / "project", MENTIONING)
    large = root / "pkg" / "large.py"
    try:
        if daemon:
            large.write_text(MENTIONING)
            first = _graft(root, "rename", "pkg/core.py:helper", "assist", daemon=True)
            assert first.returncode == 0 and "pkg/large.py" in json.loads(first.stdout)["diff"], first.stderr
            large.write_text(MENTIONING + PADDING)
        before = tree_fingerprint(root)
        planned = _graft(root, "rename", "pkg/core.py:helper", "assist", daemon=daemon)
        strict = _graft(root, "rename", "--strict", "pkg/core.py:helper", "assist", daemon=daemon)
    finally:
        if daemon:
            daemon_client.stop(root)
    assert planned.returncode == 0, planned.stderr
    outcome = json.loads(planned.stdout)
    assert outcome["source"] == "lsp" and outcome["confidence"] == "medium"
    assert {f["path"] for f in outcome["files"]} == {"pkg/core.py", "pkg/small.py"}
    assert any(w.startswith("not searched: pkg/large.py") for w in outcome["warnings"]), outcome["warnings"]
    assert "note: not searched: pkg/large.py" in planned.stderr
    assert strict.returncode == 1
    error = json.loads(strict.stdout)["error"]
    assert error["code"] == "skipped_files" and [f["path"] for f in error["files"]] == ["pkg/large.py"]
    assert "--max-file-bytes" in strict.stderr
    assert tree_fingerprint(root) == before

"""The no-server rename (jedi): on the bytes the engine read, never on a parser cache's older tree,
and over every file, not the first thirty.

parso, under jedi, trusts its caches by modification time: a file restored with its old mtime
(``cp -a``, a quick ``git checkout``) used to be renamed from the tree cached before, and its
old content written back, reported as success (issue 19, item 1).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pytest

from engine.api import Engine, SourcePreference
from engine.refactor.python import jedi_rename as jedi_module
from engine.refactor.python.jedi_rename import SourceChangedUnderJedi
from engine.workspace import Workspace
from engine.refactor.operations.rename_symbol import Rename
from tests.conftest import REPO, SAMPLE
from tests.lsp_helpers import OutlineOnlyServices

GRAFT = [sys.executable, "-m", "frontends.cli.main"]


def _python_copy(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft", "__pycache__"))
    return root


def _restore_with_old_mtimes(saved: Path, root: Path) -> None:
    for folder in ("shop", "tests"):
        shutil.rmtree(root / folder)
        shutil.copytree(saved / folder, root / folder)  # copy2: the old mtimes come back too
    shutil.rmtree(root / ".graft", ignore_errors=True)


def _assert_no_trace_of_the_first_rename(root: Path) -> None:
    mentions = [str(p.relative_to(root)) for p in root.rglob("*.py") if "Item2" in p.read_text()]
    assert mentions == [], f"the first rename's text was written back into {mentions}"
    imported = subprocess.run([sys.executable, "-c", "import shop"], cwd=root, capture_output=True, text=True, check=False)
    assert imported.returncode == 0, imported.stderr


def test_in_process_renames_do_not_plan_on_a_tree_cached_before_a_restore(tmp_path: Path) -> None:
    root = _python_copy(tmp_path)
    saved = tmp_path / "saved"
    shutil.copytree(root, saved)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.edits().apply(engine.plan(Rename("shop/models.py:LineItem", "Item2")).edit)
    engine.plan(Rename("shop/models.py:Order", "Order2"))  # a dry run: parso caches the renamed files
    engine.close()
    _restore_with_old_mtimes(saved, root)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.edits().apply(engine.plan(Rename("shop/models.py:Order", "Order2")).edit)
    engine.close()
    _assert_no_trace_of_the_first_rename(root)
    assert "class Order2" in (root / "shop/models.py").read_text()


def test_cli_renames_sharing_a_cache_home_plan_on_what_is_on_disk(tmp_path: Path) -> None:
    """The issue's reproduction, step for step, through the CLI with an empty XDG_CACHE_HOME."""
    root = _python_copy(tmp_path)
    saved = tmp_path / "saved"
    shutil.copytree(root, saved)
    cache_home = tmp_path / "cache-home"
    cache_home.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}

    def graft(*arguments: str) -> None:
        result = subprocess.run([*GRAFT, "--root", str(root), "--source", "ast", *arguments],
                                cwd=REPO, env=env, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr

    graft("rename", "shop/models.py:LineItem", "Item2", "--apply", "--allow-dirty")
    graft("rename", "shop/models.py:Order", "Order2")
    _restore_with_old_mtimes(saved, root)
    graft("rename", "shop/models.py:Order", "Order2", "--apply", "--allow-dirty")
    _assert_no_trace_of_the_first_rename(root)
    assert not (cache_home / "jedi").exists(), "jedi's parse cache went to the user's shared cache folder"


def test_concurrent_no_server_renames_do_not_race_on_a_shared_cache(tmp_path: Path) -> None:
    """Two processes planning on one workspace at once used to read each other's half-written
    cache files ("Ran out of input"); each round starts from an empty cache, so both write."""
    cache_home = tmp_path / "cache-home"
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    root = _python_copy(tmp_path)
    for _round in range(2):
        shutil.rmtree(cache_home, ignore_errors=True)
        cache_home.mkdir()
        runs = [subprocess.Popen([*GRAFT, "--root", str(root), "--source", "ast", "--json", "rename", address, "Renamed"],
                                 cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for address in ("shop/models.py:Order", "shop/models.py:LineItem")]
        for run in runs:
            out, err = run.communicate(timeout=120)
            assert run.returncode == 0, out + err


def test_a_tree_that_does_not_match_the_disk_is_refused_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second line of defence: were a cache ever to survive (here: the clearing is switched
    off), the rename is checked against the bytes read and refused, with nothing written."""
    root = _python_copy(tmp_path)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    engine.plan(Rename("shop/models.py:Order", "Order2"))  # parso now holds every file's tree
    monkeypatch.setattr(jedi_module, "_private_fresh_cache", lambda root: None)
    pricing = root / "shop/pricing.py"
    stat = pricing.stat()
    pricing.write_text(pricing.read_text().replace("\n", "\n# edited in place\n", 1))
    os.utime(pricing, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the content moves, the mtime does not
    before = pricing.read_bytes()
    with pytest.raises(SourceChangedUnderJedi, match="shop/pricing.py"):
        engine.plan(Rename("shop/models.py:Order", "Order2"))
    engine.close()
    assert pricing.read_bytes() == before


def test_jedi_itself_renames_past_its_thirty_file_search_limit(tmp_path: Path) -> None:
    """jedi stops searching references after parsing 30 files, silently; the fallback lifts it."""
    from engine.positions import Position
    from engine.refactor.python.jedi_rename import jedi_rename

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "core.py").write_text("def compute(n):\n    return n\n")
    for number in range(40):
        (tmp_path / "pkg" / f"m{number:02}.py").write_text(f"from pkg.core import compute\n\nVALUE = compute({number})\n")
    edit = jedi_rename(Workspace(tmp_path), "pkg/core.py", Position(0, 4), "double")
    assert len(edit.touched) == 41


def test_source_lsp_refuses_a_rename_the_server_cannot_give(tmp_path: Path) -> None:
    """A server that answers symbols but not the rename (basedpyright missing, another server
    preferred): with --source lsp the rename used to come back from jedi (source ast), exit 0."""
    from engine.api import Engine, SourcePreference
    from engine.errors import ServiceUnavailable
    from engine.positions import Position
    from engine.workspace import SourceFile

    class SymbolsButNoRename(OutlineOnlyServices):
        """The port as such a pool answers: outlines, labelled lsp; the rename unavailable."""

        def rename(self, source: SourceFile, position: Position, new_name: str, sent: object = None) -> NoReturn:
            raise ServiceUnavailable("jedi-language-server cannot rename here")

    (tmp_path / "m.py").write_text("def helper():\n    return 1\n\n\nVALUE = helper()\n")
    engine = Engine(Workspace(tmp_path), services=SymbolsButNoRename(), source=SourcePreference.LSP)
    try:
        with pytest.raises(ServiceUnavailable, match="cannot rename here"):
            engine.plan(Rename("m.py:helper", "assist"))
    finally:
        engine.close()
    assert (tmp_path / "m.py").read_text().startswith("def helper")

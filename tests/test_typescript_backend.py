"""Which server serves a TypeScript project: its own TypeScript decides, as in editors (issue 47).

TypeScript 7 (no tsserver.js) is served by ``tsc --lsp``; any other, or none, by
typescript-language-server on tsserver. Each folder decides for itself. The layouts are fake
``node_modules/typescript/package.json`` files (and a lock file): no server is started.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_pool.config import PoolConfig
from lsp_pool.pool import Pool
from lsp_pool.registry import SPECS, ServerSpec
from lsp_pool.typescript7 import TSC_LSP, TSLS, typescript_backend


def _installed(version: str, folder: Path) -> None:
    package = folder / "node_modules" / "typescript"
    package.mkdir(parents=True, exist_ok=True)
    (package / "package.json").write_text(json.dumps({"name": "typescript", "version": version}))


def _locked(version: str, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {}, "node_modules/typescript": {"version": version}}}
    (folder / "package-lock.json").write_text(json.dumps(lock))


def _source(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.ts").write_text("export const x = 1;\n")
    return folder / "index.ts"


def _six_installed_seven_locked(root: Path) -> None:
    _installed("6.0.1", root)
    _locked("7.0.2", root)


def _monorepo(root: Path) -> None:
    _installed("5.9.3", root / "packages" / "old")
    _installed("7.0.2", root / "packages" / "new")


# (layout name, how to build it, {file: expected server})
LAYOUTS = [
    ("no TypeScript", lambda root: None, {"index.ts": TSLS}),
    ("TypeScript 5", lambda root: _installed("5.9.3", root), {"index.ts": TSLS}),
    ("TypeScript 7", lambda root: _installed("7.0.2", root), {"index.ts": TSC_LSP}),
    ("TypeScript 7 from the lock file only", lambda root: _locked("7.0.2", root), {"index.ts": TSC_LSP}),
    ("TypeScript 6 installed beats a lock file saying 7",
     lambda root: _six_installed_seven_locked(root), {"index.ts": TSLS}),
    ("monorepo with both", lambda root: _monorepo(root),
     {"packages/old/index.ts": TSLS, "packages/new/index.ts": TSC_LSP, "index.ts": TSLS}),
    ("TypeScript 7 hoisted to the root serves the packages", lambda root: _installed("7.0.2", root),
     {"packages/a/index.ts": TSC_LSP}),
]


@pytest.mark.parametrize(("layout", "build", "expected"), LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_the_projects_own_typescript_picks_the_server(tmp_path: Path, layout: str, build, expected: dict[str, str]) -> None:
    build(tmp_path)
    for relative, server in expected.items():
        path = _source((tmp_path / relative).parent)
        assert typescript_backend(tmp_path, path.parent, trusted=False).server == server, (layout, relative)


def _always_found(spec: ServerSpec) -> ServerSpec:
    """The spec as if installed, so that the choice does not depend on this machine's servers."""
    return ServerSpec(**{**spec.__dict__, "locator": lambda: ("/bin/true", "--stdio"), "minimum_version": None})


def test_the_pool_serves_each_folder_of_a_monorepo_by_its_own_typescript(tmp_path: Path) -> None:
    _installed("5.9.3", tmp_path / "old")
    _installed("7.0.2", tmp_path / "new")
    # Trusted: untrusted, typescript-language-server needs a TypeScript installed beside it.
    pool = Pool(PoolConfig(trusted_by="--trust"), tuple(_always_found(spec) for spec in SPECS))
    old = pool.choose("typescript", tmp_path, _source(tmp_path / "old"))
    new = pool.choose("typescript", tmp_path, _source(tmp_path / "new"))
    assert old.chosen is not None and old.chosen.spec.id == TSLS
    assert new.chosen is not None and new.chosen.spec.id == TSC_LSP
    assert new.backend is not None and "TypeScript 7.0.2 (new/node_modules/typescript/package.json)" in new.backend.why
    assert pool.server_for("typescript", tmp_path, tmp_path / "new" / "index.ts").spec.id == TSC_LSP
    assert pool.server_for("typescript", tmp_path, tmp_path / "old" / "index.ts").spec.id == TSLS


def test_a_trusted_workspace_runs_its_own_typescript_7_compiler(tmp_path: Path) -> None:
    _installed("7.0.2", tmp_path)
    binary = tmp_path / "node_modules" / "@typescript" / "typescript-linux-x64" / "lib" / "tsc"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    untrusted = typescript_backend(tmp_path, tmp_path, trusted=False)
    trusted = typescript_backend(tmp_path, tmp_path, trusted=True)
    assert untrusted.command is None and "not trusted" in untrusted.why
    import platform
    if platform.machine() not in ("x86_64", "amd64") or not __import__("sys").platform.startswith("linux"):
        pytest.skip("the fake platform package is the linux-x64 one")
    assert trusted.command == (str(binary), "--lsp", "--stdio")


def test_a_typescript_7_project_without_its_server_is_refused_naming_why(tmp_path: Path) -> None:
    _installed("7.0.2", tmp_path)
    missing = tuple(ServerSpec(**{**spec.__dict__, "locator": lambda: None, "command": ("no-such-tsc-anywhere",)})
                    if spec.id == TSC_LSP else _always_found(spec) for spec in SPECS)
    choice = Pool(PoolConfig(), missing).choose("typescript", tmp_path, _source(tmp_path))
    assert choice.chosen is None and choice.state == "not-found"
    assert "TypeScript 7.0.2" in choice.reason and "typescript@7.0.2" in choice.reason


def test_doctor_names_the_server_of_each_project(tmp_path: Path) -> None:
    from engine.doctor import diagnose
    from engine.workspace import Workspace
    from lsp_pool.adapter import PoolServices

    _installed("5.9.3", tmp_path / "old")
    _installed("7.0.2", tmp_path / "new")
    for folder in ("old", "new"):
        _source(tmp_path / folder)
        (tmp_path / folder / "package.json").write_text("{}")
    workspace = Workspace(tmp_path)
    services = PoolServices(workspace, PoolConfig(trusted_by="--trust"), tuple(_always_found(spec) for spec in SPECS))
    report = diagnose(workspace, services)
    projects = {project.folder: project for family in report.families for project in family.typescript}
    assert projects["new"].served_by.startswith(TSC_LSP) and "TypeScript 7.0.2" in projects["new"].why
    assert projects["old"].served_by.startswith(TSLS) and "TypeScript 5.9.3" in projects["old"].why


def test_a_lock_file_changed_during_a_session_is_read_again(tmp_path: Path) -> None:
    """The lock file's answer is kept between requests, and dropped once the file changes."""
    import os

    _locked("5.9.3", tmp_path)
    assert typescript_backend(tmp_path, tmp_path, trusted=False).server == TSLS
    _locked("7.0.2", tmp_path)
    lock = tmp_path / "package-lock.json"
    later = lock.stat().st_mtime_ns + 10**9
    os.utime(lock, ns=(later, later))  # the same size: only the time says it changed
    assert typescript_backend(tmp_path, tmp_path, trusted=False).server == TSC_LSP


def test_the_choice_is_kept_while_nothing_it_read_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked for every request: the manifest is read once while it is unchanged."""
    from lsp_pool import typescript7

    _installed("7.0.2", tmp_path)
    _source(tmp_path / "src")
    read: list[Path] = []
    real = typescript7.package_version

    def counted(folder: Path) -> str | None:
        read.append(folder)
        return real(folder)

    monkeypatch.setattr(typescript7, "package_version", counted)
    first = typescript_backend(tmp_path, tmp_path / "src", trusted=False)
    assert read, "the first choice reads the manifest"
    read.clear()
    assert typescript_backend(tmp_path, tmp_path / "src", trusted=False) == first
    assert read == []


@pytest.mark.parametrize("change", ["upgraded in place", "installed later", "symlinked package retargeted",
                                    "lock file added above"])
def test_a_kept_choice_follows_what_it_was_made_from(tmp_path: Path, change: str) -> None:
    """Each change to what the choice read, made between two requests, changes the answer."""
    folder = _source(tmp_path / "src").parent
    if change == "upgraded in place":
        _installed("5.9.3", tmp_path)  # then 7.0.2: the same size, so only the times tell
        before = typescript_backend(tmp_path, folder, trusted=False).server
        _installed("7.0.2", tmp_path)
    elif change == "installed later":
        before = typescript_backend(tmp_path, folder, trusted=False).server
        _installed("7.0.2", tmp_path)
    elif change == "symlinked package retargeted":  # pnpm links each package from its store
        _installed("5.9.3", tmp_path / "store" / "ts5")
        _installed("7.0.2", tmp_path / "store" / "ts7")
        (tmp_path / "node_modules").mkdir()
        (tmp_path / "node_modules" / "typescript").symlink_to(tmp_path / "store" / "ts5" / "node_modules" / "typescript")
        before = typescript_backend(tmp_path, folder, trusted=False).server
        (tmp_path / "node_modules" / "typescript").unlink()
        (tmp_path / "node_modules" / "typescript").symlink_to(tmp_path / "store" / "ts7" / "node_modules" / "typescript")
    else:
        before = typescript_backend(tmp_path, folder, trusted=False).server
        _locked("7.0.2", tmp_path)
    assert (before, typescript_backend(tmp_path, folder, trusted=False).server) == (TSLS, TSC_LSP), change


def test_a_symlinked_folder_is_chosen_from_the_folders_above_its_target(tmp_path: Path) -> None:
    """The choice walks the resolved folder, whose parents are not the link's: a TypeScript
    upgraded above the link's target, between two requests, is seen (no choice is kept through a link)."""
    _installed("5.9.3", tmp_path / "deep")
    _source(tmp_path / "deep" / "package" / "src")
    (tmp_path / "current").symlink_to(tmp_path / "deep" / "package")
    before = typescript_backend(tmp_path, tmp_path / "current" / "src", trusted=False).server
    _installed("7.0.2", tmp_path / "deep")
    assert (before, typescript_backend(tmp_path, tmp_path / "current" / "src", trusted=False).server) == (TSLS, TSC_LSP)

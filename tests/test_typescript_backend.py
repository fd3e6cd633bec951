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

"""``graft doctor``: per language in a workspace, the server the pool would choose and what each
operation does there, on the real pool (servers located and their versions asked; none started)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.doctor import Doctor, FamilyReport, diagnose
from engine.workspace import Workspace, WorkspaceConfig
from frontends.cli import daemon_client
from frontends.cli.main import main
from lsp_pool.adapter import PoolServices
from lsp_pool.registry import SPECS_BY_ID, locate

PYTHON = {"app/core.py": "def run() -> int:\n    return 1\n", "app/__init__.py": ""}
GO = {"go.mod": "module example.com/demo\n\ngo 1.22\n", "demo/demo.go": "package demo\n\nfunc Run() int { return 1 }\n"}
TYPESCRIPT = {"web/package.json": '{"name": "web"}\n', "web/tsconfig.json": "{}\n",
              "web/src/index.ts": "export function run(): number { return 1; }\n"}


def _installed(spec_id: str) -> bool:
    return locate(SPECS_BY_ID[spec_id]) is not None


def _needs(*spec_ids: str) -> pytest.MarkDecorator:
    missing = [spec_id for spec_id in spec_ids if not _installed(spec_id)]
    return pytest.mark.skipif(bool(missing), reason=f"not installed here: {', '.join(missing)}")


@dataclass(frozen=True)
class Layout:
    files: dict[str, str]
    families: list[str]
    """The families reported, in order (those with files)."""
    expect: dict[str, dict[str, str]]
    """family → {"state": …, "server": …, operation: (works, a phrase of how)}."""
    fake_gopls: str | None = None
    """A gopls put first on PATH that prints this as its version."""
    trusted: bool = False
    extra: dict[str, str] = field(default_factory=dict)
    """Files written outside what the scan lists (node_modules)."""


LAYOUTS = {
    "python only": pytest.param(Layout(
        PYTHON, ["python"],
        {"python": {"state": "ok", "server": "basedpyright",
                    "rename": "yes: basedpyright's rename, with codegraft's Python passes",
                    "move": "yes: codegraft's own", "rename-file": "yes: codegraft's own import rewriting",
                    "delete": "yes: codegraft's own, refused while basedpyright finds a reference",
                    "check": "yes: basedpyright's errors before and after", "graph": "yes: callers, impact and dead code followed"}},
    ), marks=_needs("basedpyright")),
    "python, go and typescript": pytest.param(Layout(
        {**PYTHON, **GO, **TYPESCRIPT}, ["go", "python", "typescript"],
        {"go": {"state": "ok", "server": "gopls", "rename": "yes: gopls's rename",
                "move": "partly: within its package (folder): codegraft's own",
                "rename-file": "partly: within its folder (no import names the file); elsewhere refused: no willRenameFiles "
                               "(gopls offers none)",
                "check": "yes: gopls's errors",
                "graph": "partly: callers, callees and impact from gopls's call hierarchy, implementations from its "
                         "textDocument/implementation; dead code not followed"},
         "typescript": {"state": "ok", "server": "typescript-language-server",
                        "move": "yes: typescript-language-server's \"Move to file\" (TypeScript ",
                        "rename-file": "yes: typescript-language-server's willRenameFiles",
                        "replace, insert": "yes: codegraft's own, on whole lines; symbol extents from "
                                           "typescript-language-server's outline, else the syntax tree",
                        "graph": "partly: callers, callees and impact from typescript-language-server's call hierarchy"},
         "python": {"state": "ok", "move": "yes: codegraft's own"}},
    ), marks=_needs("basedpyright", "gopls", "typescript-language-server")),
    "a too-old gopls first on PATH": pytest.param(Layout(
        GO, ["go"],
        {"go": {"state": "too-old", "server": "gopls", "version": "golang.org/x/tools/gopls v0.5.0",
                "detail": "gopls is version golang.org/x/tools/gopls v0.5.0, and codegraft needs 0.20 or newer: "
                          "go install golang.org/x/tools/gopls@v0.23.0",
                "rename": "no: refused; --text", "move": "partly: within its package (folder): codegraft's own, imports "
                                                         "carried; across packages refused: no server move (no language server: too-old)",
                "check": "partly: syntax only: the syntax (tree-sitter)"}},
        fake_gopls="golang.org/x/tools/gopls v0.5.0",
    )),
    "a trusted typescript 5.1 project": pytest.param(Layout(
        TYPESCRIPT, ["typescript"],
        {"typescript": {"state": "ok", "server": "typescript-language-server",
                        "move": "no: refused: no server move (tsserver's \"Move to file\" needs TypeScript 5.2 or later, "
                                "and the server runs TypeScript 5.1.6 from ",
                        "rename-file": "yes: typescript-language-server's willRenameFiles", "own": "5.1.6",
                        "why": "the workspace is trusted: its own TypeScript"}},
        trusted=True,
        extra={"node_modules/typescript/package.json": '{"name": "typescript", "version": "5.1.6"}\n',
               "node_modules/typescript/lib/tsserver.js": "// never run: doctor starts no server\n"},
    ), marks=_needs("typescript-language-server")),
    "an untrusted typescript 5.1 project": pytest.param(Layout(
        TYPESCRIPT, ["typescript"],
        {"typescript": {"state": "ok", "move": "yes: typescript-language-server's \"Move to file\"", "own": "5.1.6",
                        "why": "the workspace is not trusted, so its own TypeScript (its code) is not loaded"}},
        extra={"node_modules/typescript/package.json": '{"name": "typescript", "version": "5.1.6"}\n',
               "node_modules/typescript/lib/tsserver.js": "// never run\n"},
    ), marks=_needs("typescript-language-server")),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _fake_gopls(folder: Path, version: str) -> None:
    folder.mkdir()
    script = folder / "gopls"
    script.write_text(f"#!/bin/sh\necho '{version}'\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def _report(root: Path, *, trusted: bool = False, every_family: bool = False) -> Doctor:
    workspace = Workspace(root, WorkspaceConfig(trust_workspace_python=trusted))
    services = PoolServices(workspace)
    try:
        return diagnose(workspace, services, every_family=every_family)
    finally:
        services.close()


def _row(report: Doctor, family: str) -> FamilyReport:
    return next(row for row in report.families if row.family == family)


@pytest.mark.parametrize("layout", list(LAYOUTS.values()), ids=list(LAYOUTS))
def test_each_family_says_its_server_and_what_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: Layout) -> None:
    root = tmp_path / "project"
    _write(root, {**layout.files, **layout.extra})
    if layout.fake_gopls is not None:
        _fake_gopls(tmp_path / "bin", layout.fake_gopls)
        monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    report = _report(root, trusted=layout.trusted)
    assert [row.family for row in report.families] == layout.families
    for family, expected in layout.expect.items():
        row = _row(report, family)
        works = {c.operation: f"{c.works}: {c.how}" for c in row.capabilities}
        for key, wanted in expected.items():
            if key == "state":
                assert row.serving.state == wanted, row.serving
            elif key == "server":
                assert row.serving.server == wanted
            elif key == "version":
                assert row.serving.version == wanted
            elif key == "detail":
                assert row.serving.detail.startswith(wanted), row.serving.detail
            elif key == "own":
                assert [p.own_version for p in row.typescript] == [wanted]
            elif key == "why":
                assert all(wanted in p.why for p in row.typescript), row.typescript
            else:
                assert works[key].startswith(wanted), works[key]


def test_all_lists_the_families_without_files_too(tmp_path: Path) -> None:
    _write(tmp_path, PYTHON)
    report = _report(tmp_path, every_family=True)
    families = [row.family for row in report.families]
    assert families[0] == "python" and {"go", "typescript", "rust", "ruby"} <= set(families)
    assert _row(report, "ruby").files == 0 and _row(report, "ruby").serving.state == "not-configured"
    ruby = {c.operation: c.works for c in _row(report, "ruby").capabilities}
    assert ruby == {"rename": "no", "move": "no", "rename-file": "no", "replace, insert": "partly", "delete": "no",
                    "check": "no", "graph": "no"}


@_needs("gopls")
def test_cli_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, {**PYTHON, **GO})
    code = main(["doctor", "--json", "--root", str(tmp_path)])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and payload["ok"] is True and payload["command"] == "doctor"
    assert payload["root"] == str(tmp_path) and payload["trusted"] is False
    assert [row["family"] for row in payload["languages"]] == ["go", "python"]
    go = payload["languages"][0]
    assert set(go) == {"family", "languages", "files", "server", "version", "command", "state", "detail", "features",
                       "lacking", "operations"}
    assert go["languages"] == ["go"] and go["files"] == 1 and go["server"] == "gopls" and go["state"] == "ok"
    assert "will-rename-files" not in go["features"] and "rename" in go["features"]
    assert list(go["operations"]) == ["rename", "move", "rename-file", "replace, insert", "delete", "check", "graph"]
    assert go["operations"]["move"]["works"] == "partly" and go["operations"]["move"]["how"]


def test_cli_text_starts_with_the_summary_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, PYTHON)
    assert main(["doctor", "--root", str(tmp_path), "--source", "ast"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["language", "files", "server", "state", "rename", "move", "rename-file", "replace,",
                                "insert", "delete", "check", "graph"]
    assert lines[1].split()[:2] == ["python", "2"]


def test_the_graft_script_answers_in_its_own_process_with_the_callers_path(tmp_path: Path) -> None:
    """Through the thin client: no daemon is started (a daemon's pool keeps what it found when it
    started), and the servers are looked up on the caller's PATH (a too-old gopls first there)."""
    root = tmp_path / "project"
    _write(root, GO)
    _fake_gopls(tmp_path / "bin", "golang.org/x/tools/gopls v0.5.0")
    graft = Path(sys.executable).parent / "graft"
    environment = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    environment.pop("GRAFT_DAEMON", None)
    done = subprocess.run([str(graft), "doctor", "--json"], cwd=root, env=environment, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    go = json.loads(done.stdout)["languages"][0]
    assert (go["family"], go["state"], go["version"]) == ("go", "too-old", "golang.org/x/tools/gopls v0.5.0")
    assert "go install golang.org/x/tools/gopls@v0.23.0" in go["detail"]
    assert daemon_client.status(str(root)) is None

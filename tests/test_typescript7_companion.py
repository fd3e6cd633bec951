"""Move, extract and inline on a TypeScript 7 project, through the pinned TypeScript 6 tsserver
run beside its ``tsc --lsp`` (lsp_pool.typescript_companion; issue 47, item 3).

TypeScript 7's server offers no refactoring code actions: those requests go to
typescript-language-server on the pinned TypeScript 6.0.3, started only for them, while rename,
references and the check after an apply stay on TypeScript 7's own server. Each plan says where it
came from. Real servers, on a fresh copy of ``fixtures/typescript7-project`` each; skipped, with
the reason, when the pinned TypeScript 7 or 6, or typescript-language-server, is not installed
(.ci/install-servers installs them). Without the pinned TypeScript 6 they are refused:
tests/test_typescript7.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine, SourcePreference
from engine.client import EngineClient
from engine.edits.outcome import EditOutcome
from engine.refactor.operations.base import RefactorOperation
from engine.refactor.operations.extract_function import ExtractFunction
from engine.refactor.operations.extract_variable import ExtractVariable
from engine.refactor.operations.inline_symbol import Inline
from engine.refactor.operations.move_symbol import Move
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.registry import SPECS_BY_ID, locate
from lsp_pool.typescript7 import PREFIX_VARIABLE as TS7_PREFIX_VARIABLE
from lsp_pool.typescript7 import TSC_LSP, TSLS
from lsp_pool.typescript7 import pinned_prefix as ts7_prefix
from lsp_pool.typescript_companion import COMPANION, INSTALL_HINT, PREFIX_VARIABLE, pinned_prefix, pinned_tsserver
from tests.test_typescript7 import FIXTURE, require_typescript7, type_check

pytestmark = pytest.mark.e2e

SAID = f"typescript-language-server on TypeScript 6.0.3 beside {TSC_LSP} 7.0.2"
"""Where each plan of the companion says it came from."""


def require_companion() -> None:
    require_typescript7()
    if pinned_tsserver() is None:
        pytest.skip(f"the pinned TypeScript 6 is not installed in {pinned_prefix()} ({INSTALL_HINT})")
    if locate(SPECS_BY_ID[TSLS]) is None:
        pytest.skip("typescript-language-server is not installed here (.ci/install-servers)")


def open_engine(root: Path) -> Engine:
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    # The whole differential check is asserted: a loaded machine must not cut it short.
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)
    return engine


@pytest.fixture
def project(tmp_path: Path) -> Path:
    require_companion()
    copy = tmp_path / "project"
    shutil.copytree(FIXTURE, copy)
    return copy


@pytest.fixture
def engine(project: Path) -> Iterator[Engine]:
    engine = open_engine(project)
    try:
        yield engine
    finally:
        engine.close()


def running(engine: Engine) -> list[str]:
    services = engine.services
    assert isinstance(services, PoolServices)
    return sorted(server.spec.id for server in services.api.pool.running())


def applied(engine: Engine, operation: RefactorOperation) -> EditOutcome:
    """The operation planned and applied with the check after it; the plan named the companion and
    the check ran on TypeScript 7's own server."""
    plan = engine.plan(operation)
    assert any(warning.startswith(f"from {SAID}") for warning in plan.warnings), plan.warnings
    outcome = EngineClient(engine).run_operation(operation, apply=True)
    assert outcome.applied, outcome
    assert outcome.verification is not None and outcome.verification.by == (TSC_LSP,), outcome.verification
    return outcome


def test_extract_variable_comes_from_the_companion_and_the_rename_stays_on_typescript_7(project: Path, engine: Engine) -> None:
    """``área`` before the expression: TypeScript 7 counts UTF-8 columns, tsserver UTF-16."""
    applied(engine, ExtractVariable("src/report.ts:4:19-4:37", "size"))
    assert (project / "src" / "report.ts").read_text() == (
        'import { area } from "./index.js";\n\n'
        "export function report(width: number, height: number): string {\n"
        "  const size = area(width, height);\n"
        "  return `área ${size}`;\n"
        "}\n")
    assert running(engine) == sorted([TSC_LSP, COMPANION])
    assert isinstance(engine.services, PoolServices)
    listed = {status.id: status for status in engine.services.status()}  # graft servers
    assert listed[COMPANION].pid is not None and str(pinned_prefix()) in listed[COMPANION].detail, listed[COMPANION]
    rename = engine.plan(Rename("src/shapes.ts:area", "surface"))
    assert f"from {TSC_LSP}" in rename.warnings, rename.warnings
    assert "tests/shapes.test.ts" in rename.files
    type_check(project)


def test_extract_function_comes_from_the_companion(project: Path, engine: Engine) -> None:
    applied(engine, ExtractFunction("src/shapes.ts:11:3-11:30", "doubled"))
    text = (project / "src" / "shapes.ts").read_text()
    assert ("export function perimeter(width: number, height: number): number {\n"
            "  return doubled(width, height);\n}\n\n"
            "function doubled(width: number, height: number): number {\n"
            "  return 2 * (width + height);\n}\n") in text, text
    type_check(project)


def test_inline_comes_from_the_companion(project: Path, engine: Engine) -> None:
    (project / "src" / "scale.ts").write_text("export function scaled(size: number): number {\n"
                                              "  const factor = 3;\n  return size * factor + factor;\n}\n")
    applied(engine, Inline("src/scale.ts:2:9"))
    assert (project / "src" / "scale.ts").read_text() == "export function scaled(size: number): number {\n" \
                                                         "  return size * 3 + 3;\n}\n"
    type_check(project)


def test_the_companion_sees_what_the_last_apply_wrote(project: Path, engine: Engine) -> None:
    """An extract applied, then the new variable inlined in the same session: the companion's view of
    the file follows the apply (it is asked about the file as written), so the round trip leaves the
    file as it was."""
    applied(engine, ExtractVariable("src/report.ts:4:19-4:37", "size"))
    applied(engine, Inline("src/report.ts:4:9"))
    assert (project / "src" / "report.ts").read_bytes() == (FIXTURE / "src" / "report.ts").read_bytes()


def test_a_move_to_another_file_updates_its_importer(project: Path, engine: Engine) -> None:
    (project / "src" / "units.ts").write_text("export function double(x: number): number {\n  return x * 2;\n}\n\n"
                                              "export const unit = 1;\n")
    (project / "src" / "scaled.ts").write_text('import { double, unit } from "./units.js";\n\n'
                                               "export const twice = double(unit);\n")
    applied(engine, Move("src/units.ts:double", "src/shapes.ts"))
    assert (project / "src" / "units.ts").read_text() == "export const unit = 1;\n"
    assert "export function double(x: number): number {\n  return x * 2;\n}\n" in (project / "src" / "shapes.ts").read_text()
    scaled = (project / "src" / "scaled.ts").read_text()
    assert 'import { double } from "./shapes.js";' in scaled and 'import { unit } from "./units.js";' in scaled, scaled
    type_check(project)


def test_a_move_between_loose_files_updates_an_importer_shown_to_the_companion(tmp_path: Path) -> None:
    """No tsconfig: tsserver's project of loose files holds only the open ones and what they import,
    so the importer the project's own server was shown must be shown to the companion too."""
    require_companion()
    root = tmp_path / "loose"
    root.mkdir()
    shutil.copy(FIXTURE / "package-lock.json", root / "package-lock.json")  # says TypeScript 7.0.2
    (root / "a.ts").write_text("export function f(): number {\n  return 1;\n}\n\nexport const g = 2;\n")
    (root / "b.ts").write_text('import { f } from "./a";\n\nexport const h = f() + 1;\n')
    (root / "c.ts").write_text("export const c = 3;\n")
    engine = open_engine(root)
    try:
        applied(engine, Move("a.ts:f", "c.ts"))
    finally:
        engine.close()
    assert (root / "a.ts").read_text() == "export const g = 2;\n"
    assert 'import { f } from "./c";' in (root / "b.ts").read_text()
    tsc = Path(require_typescript7()[0])
    checked = subprocess.run([str(tsc), "--noEmit", "--strict", "a.ts", "b.ts", "c.ts"], cwd=root, capture_output=True,
                             text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_companion_is_not_started_for_a_rename(project: Path, engine: Engine) -> None:
    plan = engine.plan(Rename("src/shapes.ts:perimeter", "outline"))
    assert f"from {TSC_LSP}" in plan.warnings, plan.warnings
    assert running(engine) == [TSC_LSP]


def test_the_companion_writes_nothing_under_home_and_starts_no_npm(project: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """As TypeScript 7's own server (tests/test_typescript7.py): the companion's automatic type
    acquisition, which would run npm for the checked JavaScript file's lodash, is off."""
    home, bin_folder = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_folder.mkdir()
    started = tmp_path / "npm-started"
    fake_npm = bin_folder / "npm"
    fake_npm.write_text(f"#!/bin/sh\necho \"$@\" >> {started}\nexit 1\n")
    fake_npm.chmod(0o755)
    monkeypatch.setenv(TS7_PREFIX_VARIABLE, str(ts7_prefix()))  # found where they are, though HOME moves
    monkeypatch.setenv(PREFIX_VARIABLE, str(pinned_prefix()))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    (project / "package.json").write_text('{"name": "ts7-fixture", "private": true, "dependencies": {"lodash": "4.17.21"}, '
                                          '"devDependencies": {"typescript": "7.0.2"}}\n')
    (project / "js").mkdir()
    (project / "js" / "jsconfig.json").write_text('{"compilerOptions": {"allowJs": true, "checkJs": true}, "include": ["*.js"]}\n')
    (project / "js" / "chunks.js").write_text('const _ = require("lodash");\nmodule.exports = _.chunk([1, 2], 1);\n')
    engine = open_engine(project)
    try:
        applied(engine, ExtractVariable("js/chunks.js:2:18-2:36", "pieces"))
        assert running(engine) == sorted([TSC_LSP, COMPANION])
    finally:
        engine.close()
    assert "const pieces = _.chunk([1, 2], 1);" in (project / "js" / "chunks.js").read_text()
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []
    assert not started.exists(), started.read_text()


@pytest.mark.parametrize("installed", [True, False], ids=["companion", "no-companion"])
def test_doctor_says_who_moves_on_typescript_7(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               installed: bool) -> None:
    from engine.doctor import diagnose

    if not installed:
        (tmp_path / "empty").mkdir()
        monkeypatch.setenv(PREFIX_VARIABLE, str(tmp_path / "empty"))
    workspace = Workspace(project)
    services = PoolServices(workspace, PoolConfig())
    try:
        report = diagnose(workspace, services)
    finally:
        services.close()
    family = next(family for family in report.families if family.serving.server == TSC_LSP)
    move = next(capability for capability in family.capabilities if capability.operation == "move")
    if installed:
        assert (move.works, move.how) == ("yes", f'"Move to file" from {SAID}, into an existing file'), move
    else:
        assert move.works == "no" and INSTALL_HINT in move.how, move

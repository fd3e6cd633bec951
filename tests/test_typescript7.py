"""A TypeScript 7 project, served by TypeScript 7's own language server, ``tsc --lsp`` (issue 47).

``fixtures/typescript7-project`` says TypeScript 7.0.2 in its lock file, so the pool serves it
with the pinned TypeScript 7 (the workspace is not trusted). Its tests have their own tsconfig,
which the server loads only once one of their files is open, and ``src/index.ts`` is a barrel.
Each test runs on a fresh copy with a fresh server, on the real server; skipped, with the
reason, when the pinned TypeScript 7 is not installed (.ci/install-servers installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

import pytest

from engine.api import Engine, SourcePreference
from engine.edits.session import EditOptions
from engine.errors import Refused, ServiceUnavailable
from engine.refactor.operations.extract_function import ExtractFunction
from engine.refactor.operations.extract_variable import ExtractVariable
from engine.refactor.operations.inline_symbol import Inline
from engine.refactor.operations.move_file import FileRename
from engine.refactor.operations.move_symbol import Move
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.operations.replace_symbol import Replace
from engine.refactor.operations.safe_delete import Delete
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.typescript7 import INSTALL_HINT, PREFIX_VARIABLE, TSC_LSP, pinned_command, pinned_prefix
from lsp_pool.typescript_companion import INSTALL_HINT as COMPANION_HINT
from lsp_pool.typescript_companion import PREFIX_VARIABLE as COMPANION_PREFIX
from tests.conftest import REPO
from tests.test_lsp_e2e import position_of

pytestmark = pytest.mark.e2e

FIXTURE = REPO / "fixtures" / "typescript7-project"


def require_typescript7() -> tuple[str, ...]:
    command = pinned_command()
    if command is None:
        pytest.skip(f"the pinned TypeScript 7 is not installed in {pinned_prefix()} ({INSTALL_HINT})")
    return command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    require_typescript7()
    copy = tmp_path / "project"
    shutil.copytree(FIXTURE, copy)
    return copy


@pytest.fixture
def engine(project: Path) -> Iterator[Engine]:
    """An engine with codegraft's default servers: the project's TypeScript picks tsc --lsp."""
    workspace = Workspace(project)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    # The whole differential check is asserted: a loaded machine must not cut it short.
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)
    try:
        yield engine
    finally:
        engine.close()


def changed_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".graft" not in p.parts
            and (not (FIXTURE / p.relative_to(root)).is_file() or p.read_bytes() != (FIXTURE / p.relative_to(root)).read_bytes())}


def type_check(root: Path) -> None:
    """TypeScript 7's own ``tsc`` over both configs of the project."""
    tsc = Path(require_typescript7()[0])
    for config in (".", "tests"):
        checked = subprocess.run([str(tsc), "--noEmit", "-p", config], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, f"{config}:\n{checked.stdout}{checked.stderr}"


def test_a_rename_through_the_barrel_is_a_real_rename_that_reaches_the_tests(project: Path, engine: Engine) -> None:
    plan = engine.plan(Rename("src/shapes.ts:area", "surface"))
    assert plan.source.value == "lsp" and f"from {TSC_LSP}" in plan.warnings, plan.warnings
    engine.edits().apply(plan.edit)
    assert changed_files(project) == {"src/shapes.ts", "src/index.ts", "src/report.ts", "tests/shapes.test.ts"}
    barrel = (project / "src" / "index.ts").read_text()
    assert "export { surface, perimeter," in barrel and " as " not in barrel  # no `export { surface as area }`
    assert (project / "tests" / "shapes.test.ts").read_text().startswith('import { surface, perimeter } from "../src/index.js";')
    # After non-ASCII text on the line (UTF-8 positions): the right columns were replaced.
    assert "`área ${surface(width, height)}`" in (project / "src" / "report.ts").read_text()
    assert 'export const label = /* naïve */ "shape"; export const scale = surface(1, 2);' in \
        (project / "src" / "shapes.ts").read_text()
    type_check(project)


def test_a_rename_asks_no_prepare_rename_beside_it(project: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """TypeScript 7's rename answers nothing wherever its prepareRename refuses: it is asked alone."""
    from lsp_pool.connection import Connection

    asked: list[str] = []
    real = Connection.request

    async def counted(connection: Connection, method: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(method)
        return await real(connection, method, *args, **kwargs)

    monkeypatch.setattr(Connection, "request", counted)
    engine.plan(Rename("src/shapes.ts:area", "surface"))
    assert "textDocument/rename" in asked and "textDocument/prepareRename" not in asked, asked


def test_the_server_logs_only_warnings_and_errors(project: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its default logs lines after every answer, read before the answer's waiter resumes."""
    from lsp_pool.server import ManagedServer

    engine.plan(Rename("src/shapes.ts:area", "surface"))
    logged: list[str] = []
    real = ManagedServer._on_log

    def counted(server: ManagedServer, tracker: Any, message: str) -> None:
        logged.append(message)
        real(server, tracker, message)

    monkeypatch.setattr(ManagedServer, "_on_log", counted)
    engine.plan(Rename("src/shapes.ts:area", "extent"))
    assert logged == []


@pytest.mark.parametrize(("text", "reason"), [("console", "standard TypeScript library"), ("hello", "cannot rename this element")])
def test_a_rename_the_server_refuses_gives_its_reason(project: Path, engine: Engine, text: str, reason: str) -> None:
    """The rename answered nothing: the server's prepareRename is asked then, for its reason."""
    (project / "src" / "greet.ts").write_text('export function greet(): void {\n  console.log("hello");\n}\n')
    column = (project / "src" / "greet.ts").read_text().splitlines()[1].index(text) + 2
    with pytest.raises(ServiceUnavailable, match=reason):
        engine.plan(Rename(f"src/greet.ts:2:{column}", "renamed"))


def test_references_include_the_tests_under_their_own_config(project: Path, engine: Engine) -> None:
    answer = engine.references("src/shapes.ts:perimeter")
    assert f"from {TSC_LSP}" in answer.notes and not any("partial" in note for note in answer.notes), answer.notes
    found = sorted((location.file, location.range.start.line) for location in answer.locations)
    assert found == [("src/index.ts", 0), ("src/shapes.ts", 9), ("tests/shapes.test.ts", 0), ("tests/shapes.test.ts", 3)]


def test_the_definition_of_a_use_in_the_tests_is_found_through_the_barrel(project: Path, engine: Engine) -> None:
    assert engine.services is not None
    test_file = project / "tests" / "shapes.test.ts"
    answer = engine.services.definition(engine.workspace.read("tests/shapes.test.ts"), position_of(test_file, "perimeter(2"))
    assert answer.server == TSC_LSP
    assert [(location.file, location.range.start.line) for location in answer.value] == [("src/shapes.ts", 9)]


def test_a_request_after_showing_the_importers_sees_the_tests_config(project: Path, engine: Engine) -> None:
    """The server loads a tsconfig's project only once one of its files is open: what
    ``show_importers`` is given (the TypeScript passes give one file of each project) is opened,
    without waiting for diagnostics, before the request."""
    services = engine.services
    assert services is not None
    services.show_importers(["src/shapes.ts"], lambda files: ["tests/shapes.test.ts"])
    answer = services.references(engine.workspace.read("src/shapes.ts"), position_of(project / "src" / "shapes.ts", "area(width"))
    assert ("tests/shapes.test.ts", 3) in {(location.file, location.range.start.line) for location in answer.value}


def test_a_monorepo_gets_each_folders_own_server(tmp_path: Path) -> None:
    """One workspace, two projects: TypeScript 5 (tsserver) and TypeScript 7 (tsc --lsp)."""
    require_typescript7()
    from lsp_pool.registry import SPECS_BY_ID, locate

    if locate(SPECS_BY_ID["typescript-language-server"]) is None:
        pytest.skip("typescript-language-server is not installed here (.ci/install-servers)")
    root = tmp_path / "mono"
    shutil.copytree(FIXTURE, root / "packages" / "new")
    old = root / "packages" / "old"
    (old / "node_modules" / "typescript").mkdir(parents=True)
    (old / "node_modules" / "typescript" / "package.json").write_text('{"name": "typescript", "version": "5.9.3"}\n')
    (old / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["*.ts"]}\n')
    (old / "sizes.ts").write_text("export function width(): number {\n  return 1;\n}\n")
    (old / "use.ts").write_text('import { width } from "./sizes";\n\nexport const twice = width() * 2;\n')
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    try:
        seven = engine.plan(Rename("packages/new/src/shapes.ts:area", "surface"))
        five = engine.plan(Rename("packages/old/sizes.ts:width", "breadth"))
    finally:
        engine.close()
    assert f"from {TSC_LSP}" in seven.warnings and "packages/new/tests/shapes.test.ts" in seven.files, seven.warnings
    assert "from typescript-language-server" in five.warnings and sorted(five.files) == ["packages/old/sizes.ts",
                                                                                        "packages/old/use.ts"], five.warnings


def test_a_file_rename_updates_the_barrel_and_the_tests_imports(project: Path, engine: Engine) -> None:
    plan = engine.plan(FileRename("src/report.ts", "src/summary.ts"))
    engine.edits().apply(plan.edit)
    assert not (project / "src" / "report.ts").exists()
    assert 'import { report } from "../src/summary.js";' in (project / "tests" / "shapes.test.ts").read_text()
    type_check(project)


def test_a_safe_delete_is_refused_listing_the_uses_in_the_tests(project: Path, engine: Engine) -> None:
    with pytest.raises(Refused) as refused:
        engine.plan(Delete("src/shapes.ts:unusedHelper"))
    assert "tests/helpers.test.ts:1" in refused.value.message and "tests/helpers.test.ts:3" in refused.value.message, \
        refused.value.message
    assert changed_files(project) == set()


def without_companion(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The pinned TypeScript 6 that runs a TypeScript 7 project's refactorings (its companion,
    tests/test_typescript7_companion.py) looked for in an empty folder."""
    empty = tmp_path / "no-typescript6"
    empty.mkdir()
    monkeypatch.setenv(COMPANION_PREFIX, str(empty))


def test_a_move_is_refused_as_unsupported_without_the_companion(project: Path, engine: Engine, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    without_companion(monkeypatch, tmp_path)
    with pytest.raises(Refused) as refused:
        engine.plan(Move("src/shapes.ts:perimeter", "src/report.ts"))
    assert refused.value.code == "unsupported_by_server"
    assert f"{TSC_LSP} 7.0.2" in refused.value.message and "no refactoring code actions" in refused.value.message
    assert COMPANION_HINT in refused.value.message, refused.value.message
    assert changed_files(project) == set()


def test_extract_and_inline_are_refused_as_unsupported_without_the_companion(project: Path, engine: Engine, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    without_companion(monkeypatch, tmp_path)
    for operation in (ExtractFunction("src/report.ts:4:3-4:40", "describe"), ExtractVariable("src/report.ts:4:19-4:37", "size"),
                      Inline("src/report.ts:4:19")):
        with pytest.raises(Refused) as refused:
            engine.plan(operation)
        assert refused.value.code == "unsupported_by_server", operation
        assert f"{TSC_LSP} 7.0.2" in refused.value.message and "no refactoring code actions" in refused.value.message
        assert COMPANION_HINT in refused.value.message, refused.value.message
    assert changed_files(project) == set()


def test_the_check_after_apply_catches_a_break_in_the_tests_config(project: Path, engine: Engine) -> None:
    """``perimeter`` gains a parameter: only the tests (their own tsconfig, importing it through
    the barrel) call it, so only a check that reaches them sees the break."""
    plan = engine.plan(Replace("src/shapes.ts:perimeter", "export function perimeter(width: number, height: number, "
                                                          "depth: number): number {\n  return 2 * (width + height + depth);\n}"))
    with pytest.raises(Refused) as refused:
        engine.edits().apply(plan.edit, EditOptions(fail_on_new_errors=True))
    assert refused.value.code == "new_errors"
    assert "tests/shapes.test.ts" in refused.value.message, refused.value.message


def test_a_typescript_7_session_writes_nothing_under_home_and_starts_no_npm(project: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Automatic type acquisition runs npm and writes ~/.cache/typescript/7.0 (measured: it does
    for this project, with lodash as a dependency of a checked JavaScript file, unless turned off)."""
    home, bin_folder = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_folder.mkdir()
    started = tmp_path / "npm-started"
    fake_npm = bin_folder / "npm"
    fake_npm.write_text(f"#!/bin/sh\necho \"$@\" >> {started}\nexit 1\n")
    fake_npm.chmod(0o755)
    monkeypatch.setenv(PREFIX_VARIABLE, str(pinned_prefix()))  # found where it is, though HOME moves
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    (project / "package.json").write_text('{"name": "ts7-fixture", "private": true, "dependencies": {"lodash": "4.17.21"}, '
                                          '"devDependencies": {"typescript": "7.0.2"}}\n')
    (project / "js").mkdir()
    (project / "js" / "jsconfig.json").write_text('{"compilerOptions": {"allowJs": true, "checkJs": true}, "include": ["*.js"]}\n')
    (project / "js" / "chunks.js").write_text('const _ = require("lodash");\nmodule.exports = _.chunk([1, 2], 1);\n')
    workspace = Workspace(project)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    try:
        assert engine.services is not None
        engine.services.diagnostics(workspace.read("js/chunks.js"), when_ready=True)
        plan = engine.plan(Rename("src/shapes.ts:area", "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []
    assert not started.exists(), started.read_text()


SHARED_FIXTURE = REPO / "fixtures" / "typescript-project"
SHARED_CASES = [
    # The cases tests/test_typescript_projects.py runs on tsserver, on TypeScript 7's server.
    ("src/stack.ts:Stack/push", "add",
     {"src/stack.ts", "tests/stack.test.ts", "tests/empty.test.ts", "scripts/demo.ts", "e2e/flow.test.ts"}),
    ("src/stack.ts:Stack/label", "title", {"src/stack.ts", "tests/stack.test.ts", "tests/empty.test.ts", "scripts/demo.ts"}),
    ("js/shapes.js:Square/area", "surface",
     {"js/shapes.js", "js/total.cjs", "js/tools/print.mjs", "js/view.jsx", "scripts/report.js"}),
]


@pytest.mark.parametrize(("address", "new_name", "changed"), SHARED_CASES, ids=[case[0] for case in SHARED_CASES])
def test_the_tsserver_fixture_on_typescript_7_renames_the_same_files(tmp_path: Path, address: str, new_name: str,
                                                                     changed: set[str]) -> None:
    """fixtures/typescript-project (a tests/tsconfig.tests.json tsserver never finds by itself, a
    second project, loose scripts, a JavaScript project), its lock file saying TypeScript 7."""
    require_typescript7()
    root = tmp_path / "project"
    shutil.copytree(SHARED_FIXTURE, root)
    (root / "package-lock.json").write_text(
        '{"lockfileVersion": 3, "packages": {"": {}, "node_modules/typescript": {"version": "7.0.2"}}}\n')
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    try:
        plan = engine.plan(Rename(address, new_name))
        assert f"from {TSC_LSP}" in plan.warnings, plan.warnings
        engine.edits().apply(plan.edit)
        with pytest.raises(Refused) as refused:
            engine.plan(Delete("src/stack.ts:Stack/peek"))
    finally:
        engine.close()
    written = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".graft" not in p.parts
               and p.name != "package-lock.json" and p.read_bytes() != (SHARED_FIXTURE / p.relative_to(root)).read_bytes()}
    assert written == changed
    assert "tests/stack.test.ts:6" in refused.value.message and "e2e/flow.test.ts:8" in refused.value.message

"""TypeScript and JavaScript refactorings see the whole project, on the real server (issue 40, item 2).

tsserver answers only from the projects of its open documents. ``fixtures/typescript-project``
spreads its uses over a root config (``src/``), a test config tsserver never finds by itself
(``tests/tsconfig.tests.json``), a second configured project (``e2e/``), files outside every
config (``scripts/``) and a JavaScript project (``js/``, with .js, .cjs, .mjs and .jsx files).
Each test runs on a fresh copy with a fresh server, so no earlier request has opened anything.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.errors import Refused
from engine.refactor.operations.move_symbol import Move
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.operations.safe_delete import Delete
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.registry import SPECS_BY_ID, locate
from lsp_pool.workspace_trust import installed_tsserver
from tests.conftest import REPO
from tests.test_lsp_e2e import only, require, served_engine

pytestmark = pytest.mark.e2e

FIXTURE = REPO / "fixtures" / "typescript-project"
CONFIGS = ("tsconfig.json", "tests/tsconfig.tests.json", "e2e/tsconfig.json", "js/jsconfig.json")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    require("typescript-language-server")
    copy = tmp_path / "project"
    shutil.copytree(FIXTURE, copy)
    return copy


def changed_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".graft" not in p.parts
            and p.read_bytes() != (FIXTURE / p.relative_to(root)).read_bytes()}


def type_check(root: Path) -> None:
    """``tsc --noEmit`` over every config of the project, when tsc is installed."""
    tsc = shutil.which("tsc")
    if tsc is None:
        return  # installed with typescript by .ci/install-servers; the edits were checked above
    for config in CONFIGS:
        checked = subprocess.run([tsc, "--noEmit", "-p", config], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, f"{config}:\n{checked.stdout}{checked.stderr}"


def test_a_method_rename_reaches_tests_under_their_own_config_other_projects_and_loose_files(project: Path) -> None:
    with served_engine(project, "typescript-language-server") as engine:
        plan = engine.plan(Rename("src/stack.ts:Stack/push", "add"))
        engine.edits().apply(plan.edit)
    assert changed_files(project) == {"src/stack.ts", "tests/stack.test.ts", "tests/empty.test.ts", "scripts/demo.ts",
                                      "e2e/flow.test.ts"}
    assert (project / "tests" / "stack.test.ts").read_text().count("stack.add(") == 2  # through the barrel
    assert "this.items.push(" in (project / "src" / "stack.ts").read_text()  # an array's push is another method
    type_check(project)


def test_a_property_rename_reaches_the_tests(project: Path) -> None:
    with served_engine(project, "typescript-language-server") as engine:
        plan = engine.plan(Rename("src/stack.ts:Stack/label", "title"))
        engine.edits().apply(plan.edit)
    assert changed_files(project) == {"src/stack.ts", "tests/stack.test.ts", "tests/empty.test.ts", "scripts/demo.ts"}
    assert not any("label" in (project / path).read_text() for path in changed_files(project))
    type_check(project)


def test_a_safe_delete_sees_the_uses_in_tests_and_other_projects(project: Path) -> None:
    with served_engine(project, "typescript-language-server") as engine, pytest.raises(Refused) as refused:
        engine.plan(Delete("src/stack.ts:Stack/peek"))
    assert "tests/stack.test.ts:6" in refused.value.message and "e2e/flow.test.ts:8" in refused.value.message
    assert changed_files(project) == set()


def test_a_javascript_method_rename_reaches_cjs_mjs_jsx_and_loose_scripts(project: Path) -> None:
    with served_engine(project, "typescript-language-server") as engine:
        plan = engine.plan(Rename("js/shapes.js:Square/area", "surface"))
        engine.edits().apply(plan.edit)
    assert changed_files(project) == {"js/shapes.js", "js/total.cjs", "js/tools/print.mjs", "js/view.jsx", "scripts/report.js"}
    assert not any(".area(" in (project / path).read_text() for path in changed_files(project))
    type_check(project)


def write_project(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


OVERLOADS = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "noEmit": true}}\n',
    "src/parse.ts": (
        "export function parse(text: string): number;\n"
        "export function parse(text: string, radix: number): number;\n"
        "export function parse(text: string, radix?: number): number {\n"
        "  return parseInt(text, radix ?? 10);\n"
        "}\n"
    ),
    "src/index.ts": 'export { parse } from "./parse";\nexport { parse as read } from "./parse";\n',
    "app.ts": 'import { parse, read } from "./src/index";\n\nexport const total = parse("1") + parse("7", 8) + read("2");\n',
}


def test_a_rename_through_a_barrel_is_a_real_rename_and_takes_every_overload(tmp_path: Path) -> None:
    """tsserver's default keeps the old public name in a re-export (``export { parseNumber as
    parse }``): a silent bridge. Told not to, it renames the barrel and the barrel's importers; the
    project's own alias (``parse as read``) stays an alias of the renamed function."""
    require("typescript-language-server")
    root = write_project(tmp_path / "project", OVERLOADS)
    with served_engine(root, "typescript-language-server") as engine:
        plan = engine.plan(Rename("src/parse.ts:parse", "parseNumber"))
        engine.edits().apply(plan.edit)
    assert (root / "src" / "parse.ts").read_text().count("export function parseNumber(") == 3
    assert (root / "src" / "index.ts").read_text() == (
        'export { parseNumber } from "./parse";\nexport { parseNumber as read } from "./parse";\n')
    assert (root / "app.ts").read_text() == (
        'import { parseNumber, read } from "./src/index";\n\n'
        'export const total = parseNumber("1") + parseNumber("7", 8) + read("2");\n')
    tsc = shutil.which("tsc")
    if tsc is not None:
        checked = subprocess.run([tsc, "-p", "."], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_move_takes_every_overload_signature_with_the_implementation(tmp_path: Path) -> None:
    require("typescript-language-server")
    files = {**OVERLOADS, "src/numbers.ts": "export const TEN = 10;\n",
             "app.ts": 'import { parse } from "./src/parse";\n\nexport const total = parse("1") + parse("7", 8);\n'}
    del files["src/index.ts"]
    root = write_project(tmp_path / "project", files)
    with served_engine(root, "typescript-language-server") as engine:
        plan = engine.plan(Move("src/parse.ts:parse", "src/numbers.ts"))
        engine.edits().apply(plan.edit)
    assert "parse" not in (root / "src" / "parse.ts").read_text()
    assert (root / "src" / "numbers.ts").read_text().count("export function parse(") == 3
    tsc = shutil.which("tsc")
    if tsc is not None:
        checked = subprocess.run([tsc, "-p", "."], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_move_on_a_typescript_older_than_5_2_is_refused_and_says_so(tmp_path: Path) -> None:
    """tsserver moves code into another file from TypeScript 5.2 on; before, it offers no such
    action, and the refusal said nothing about why. The workspace is trusted, so the server runs its
    own TypeScript: the installed one's lib/, in a package that says it is 5.1."""
    require("typescript-language-server")
    command = locate(SPECS_BY_ID["typescript-language-server"])
    assert command is not None  # require() above skips the test when it is not installed
    installed = installed_tsserver(command[0])
    if installed is None:
        pytest.skip("no TypeScript is installed beside typescript-language-server")
    files = {**OVERLOADS, "src/numbers.ts": "export const TEN = 10;\n", ".gitignore": "node_modules/\n",
             "node_modules/typescript/package.json": '{"name": "typescript", "version": "5.1.6"}\n'}
    root = write_project(tmp_path / "project", files)
    (root / "node_modules" / "typescript" / "lib").symlink_to(Path(installed).parent)
    workspace = Workspace(root)
    config = replace(only("typescript-language-server"), trusted_by="--trust")
    engine = Engine(workspace, services=PoolServices(workspace, config), source=SourcePreference.AUTO)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(Move("src/parse.ts:parse", "src/numbers.ts"))
    finally:
        engine.close()
    assert refused.value.code == "cannot_move"
    assert "needs TypeScript 5.2 or later" in refused.value.message and "runs TypeScript 5.1" in refused.value.message
    assert "npm install -g typescript@5.9" in refused.value.message


STYLED = {
    "tsconfig.json": ('{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "noEmit": true, '
                      '"baseUrl": "src"}, "include": ["src"]}\n'),
    "src/_internals/utils.ts": (
        "export function pad(text: string, width: number): string {\n"
        "  if (text.length >= width) {\n"
        "    return text;\n"
        "  }\n"
        '  return " ".repeat(width - text.length) + text;\n'
        "}\n"
        "\n"
        "export function shout(text: string): string {\n"
        "  return text.toUpperCase();\n"
        "}\n"
    ),
    "src/_internals/strings.ts": "export const EMPTY = '';\n",
    "src/main.ts": (
        'import { pad, shout } from "./_internals/utils";\n'
        "\n"
        "export function banner(text: string): string {\n"
        "  return pad(shout(text), 10);\n"
        "}\n"
    ),
}


def test_a_move_keeps_the_files_indentation_and_the_projects_relative_imports(tmp_path: Path) -> None:
    """tsserver formats moved code with 4 spaces unless told the file's indentation, and with a
    baseUrl it wrote the importer's new import as '_internals/strings', which a test runner
    without path mapping cannot resolve, though the project imports its files relatively."""
    require("typescript-language-server")
    root = write_project(tmp_path / "project", STYLED)
    with served_engine(root, "typescript-language-server") as engine:
        plan = engine.plan(Move("src/_internals/utils.ts:pad", "src/_internals/strings.ts"))
        engine.edits().apply(plan.edit)
    moved = (root / "src" / "_internals" / "strings.ts").read_text()
    assert "\n  if (text.length >= width) {\n    return text;\n  }\n" in moved, moved
    main = (root / "src" / "main.ts").read_text()
    assert 'import { pad } from "./_internals/strings";' in main, main
    assert main.endswith(STYLED["src/main.ts"].split("\n", 1)[1]), main  # the lines the move did not need are as they were
    assert (root / "src" / "_internals" / "utils.ts").read_text() == STYLED["src/_internals/utils.ts"].split("\n\n", 1)[1]
    assert any("written './_internals/strings'" in warning for warning in plan.warnings), plan.warnings
    tsc = shutil.which("tsc")
    if tsc is not None:
        checked = subprocess.run([tsc, "-p", "."], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("barrel, stale", [
    ('export { parse } from "./parse";\nexport { parse as read } from "./parse";\n', ["src/index.ts:1", "src/index.ts:2"]),
    ('export * from "./parse";\n', ["src/index.ts:1 (export * from the old module"]),
    ('export * from "./parse";\nexport * from "./numbers";\n', []),
])
def test_a_move_that_would_leave_a_barrel_re_exporting_the_old_module_is_refused(
        tmp_path: Path, barrel: str, stale: list[str]) -> None:
    """tsserver's move updates imports but not a barrel's re-export of the moved function: tsc
    failed (TS2305), or the name silently left a barrel that re-exports the old module whole."""
    require("typescript-language-server")
    files = {**OVERLOADS, "src/index.ts": barrel, "src/numbers.ts": "export const TEN = 10;\n",
             "app.ts": 'import { parse } from "./src/parse";\n\nexport const total = parse("1");\n'}
    root = write_project(tmp_path / "project", files)
    with served_engine(root, "typescript-language-server") as engine:
        if not stale:
            engine.plan(Move("src/parse.ts:parse", "src/numbers.ts"))  # the barrel exports the destination too
            return
        with pytest.raises(Refused) as refused:
            engine.plan(Move("src/parse.ts:parse", "src/numbers.ts"))
    assert refused.value.code == "cannot_move"
    assert all(place in refused.value.message for place in stale), refused.value.message


COMMONJS = {
    "lib/utils.js": "'use strict';\n\nvar isArray = Array.isArray;\n\nvar first = function (xs) {\n    return xs[0];\n};\n\n"
                    "module.exports = {\n    first: first,\n    isArray: isArray\n};\n",
    "lib/stringify.js": "'use strict';\n\nvar utils = require('./utils');\n\nvar isArray = Array.isArray;\n"
                        "var push = Array.prototype.push;\nvar pushToArray = function (arr, value) {\n"
                        "    push.apply(arr, isArray(value) ? value : [value]);\n};\n\n"
                        "module.exports = function (xs) {\n    var out = [];\n    pushToArray(out, utils.first(xs));\n"
                        "    return out;\n};\n",
}


def test_a_move_between_commonjs_modules_is_refused_before_the_server_writes_lost_exports(tmp_path: Path) -> None:
    """tsserver's move between CommonJS files appended ``exports.pushToArray = ...`` after
    ``module.exports = {...}`` (so lost), required stringify's helpers back into utils (a cycle
    and a second ``isArray``): qs's whole suite went red while graft said it moved the code."""
    require("typescript-language-server")
    root = write_project(tmp_path / "project", COMMONJS)
    with served_engine(root, "typescript-language-server") as engine:
        with pytest.raises(Refused) as refused:
            engine.plan(Move("lib/stringify.js:pushToArray", "lib/utils.js"))
    assert refused.value.code == "cannot_move"
    assert "CommonJS" in refused.value.message
    assert all((root / path).read_text() == text for path, text in COMMONJS.items())


UNPARSED_BY_TREE_SITTER = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "noEmit": true}}\n',
    # immer 10.1.1's IProduce, its doc comments left out: tree-sitter-typescript's parse of the
    # call signatures fails and swallows the rest of the file, so the graph has no neverUsed.
    # 60 well-formed lines first: a file mostly of errors is outlined by regular expressions instead.
    "src/produce.ts": "".join(f"export type Shape{n} = {{ id: number; label{n}: string }}\n" for n in range(60)) + "\n" + 'type AnyFunc = (...args: any[]) => any\ntype Draft<T> = T\ntype ValidRecipeReturnType<S> = S | void | undefined\ntype InferRecipeFromCurried<C> = C\ntype InferInitialStateFromCurried<C> = C\ntype InferCurriedFromRecipe<R, P extends boolean> = P extends true ? R : R\ntype InferCurriedFromInitialStateAndRecipe<S, R, P extends boolean> = P extends true ? R : S\ntype PatchListener = (patches: unknown[]) => void\n\nexport interface IProduce {\n\t<Curried>(\n\t\trecipe: InferRecipeFromCurried<Curried>,\n\t\tinitialState?: InferInitialStateFromCurried<Curried>\n\t): Curried\n\n\t<Recipe extends AnyFunc>(recipe: Recipe): InferCurriedFromRecipe<\n\t\tRecipe,\n\t\tfalse\n\t>\n\n\t<State>(\n\t\trecipe: (\n\t\t\tstate: Draft<State>,\n\t\t\tinitialState: State\n\t\t) => ValidRecipeReturnType<State>\n\t): (state?: State) => State\n\t<State, Args extends any[]>(\n\t\trecipe: (\n\t\t\tstate: Draft<State>,\n\t\t\t...args: Args\n\t\t) => ValidRecipeReturnType<State>,\n\t\tinitialState: State\n\t): (state?: State, ...args: Args) => State\n\t<State>(recipe: (state: Draft<State>) => ValidRecipeReturnType<State>): (\n\t\tstate: State\n\t) => State\n\t<State, Args extends any[]>(\n\t\trecipe: (state: Draft<State>, ...args: Args) => ValidRecipeReturnType<State>\n\t): (state: State, ...args: Args) => State\n\n\t<State, Recipe extends Function>(\n\t\trecipe: Recipe,\n\t\tinitialState: State\n\t): InferCurriedFromInitialStateAndRecipe<State, Recipe, false>\n\n\t<Base, D = Draft<Base>>( // By using a default inferred D, rather than Draft<Base> in the recipe, we can override it.\n\t\tbase: Base,\n\t\trecipe: (draft: D) => ValidRecipeReturnType<D>,\n\t\tlistener?: PatchListener\n\t): Base\n}\n\n\nexport function neverUsed() {}\n',
}


def test_a_safe_delete_of_a_symbol_the_graphs_parse_lost_asks_the_server(tmp_path: Path) -> None:
    """Delete looked the symbol up in the graph by name, and tree-sitter had lost it: "nothing in
    the index is named" though the server's outline has it (immer's never_used)."""
    require("typescript-language-server")
    root = write_project(tmp_path / "project", UNPARSED_BY_TREE_SITTER)
    with served_engine(root, "typescript-language-server") as engine:
        plan = engine.plan(Delete("src/produce.ts:neverUsed"))
        engine.edits().apply(plan.edit)
    text = (root / "src" / "produce.ts").read_text()
    assert "neverUsed" not in text and "export interface IProduce {" in text
    tsc = shutil.which("tsc")
    if tsc is not None:
        checked = subprocess.run([tsc, "-p", "."], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr


BARREL_IMPORTS = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "noEmit": true}}\n',
    "src/internal.ts": 'export * from "./common"\nexport * from "./proxy"\n',
    "src/common.ts": "export interface State {\n\tcopy?: object\n\tbase: object\n}\n\n"
                     "export function latest(state: State): object {\n\treturn state.copy || state.base\n}\n\n"
                     "export function isObject(value: unknown): boolean {\n\treturn typeof value === \"object\"\n}\n",
    "src/proxy.ts": 'import {\n\tisObject,\n\tlatest,\n\tState\n} from "./internal"\n\n'
                    "export function peek(state: State): boolean {\n\treturn isObject(latest(state))\n}\n",
}


def test_a_move_into_a_file_that_imported_the_name_through_a_barrel_drops_that_import(tmp_path: Path) -> None:
    """tsserver's move appended ``latest`` to proxy.ts and left its ``import { latest } from
    "./internal"``: tsc failed with TS2440 (immer 10.1.1's latest and getCurrentScope)."""
    require("typescript-language-server")
    root = write_project(tmp_path / "project", BARREL_IMPORTS)
    with served_engine(root, "typescript-language-server") as engine:
        plan = engine.plan(Move("src/common.ts:latest", "src/proxy.ts"))
        engine.edits().apply(plan.edit)
    proxy = (root / "src" / "proxy.ts").read_text()
    assert proxy.startswith('import {\n\tisObject,\n\tState\n} from "./internal"\n'), proxy
    assert "export function latest(" in proxy and "latest" not in (root / "src" / "common.ts").read_text()
    tsc = shutil.which("tsc")
    if tsc is not None:
        checked = subprocess.run([tsc, "-p", "."], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr


SELF_IMPORTING = {
    "package.json": '{"name": "pkg", "version": "1.0.0", "types": "dist/index.d.ts"}\n',
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "esnext", '
                     '"moduleResolution": "bundler", "noEmit": true}, "include": ["src"]}\n',
    "src/index.ts": 'export { helper } from "./lib"\n',
    "src/lib.ts": "export function helper(value: number): number {\n  return value + 1\n}\n",
}


@pytest.mark.parametrize(("extra", "unseen"), [
    # zod's layout: tests under a config of another name, importing the package through its paths
    ({"tests/tsconfig.tests.json": '{"extends": "../tsconfig.json", "compilerOptions": {"paths": {"pkg": ["../src/index.ts"]}}, '
                                   '"include": ["."]}\n',
      "tests/lib.test.ts": 'import { helper } from "pkg"\n\nexport const two = helper(1)\n'}, "tests/lib.test.ts"),
    # a file in no config at all that imports the package by its own name (resolved to dist/)
    ({"examples/demo.ts": 'import { helper } from "pkg"\n\nconsole.log(helper(1))\n'}, "examples/demo.ts"),
])
def test_a_rename_the_server_cannot_see_through_a_self_import_is_refused(
        tmp_path: Path, extra: dict[str, str], unseen: str) -> None:
    """tsserver loads no config named tsconfig.tests.json, and resolves a loose file's import of
    the package's own name to its built output: zod's mini tests kept ``z.looseObject`` after
    its rename, and failed."""
    require("typescript-language-server")
    files = {**SELF_IMPORTING, **extra}
    root = write_project(tmp_path / "project", files)
    with served_engine(root, "typescript-language-server") as engine:
        with pytest.raises(Refused) as refused:
            engine.plan(Rename("src/lib.ts:helper", "increment"))
    assert refused.value.code == "project_not_loaded" and unseen in refused.value.message
    assert all((root / path).read_text() == text for path, text in files.items())


def test_typescript_language_server_runs_one_tsserver_and_no_syntax_server_beside_it(project: Path) -> None:
    """By default typescript-language-server starts a syntax-only tsserver (``--serverMode
    partialSemantic``) beside the one that loads the project. It answers while the project loads,
    with the open file's results alone, which codegraft never uses (it waits for the load), and on
    a loaded 2-core machine it competed with that load: told ``useSyntaxServer: never``, the cold
    rename plan's server was faster (benchmarks/RESULTS.md, "Cold start")."""
    with served_engine(project, "typescript-language-server") as engine:
        engine.plan(Rename("src/stack.ts:Stack/push", "add"))
        assert isinstance(engine.services, PoolServices)
        server = next(s for s in engine.services.api.pool.running() if s.spec.id == "typescript-language-server")
        assert server.connection is not None and server.connection.pid is not None
        tsservers = _group_commands(server.connection.pid, b"tsserver.js")
    assert len(tsservers) == 1, tsservers
    assert b"partialSemantic" not in tsservers[0]


def _group_commands(group: int, needle: bytes) -> list[bytes]:
    """The command lines holding ``needle`` of the processes in process group ``group``."""
    found = []
    for folder in Path("/proc").iterdir():
        if not folder.name.isdigit():
            continue
        try:
            stat = (folder / "stat").read_text()
            command = (folder / "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if int(stat.rpartition(")")[2].split()[2]) == group and needle in command:
            found.append(command.replace(b"\0", b" "))
    return found

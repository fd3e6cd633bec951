"""The check's scope narrowed for TypeScript and JavaScript (engine.edits.ts_statements; issue 43).

The names a TypeScript edit changes are a table; on real servers (typescript-language-server on
tsserver, and TypeScript 7's ``tsc --lsp``) an insert checks its file alone, a rename checks the
files naming it, and a break carried to an importer by a namespace import or by ``export *``,
through files that never name what changed, is in scope and caught."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

from engine.answers import TextEdit
from engine.edits.check_scope import changed_names, narrowed
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.session import EditOptions
from engine.edits.verification import CheckMode, Verification
from engine.api import Engine, SourcePreference
from engine.positions import Position, Range
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from tests.conftest import REPO
from tests.test_lsp_e2e import only, require
from tests.test_typescript7 import require_typescript7

_BASE = """import { helper } from './helper'

// the kind of a value
export function kindOf(val: any): string {
  return typeof val
}

export function inferred(val: any) {
  return helper(val)
}

export class Store {
  private count = 0
  dispatch(action: string): void { this.count += 1 }
}

export default Store
"""


@pytest.mark.parametrize("after, expected", [
    # A body under a declared return type, a method's body, a comment: no name changes.
    (_BASE.replace("return typeof val", "return String(typeof val)"), set()),
    (_BASE.replace("this.count += 1", "this.count += 2"), set()),
    (_BASE.replace("// the kind", "// The kind"), set()),
    # A body whose function's return type is inferred from it.
    (_BASE.replace("return helper(val)", "return 1"), {"inferred"}),
    (_BASE + "\nexport function added(): number {\n  return 1\n}\n", {"added"}),
    (_BASE.replace("kindOf", "describeKind"), {"kindOf", "describeKind"}),
    # A class's member: the class, and the default export that is the class.
    (_BASE.replace("dispatch(action: string)", "dispatch(action: number)"), {"Store", "default"}),
    (_BASE + "\nexports.legacy = 1\n", {"legacy"}),
    # What the module exports is no longer a list of names: every name may have changed.
    (_BASE + "\nexport * from './other'\n", None),
    (_BASE + "\ndeclare global {\n  interface Window { kind: string }\n}\n", None),
    (_BASE + "\nimport './polyfill'\n", None),
    ('/// <reference types="node" />\n' + _BASE, None),
    (_BASE + "\nexport function broken(: number {\n", None),
])
def test_the_names_a_typescript_edit_changes(after: str, expected: set[str] | None) -> None:
    found = changed_names("src/a.ts", _BASE.encode(), after.encode())
    assert (set(found) if found is not None else None) == expected


def test_a_javascript_body_and_its_jsdoc_change_its_name() -> None:
    """JavaScript infers from bodies and declares types in JSDoc comments: both are its interface."""
    before = "/** @returns {number} */\nexport function f() {\n  return 1\n}\n"
    assert changed_names("a.js", before.encode(), before.replace("return 1", "return 2").encode()) == {"f"}
    assert changed_names("a.js", before.encode(), before.replace("{number}", "{string}").encode()) == {"f"}


_TEXTS = {
    "counts.ts": "export const kind = 1\nexport const size = 2\n",
    "numbers.ts": "import * as counts from './counts'\n\nexport const all: Record<string, number> = counts\n",
    "reexport.ts": "export * from './counts'\n",
    "uses.ts": "import { kind } from './reexport'\n\nexport const doubled: number = kind * 2\n",
    "other.ts": "import { size } from './counts'\n\nexport const copy: number = size\n",
    "all.ts": "import { all } from './numbers'\n\nexport const total = Object.keys(all).length\n",
}
_IMPORTS = {"counts.ts": ["numbers.ts", "reexport.ts", "other.ts"], "reexport.ts": ["uses.ts"], "numbers.ts": ["all.ts"]}


def test_a_namespace_import_and_export_star_pass_any_name_on() -> None:
    """``kind`` changes: the namespace importer and the re-exporter never name it but see it,
    what takes the namespace's binding (all.ts, through ``all``) and what names ``kind`` through
    the re-exporter follow; other.ts, naming ``size`` alone, does not."""
    reached, beyond = narrowed({"counts.ts": frozenset({"kind"})}, lambda paths: _IMPORTS.get(paths[0], []),
                               lambda path: _TEXTS[path], 50)
    assert sorted(reached) == ["all.ts", "numbers.ts", "reexport.ts", "uses.ts"] and beyond == 0


def test_an_import_star_in_a_comment_or_a_string_takes_no_module() -> None:
    """redux's bindActionCreators.ts tells its users to ``import * as`` in its docs and messages."""
    texts = {"docs.ts": "/**\n * One way is to use `import * as` syntax.\n */\nconst hint = `use \"import * as X\"`\n"}
    reached, _ = narrowed({"a.ts": frozenset({"kind"})}, lambda paths: sorted(texts) if paths == ["a.ts"] else [],
                          lambda path: texts[path], 50)
    assert reached == []


def test_a_default_import_sees_the_default_export_whatever_it_calls_it() -> None:
    texts = {"thing.ts": "import Thing from './store'\n", "named.ts": "import { Other } from './store'\n"}
    reached, _ = narrowed({"store.ts": frozenset({"Store", "default"})}, lambda paths: sorted(texts) if paths == ["store.ts"] else [],
                          lambda path: texts[path], 50)
    assert reached == ["thing.ts"]


# -- real servers --------------------------------------------------------------------------------

_PROJECT = {
    "tsconfig.json": '{\n  "compilerOptions": {"strict": true, "target": "es2020", "module": "esnext", '
                     '"moduleResolution": "bundler", "noEmit": true},\n  "include": ["src"]\n}\n',
    "src/shapes.ts": "export function area(side: number): number {\n  return side * side\n}\n\n"
                     "export function perimeter(side: number): number {\n  return 4 * side\n}\n",
    "src/main.ts": "import { area } from './shapes'\n\nexport const unit: number = area(1)\n",
    "src/edge.ts": "import { perimeter } from './shapes'\n\nexport const edge: number = perimeter(1)\n",
    **{f"src/{name}": text for name, text in _TEXTS.items()},
}
_SERVERS = ["typescript-language-server", "typescript-7"]


@pytest.fixture(params=_SERVERS)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Engine, Path]]:
    """The project on tsserver (typescript-language-server) or, its lock file saying 7, on TypeScript 7."""
    config = PoolConfig()
    if request.param == "typescript-7":
        require_typescript7()
        for name in ("package.json", "package-lock.json"):
            shutil.copy(REPO / "fixtures" / "typescript7-project" / name, tmp_path / name)
    else:
        require("typescript-language-server")
        config = only("typescript-language-server")
    for path, text in _PROJECT.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    workspace = Workspace(tmp_path)
    engine = Engine(workspace, services=PoolServices(workspace, config), source=SourcePreference.AUTO)
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)  # the whole check is asserted
    try:
        yield engine, tmp_path
    finally:
        engine.close()


def _edit(root: Path, path: str, old: str, new: str) -> WorkspaceEdit:
    """``old``'s first occurrence in ``path`` replaced by ``new``."""
    data = (root / path).read_bytes()
    lines = data.decode().splitlines()
    line = next(n for n, row in enumerate(lines) if old in row)
    column = lines[line].index(old)
    return WorkspaceEdit((FileChange(path, (TextEdit(Range(Position(line, column), Position(line, column + len(old))), new),),
                                     hashlib.sha256(data).hexdigest()),))


def _applied(engine: Engine, edit: WorkspaceEdit) -> Verification:
    verified = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None
    return verified


def test_an_inserted_export_checks_its_file_alone(served: tuple[Engine, Path]) -> None:
    engine, root = served
    verified = _applied(engine, _edit(root, "src/shapes.ts", "export function perimeter",
                                      "export function added(): number {\n  return 3\n}\n\nexport function perimeter"))
    assert verified.in_scope == verified.checked == ("src/shapes.ts",), verified.to_json()
    assert verified.not_affected == 2 and not verified.new_errors  # main.ts and edge.ts


def test_a_rename_checks_the_files_naming_it(served: tuple[Engine, Path]) -> None:
    engine, root = served
    plan = engine.plan(Rename("src/shapes.ts:area", "surface"))
    verified = _applied(engine, plan.edit)
    assert sorted(verified.in_scope) == sorted(verified.checked) == ["src/main.ts", "src/shapes.ts"], verified.to_json()
    assert verified.not_affected == 1 and not verified.new_errors  # edge.ts names perimeter alone
    assert "surface(1)" in (root / "src/main.ts").read_text()


def test_a_break_through_a_namespace_import_or_export_star_is_caught(served: tuple[Engine, Path]) -> None:
    """counts.ts's ``kind`` becomes a string: numbers.ts (``import * as``) and uses.ts (through
    reexport.ts's ``export *``) break, and neither the namespace importer nor the re-exporter names it."""
    engine, root = served
    verified = _applied(engine, _edit(root, "src/counts.ts", "kind = 1", "kind = 'one'"))
    assert {d.file for d in verified.new_errors} == {"src/numbers.ts", "src/uses.ts"}, verified.to_json()
    assert set(verified.in_scope) == {"src/counts.ts", "src/numbers.ts", "src/reexport.ts", "src/uses.ts", "src/all.ts"}
    assert verified.not_affected == 1  # other.ts names size alone

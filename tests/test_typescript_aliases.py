"""A TypeScript move's new import paths in a project whose imports go through its ``paths`` aliases
(issue 40, item 6's "the paths alias it already uses"): tsserver keeps an importer's alias when the
destination is under the same alias, but for a destination no alias covers it wrote a bare
``baseUrl`` specifier (``'src/deep/er/dest'``), which a test runner without path mapping cannot
resolve. Such a specifier is written through the alias that covers the file, else relative."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from engine.answers import TextEdit
from engine.edits.model import FileChange, WorkspaceEdit
from engine.positions import Position, Range
from engine.refactor.operations.move_symbol import Move
from engine.refactor.typescript.specifiers import aliased_specifiers
from tests.test_lsp_e2e import require, served_engine
from tests.test_typescript_projects import write_project

ALIASED = {
    "tsconfig.json": ('{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "noEmit": true, '
                      '"baseUrl": ".", "paths": {"@lib/*": ["src/lib/*"]}}, "include": ["src"]}\n'),
    "src/lib/helpers.ts": "export function helper(n: number): number {\n  return n;\n}\n",
    "src/lib/utils.ts": ('import { helper } from "@lib/helpers";\n\n'
                         "export function pad(text: string, width: number): string {\n"
                         '  return " ".repeat(helper(Math.max(0, width - text.length))) + text;\n'
                         "}\n\n"
                         "export function shout(text: string): string {\n  return text.toUpperCase();\n}\n"),
    "src/app/main.ts": ('import { pad, shout } from "@lib/utils";\n\n'
                        "export function banner(text: string): string {\n  return pad(shout(text), 10);\n}\n"),
    "src/deep/er/dest.ts": "export const X = 1;\n",
}


def test_a_move_to_a_file_no_alias_covers_writes_relative_imports_not_bare_base_url_ones(tmp_path: Path) -> None:
    require("typescript-language-server")
    root = write_project(tmp_path / "project", ALIASED)
    with served_engine(root, "typescript-language-server") as engine:
        plan = engine.plan(Move("src/lib/utils.ts:pad", "src/deep/er/dest.ts"))
        engine.edits().apply(plan.edit)
    main = (root / "src" / "app" / "main.ts").read_text()
    assert 'import { pad } from "../deep/er/dest";' in main and "src/deep" not in main, main
    assert 'import { helper } from "@lib/helpers";' in (root / "src" / "deep" / "er" / "dest.ts").read_text()
    assert any("written '../deep/er/dest'" in warning and "none covers that file" in warning for warning in plan.warnings)
    tsc = shutil.which("tsc")
    if tsc is not None:
        checked = subprocess.run([tsc, "-p", "."], cwd=root, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_bare_base_url_specifier_of_a_file_an_alias_covers_is_written_through_the_alias(tmp_path: Path) -> None:
    files = {**ALIASED, "tsconfig.json": ALIASED["tsconfig.json"].replace(
        '"@lib/*": ["src/lib/*"]', '"@lib/*": ["src/lib/*"], "@deep/*": ["src/deep/*"]')}
    root = write_project(tmp_path / "project", files)
    line = 'import { pad } from "src/deep/er/dest";\n'
    edit = WorkspaceEdit((FileChange("src/app/main.ts", (TextEdit(Range(Position(0, 0), Position(0, 0)), line),)),))
    rewritten, notes = aliased_specifiers(root, edit, set())
    (change,) = rewritten.operations
    assert isinstance(change, FileChange)
    assert change.edits[0].new_text == 'import { pad } from "@deep/er/dest";\n'
    assert notes == ["src/app/main.ts: the server wrote 'src/deep/er/dest' (through baseUrl); written '@deep/er/dest', as "
                     "the project's imports go through its paths aliases"]
    untouched, none = aliased_specifiers(root, WorkspaceEdit((FileChange("src/app/main.ts", (TextEdit(
        Range(Position(0, 0), Position(0, 0)), 'import { pad } from "@lib/utils";\n'),)),)), set())
    assert none == [] and untouched.operations[0] == FileChange("src/app/main.ts", (TextEdit(
        Range(Position(0, 0), Position(0, 0)), 'import { pad } from "@lib/utils";\n'),))

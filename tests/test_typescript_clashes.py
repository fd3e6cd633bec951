"""TypeScript renames that would make a name clash are refused, listing it (issue 40, item 3).

tsserver applies these renames without a word; each broke a real project's build (80 tsc errors
for one export collision). The plans are made by the real server, the checks are codegraft's
(engine/refactor/typescript/clashes.py). Nothing is applied: one server serves every case.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from engine.api import Engine
from engine.edits.model import FileChange, paths_of
from engine.errors import Refused
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.rename import NameClash
from tests.test_lsp_e2e import require, served_engine
from tests.test_typescript_projects import write_project

pytestmark = pytest.mark.e2e

FILES = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs", "noEmit": true}}\n',
    "src/clamp.ts": (
        "export function clamp(value: number, max: number): number {\n"
        "  const limit = 100;\n"
        "  return Math.min(value, max, limit);\n"
        "}\n"
    ),
    "src/clip.ts": (
        "const limit = 10;\n"
        "\n"
        "export function clip(value: number, max = limit): number {\n"
        "  return Math.min(value, max);\n"
        "}\n"
    ),
    "src/grow.ts": (
        "const scale = 2;\n"
        "export const total = 1;\n"
        "\n"
        "export function grow(size: number): number {\n"
        "  const factor = 3;\n"
        "  const sum = size * factor * scale;\n"
        "  return total + sum;\n"
        "}\n"
    ),
    "src/ids.ts": "export function makeId(): string {\n  return \"a\";\n}\n\nexport const createId = (): string => \"b\";\n",
    "src/alpha.ts": "export function alpha(): number {\n  return 1;\n}\n",
    "src/beta.ts": "export function beta(): number {\n  return 2;\n}\n",
    "src/index.ts": 'export * from "./alpha";\nexport * from "./beta";\n',
    "src/shape.ts": "export class Shape {\n  width = 1;\n  height = 2;\n\n  area(): number {\n    return this.width * this.height;\n  }\n}\n",
    "src/box.ts": (
        "export interface Box {\n"
        "  height: number;\n"
        "}\n"
        "\n"
        "export function make(): Box {\n"
        "  const height = 2;\n"
        "  return { height };\n"
        "}\n"
        "\n"
        "export function read({ height }: Box): number {\n"
        "  return height;\n"
        "}\n"
    ),
    "app.ts": 'import { alpha, beta } from "./src/index";\nimport { clip } from "./src/clip";\n\nexport const sum = alpha() + beta() + clip(3);\n',
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    require("typescript-language-server")
    root = write_project(tmp_path_factory.mktemp("clashes") / "project", FILES)
    with served_engine(root, "typescript-language-server") as served:
        yield served


def refused(engine: Engine, address: str, new_name: str) -> str:
    with pytest.raises(NameClash) as raised:
        engine.plan(Rename(address, new_name))
    assert raised.value.code == "name_clash"
    return raised.value.message


def test_a_parameter_renamed_onto_a_local_of_its_function(engine: Engine) -> None:
    message = refused(engine, "src/clamp.ts:1:38", "limit")  # max
    assert "src/clamp.ts:1: limit is already declared in this scope (line 2)" in message


def test_a_parameter_renamed_to_an_outer_name_its_default_reads(engine: Engine) -> None:
    message = refused(engine, "src/clip.ts:3:37", "limit")  # max, whose default is the outer limit
    assert "src/clip.ts:3: this use of limit (the const of line 1) would mean the renamed parameter" in message
    assert "temporal-dead-zone" in message


def test_a_local_renamed_to_an_outer_name_used_inside(engine: Engine) -> None:
    message = refused(engine, "src/grow.ts:5:9", "scale")  # factor
    assert "src/grow.ts:6: this use of scale (the const of line 1) would mean the renamed const of line 5" in message


def test_an_outer_name_renamed_onto_a_local_that_would_capture_its_use(engine: Engine) -> None:
    message = refused(engine, "src/grow.ts:total", "sum")
    assert "src/grow.ts:7: this use of total would be renamed to sum, which here means the const sum of line 6" in message


def test_a_rename_onto_an_export_of_the_same_module(engine: Engine) -> None:
    # By position: a name path is refused earlier, by its siblings in the outline.
    message = refused(engine, "src/ids.ts:1:17", "createId")
    assert "src/ids.ts:1: createId is already declared in this scope (line 5)" in message


def test_a_rename_onto_a_name_another_module_of_the_same_barrel_exports(engine: Engine) -> None:
    message = refused(engine, "src/alpha.ts:alpha", "beta")
    assert "src/index.ts would export beta twice" in message


def test_a_member_renamed_onto_another_member(engine: Engine) -> None:
    message = refused(engine, "src/shape.ts:2:3", "height")
    assert "src/shape.ts:2: height is already a member here (line 3)" in message


def test_a_rename_without_a_clash_is_planned(engine: Engine) -> None:
    plan = engine.plan(Rename("src/clip.ts:3:37", "ceiling"))
    assert {path for change in plan.edit.operations for path in paths_of(change)} == {"src/clip.ts"}
    plan = engine.plan(Rename("src/alpha.ts:alpha", "first"))
    assert {path for change in plan.edit.operations for path in paths_of(change)} == {"src/alpha.ts", "app.ts"}


def new_texts(engine: Engine, rename: Rename) -> dict[int, str]:
    """Line (1-based) to new text of each edit a rename plans in src/box.ts."""
    plan = engine.plan(rename)
    return {e.range.start.line + 1: e.new_text for op in plan.edit.operations if isinstance(op, FileChange)
            and op.path == "src/box.ts" for e in op.edits}


def test_a_variable_renamed_in_an_object_shorthand_keeps_the_key(engine: Engine) -> None:
    """Told to rename for real, tsserver writes { tall } for the variable height: the object's key changed."""
    assert new_texts(engine, Rename("src/box.ts:6:9", "tall")) == {6: "tall", 7: "height: tall"}


def test_a_property_renamed_in_an_object_shorthand_keeps_the_variable(engine: Engine) -> None:
    """tsserver wrote { tall }, naming a variable that does not exist."""
    renamed = new_texts(engine, Rename("src/box.ts:Box/height", "tall"))
    assert renamed[7] == "tall: height" and renamed[2] == "tall"


def test_a_local_destructured_from_a_property_is_refused_rather_than_renaming_the_property(engine: Engine) -> None:
    """tsserver renames the interface's property everywhere when the local of { height } is renamed."""
    with pytest.raises(Refused) as refused:
        engine.plan(Rename("src/box.ts:11:10", "size"))
    assert refused.value.code == "rename_reaches_property"
    assert "src/box.ts:2" in refused.value.message and "{ height: size }" in refused.value.message

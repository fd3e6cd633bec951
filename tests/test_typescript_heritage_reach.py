"""A TypeScript member's rename and inheritance, the leftovers of issue 40's session 26, on the
real servers: tsserver (through typescript-language-server) and TypeScript 7's ``tsc --lsp``.

- A base reached through a default export (``export default class Base``, ``export { Plain as
  default }``, imported under any name) or a constant (``const B = Base``) is followed down the
  chain like an import alias: an interface member's rename that such a subclass fits with the
  inherited member is refused, naming the chain; a base member's rename renames the interface. A
  class with no name (``export default class extends Base``) that fits cannot be followed: refused.
  Before, these subclasses were not seen, and the rename broke tsc (TS2741) silently.
- An interface member's rename follows a class that fits the interface only where a file that
  names both sees both files (is one of them, or imports them, directly or through a barrel), as
  the reverse direction does. Before, a class that fits a same-named interface in an unrelated
  part of the project was renamed with it, and tsc broke there. A global interface (a script's,
  ``declare global``'s) is seen by every file.
- Interfaces declared inside blocks (a namespace, an arrow function's body) are found both ways: before,
  only statement-level ones (and not a top-level ``namespace``'s, which tree-sitter puts inside an
  expression statement) were, and the rename broke tsc.
- A class member's rename where the class fits an interface declared outside the workspace (the
  library's ``Iterator`` and ``PromiseLike``, a dependency's ``.d.ts``), which some file names with
  it: refused ``fits_outside_interface``, naming the interface where the server's definition puts
  it. Before, the server renamed the class's member alone and tsc broke (TS2741). A ``then`` that
  no file names with an outside interface is warned about (``await`` unwraps a thenable).
Skipped, with the reason, when a server is not installed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engine.errors import Refused
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.typescript.outside_interfaces import FitsOutsideInterface
from lsp_pool.typescript7 import TSC_LSP
from tests.test_typescript_implementers import _engine, _project, _snapshot, _tsc

pytestmark = pytest.mark.e2e
BACKENDS = ["typescript-language-server", TSC_LSP]

DEFAULTS = {
    # Base has `area` but no `name`: it does not fit Shape, the classes below it do.
    "src/base.ts": 'export default class Base {\n  area(): number {\n    return 2;\n  }\n}\n',
    # A default export imported under a name of its own.
    "src/defaulted.ts": ('import Foundation from "./base";\n\nexport class Defaulted extends Foundation {\n'
                         '  name = "defaulted";\n}\n'),
    # A constant set to the base.
    "src/constant.ts": ('import Base from "./base";\n\nconst Kept = Base;\n\nexport class Constant extends Kept {\n'
                        '  name = "constant";\n}\n'),
    # `export { Plain as default }`, imported as P.
    "src/plain.ts": 'class Plain {\n  area(): number {\n    return 3;\n  }\n}\n\nexport { Plain as default };\n',
    "src/plained.ts": 'import P from "./plain";\n\nexport class Plained extends P {\n  name = "plained";\n}\n',
    # A class with no name, exported by default: it cannot be followed to where it is used.
    "src/anonymous.ts": 'import Base from "./base";\n\nexport default class extends Base {\n  name = "anonymous";\n}\n',
    "src/use.ts": ('import { Shape } from "./shape";\nimport { Defaulted } from "./defaulted";\n'
                   'import { Constant } from "./constant";\nimport { Plained } from "./plained";\n'
                   'import Anonymous from "./anonymous";\n\n'
                   "export const all: Shape[] = [new Defaulted(), new Constant(), new Plained(), new Anonymous()];\n"),
}


def _with(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_member_inherited_through_a_default_export_or_a_constant_is_refused_naming_the_chain(tmp_path: Path,
                                                                                               backend: str) -> None:
    _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), DEFAULTS)
    before = _snapshot(root)
    engine = _engine(root)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(Rename("src/shape.ts:Shape/area", "surface"))
    finally:
        engine.close()
    assert refused.value.code == "implementations_left_behind", refused.value.message
    why = "inherited from {} at src/{}.ts:2, which does not fit Shape itself"
    assert refused.value.to_json()["members"] == [
        f"src/anonymous.ts:3 ((a class with no name).area, {why.format('Base', 'base')}, and it has no name to follow "
        "to where it is used as Shape)",
        f"src/constant.ts:5 (Constant.area, {why.format('Base', 'base')})",
        f"src/defaulted.ts:3 (Defaulted.area, {why.format('Base', 'base')})",
        f"src/plained.ts:3 (Plained.area, {why.format('Plain', 'plain')})"], refused.value.message
    assert _snapshot(root) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_default_exported_base_members_rename_renames_the_interface_its_subclasses_fit(tmp_path: Path,
                                                                                         backend: str) -> None:
    """Base.area is what Defaulted and Constant fit Shape with: renaming it renames Shape.area too."""
    tsc = _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), DEFAULTS)
    (root / "src" / "plained.ts").unlink()
    (root / "src" / "anonymous.ts").unlink()
    (root / "src" / "use.ts").write_text(DEFAULTS["src/use.ts"].replace('import { Plained } from "./plained";\n', "")
                                         .replace('import Anonymous from "./anonymous";\n', "")
                                         .replace(", new Plained(), new Anonymous()", ""))
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/base.ts:Base/area", "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert "src/shape.ts:2 Shape.area (" in "\n".join(plan.warnings), plan.warnings
    assert "surface(): number;" in (root / "src" / "shape.ts").read_text()
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


ELSEWHERE = {
    # Another Shape, unrelated to src/shape.ts, and a class that fits it where it is used as one.
    "src/other/shape.ts": "export interface Shape {\n  area(): number;\n  name: string;\n}\n",
    "src/other/ring.ts": 'export class Ring {\n  name = "ring";\n  area(): number {\n    return 7;\n  }\n}\n',
    "src/other/use.ts": ('import { Shape } from "./shape";\nimport { Ring } from "./ring";\n\n'
                         "export const ring: Shape = new Ring();\n"),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_fitting_a_same_named_interface_elsewhere_is_not_renamed_with_it(tmp_path: Path, backend: str) -> None:
    tsc = _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), ELSEWHERE)
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/shape.ts:Shape/area", "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    for path, text in ELSEWHERE.items():
        assert (root / path).read_text() == text, path
    note = next((warning for warning in plan.warnings if "satisfies Shape structurally" in warning), "")
    assert "Ring" not in note, note
    # The real fits are still followed.
    for followed in ("src/square.ts:4 Square.area", "src/disc.ts:3 Disc.area", "src/presets.ts:3 unit.area"):
        assert followed in note, plan.warnings
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


NESTED = {
    # A namespace's interface (tree-sitter puts a namespace statement inside an expression
    # statement), and a class that fits it where it is used as one.
    "src/geometry.ts": ("namespace Geometry {\n  export interface Solid {\n    volume(): number;\n"
                        "    name: string;\n  }\n}\n\nexport { Geometry };\n"),
    "src/cube.ts": 'export class Cube {\n  name = "cube";\n  volume(): number {\n    return 1;\n  }\n}\n',
    "src/solids.ts": ('import { Geometry } from "./geometry";\nimport { Cube } from "./cube";\n\n'
                      "export const solid: Geometry.Solid = new Cube();\n"),
    # An arrow function's own interface, which Cube meets inside it.
    "src/measure.ts": ('import { Cube } from "./cube";\n\nexport const measure = (cube: Cube): number => {\n'
                       "  interface Sized {\n    volume(): number;\n    name: string;\n  }\n"
                       "  const sized: Sized = cube;\n  return sized.volume();\n};\n"),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_namespaced_interfaces_member_rename_follows_the_class_that_fits_it(tmp_path: Path, backend: str) -> None:
    tsc = _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), NESTED)
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/geometry.ts:3:5", "capacity"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert "src/cube.ts:3 Cube.volume (src/solids.ts names Cube and Solid)" in "\n".join(plan.warnings), plan.warnings
    assert "volume" not in (root / "src" / "cube.ts").read_text()
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_members_rename_renames_a_functions_own_interface_it_fits(tmp_path: Path, backend: str) -> None:
    tsc = _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), NESTED)
    (root / "src" / "solids.ts").unlink()  # Solid's fit is the other test's
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/cube.ts:Cube/volume", "capacity"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert "src/measure.ts:5 Sized.volume (Cube fits it without `implements`; src/measure.ts names both)" in "\n".join(
        plan.warnings), plan.warnings
    assert "volume" not in (root / "src" / "measure.ts").read_text()
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


GLOBAL = {
    # A script (no import, no export): its interface is global, no file imports it.
    "src/globals.d.ts": "interface Drawable {\n  draw(): void;\n  name: string;\n}\n",
    # declare global inside a module.
    "src/printing.ts": ("export {};\n\ndeclare global {\n  interface Printable {\n    print(): void;\n"
                        "    name: string;\n  }\n}\n"),
    "src/pen.ts": ('export class Pen {\n  name = "pen";\n  draw(): void {}\n  print(): void {}\n}\n'),
    "src/canvas.ts": ('import { Pen } from "./pen";\n\nexport const drawn: Drawable = new Pen();\n'
                      "export const printed: Printable = new Pen();\n"),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_interfaces_fits_are_followed_both_ways(tmp_path: Path, backend: str) -> None:
    tsc = _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), GLOBAL)
    engine = _engine(root)
    try:
        drawn = engine.plan(Rename("src/globals.d.ts:Drawable/draw", "paint"))
        engine.edits().apply(drawn.edit)
        printed = engine.plan(Rename("src/pen.ts:Pen/print", "emit"))
        engine.edits().apply(printed.edit)
    finally:
        engine.close()
    assert "src/pen.ts:3 Pen.draw (src/canvas.ts names Pen and Drawable)" in "\n".join(drawn.warnings), drawn.warnings
    assert "src/printing.ts:5 Printable.print (Pen fits it without `implements`; src/canvas.ts names both)" in "\n".join(
        printed.warnings), printed.warnings
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


OUTSIDE = {
    "tsconfig.json": ('{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020", "module": "esnext", '
                      '"moduleResolution": "bundler"}, "include": ["src"]}\n'),
    "node_modules/dep/package.json": '{"name": "dep", "version": "1.0.0", "types": "index.d.ts"}\n',
    "node_modules/dep/index.d.ts": "export interface Sink {\n  push(value: number): void;\n  size: number;\n}\n",
    "src/countdown.ts": ("export class Countdown {\n  constructor(private left: number) {}\n"
                         "  next(): IteratorResult<number> {\n    this.left -= 1;\n"
                         "    return this.left < 0 ? { done: true, value: undefined } : { done: false, value: this.left };\n"
                         "  }\n}\n"),
    "src/deferred.ts": ("export class Deferred {\n  then<A = number, B = never>(done?: ((value: number) => A | PromiseLike<A>) | null,\n"
                        "    failed?: ((reason: unknown) => B | PromiseLike<B>) | null): PromiseLike<A | B> {\n"
                        "    return Promise.resolve(1).then(done, failed);\n  }\n}\n"),
    "src/bucket.ts": "export class Bucket {\n  size = 0;\n  push(value: number): void {\n    this.size += value;\n  }\n}\n",
    "src/uses.ts": ('import type { Sink } from "dep";\nimport { Countdown } from "./countdown";\n'
                    'import { Deferred } from "./deferred";\nimport { Bucket } from "./bucket";\n\n'
                    "export const counting: Iterator<number> = new Countdown(3);\n"
                    "export const later: PromiseLike<number> = new Deferred();\n"
                    "export const sink: Sink = new Bucket();\n"),
    # A thenable no file names with an outside interface: awaited only.
    "src/later.ts": ("export class Later {\n  then(done: (value: number) => void): void {\n    done(2);\n  }\n}\n\n"
                     "export async function wait(): Promise<number> {\n  return await new Later();\n}\n"),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_members_rename_that_an_outside_interface_needs_is_refused_naming_it(tmp_path: Path, backend: str) -> None:
    tsc = _tsc(backend)
    root = _with(_project(tmp_path / "p", typescript7=backend == TSC_LSP), OUTSIDE)
    assert subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, timeout=300).returncode == 0
    before = _snapshot(root)
    engine = _engine(root)
    refusals = {}
    try:
        for address in ("src/countdown.ts:Countdown/next", "src/deferred.ts:Deferred/then", "src/bucket.ts:Bucket/push"):
            with pytest.raises(Refused) as refused:
                engine.plan(Rename(address, "renamed"))
            refusals[address.split(":")[1]] = refused.value
        awaited = engine.plan(Rename("src/later.ts:Later/then", "settle"))
    finally:
        engine.close()
    expected = {"Countdown/next": ("src/countdown.ts:3 (Countdown.next, fits Iterator (", "lib.es2015.iterable.d.ts:", "src/uses.ts"),
                "Deferred/then": ("src/deferred.ts:2 (Deferred.then, fits PromiseLike (", "lib.es5.d.ts:", "src/deferred.ts"),
                "Bucket/push": ("src/bucket.ts:3 (Bucket.push, fits Sink (", "node_modules/dep/index.d.ts:1", "src/uses.ts")}
    for what, (start, where, naming) in expected.items():
        error = refusals[what]
        assert error.code == "fits_outside_interface", error.message
        assert isinstance(error, FitsOutsideInterface)
        [member] = error.listed
        assert member.startswith(start) and where in member, member
        assert member.endswith(f", outside the workspace) without `implements`, and {naming} names both)"), member
        assert "nothing was changed" in error.message
    assert "src/later.ts:2 Later.then: a value with a `then` method is a thenable" in "\n".join(awaited.warnings)
    assert _snapshot(root) == before

"""A TypeScript member's rename and inheritance, both ways (issue 40, item 4's leftovers), on the
real servers: tsserver (through typescript-language-server) and TypeScript 7's ``tsc --lsp``.

- An interface member's rename, where a class fits the interface with a member it inherits from a
  class that does not fit: it is refused (``implementations_left_behind``), however far down the
  class is and however it names its base (an import alias, a barrel's re-export under another
  name, a namespace). Before, only a direct base named by its own name was seen, and the others
  broke tsc (TS2741) silently. A class of the same name elsewhere is told apart by the server's
  definition request.
- A class member's rename (or an object constant's), where the class fits an interface without
  ``implements`` and some file names both: the interface's member is renamed too, and through it
  the interface's other fits, as the servers themselves do for a class that declares
  ``implements``. Before, the rename broke tsc where the class is used as the interface.
Skipped, with the reason, when a server is not installed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engine.errors import Refused
from engine.refactor.operations.rename_symbol import Rename
from lsp_pool.typescript7 import TSC_LSP
from tests.test_typescript_implementers import FILES, _engine, _project, _snapshot, _tsc

pytestmark = pytest.mark.e2e
BACKENDS = ["typescript-language-server", TSC_LSP]

INHERITED = {
    # Base has `area` but no `name`: it does not fit Shape, the classes below it do.
    "src/base.ts": ('export class Base {\n  area(): number {\n    return 2;\n  }\n}\n\n'
                    "export class Mid extends Base {}\n"),
    # Imported under another name.
    "src/aliased.ts": 'import { Base as B } from "./base";\n\nexport class Aliased extends B {\n  name = "aliased";\n}\n',
    # Two levels down, through Mid.
    "src/leaf.ts": 'import { Mid } from "./base";\n\nexport class Leaf extends Mid {\n  name = "leaf";\n}\n',
    # Through a barrel that re-exports Base under another name.
    "src/index.ts": 'export { Base as Foundation } from "./base";\n',
    "src/founded.ts": ('import { Foundation } from "./index";\n\nexport class Founded extends Foundation {\n'
                       '  name = "founded";\n}\n'),
    # Through a namespace import.
    "src/spotted.ts": ('import * as bases from "./base";\n\nexport class Spotted extends bases.Base {\n'
                       '  name = "spotted";\n}\n'),
    "src/use.ts": ('import { Shape } from "./shape";\nimport { Aliased } from "./aliased";\nimport { Leaf } from "./leaf";\n'
                   'import { Founded } from "./founded";\nimport { Spotted } from "./spotted";\n\n'
                   "export const all: Shape[] = [new Aliased(), new Leaf(), new Founded(), new Spotted()];\n"),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_member_inherited_beyond_the_direct_base_or_under_another_name_is_refused(tmp_path: Path, backend: str) -> None:
    _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    for path, text in INHERITED.items():
        (root / path).write_text(text)
    before = _snapshot(root)
    engine = _engine(root)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(Rename("src/shape.ts:Shape/area", "surface"))
    finally:
        engine.close()
    assert refused.value.code == "implementations_left_behind", refused.value.message
    why = "inherited from Base at src/base.ts:2{}, which does not fit Shape itself"
    assert refused.value.to_json()["members"] == [
        f"src/aliased.ts:3 (Aliased.area, {why.format('')})",
        f"src/founded.ts:3 (Founded.area, {why.format('')})",
        f"src/leaf.ts:3 (Leaf.area, {why.format(' through Mid')})",
        f"src/spotted.ts:3 (Spotted.area, {why.format('')})"], refused.value.message
    assert _snapshot(root) == before


SAME_NAME = {
    # Another class named Plot (src/plot.ts's Plot declares `area`): Odd gets nothing from
    # src/plot.ts, so it is no Shape and must not be taken for one.
    "src/other/plot.ts": "export class Plot {\n  size = 1;\n}\n",
    "src/other/odd.ts": 'import { Plot } from "./plot";\n\nexport class Odd extends Plot {\n  name = "odd";\n}\n',
    "src/pair.ts": ('import { Shape } from "./shape";\nimport { Odd } from "./other/odd";\n\n'
                    "export const pair: [Shape | null, Odd] = [null, new Odd()];\n"),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_of_the_same_name_elsewhere_is_not_taken_for_the_base(tmp_path: Path, backend: str) -> None:
    """The server's definition request, not the name, says which class an ``extends`` names."""
    tsc = _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    for path, text in SAME_NAME.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/shape.ts:Shape/area", "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert (root / "src" / "other" / "odd.ts").read_text() == SAME_NAME["src/other/odd.ts"]
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("address", ["src/square.ts:Square/area", "src/presets.ts:unit/area"])
def test_a_class_members_rename_renames_the_interface_it_fits_without_implements(tmp_path: Path, backend: str,
                                                                                 address: str) -> None:
    """Square (and the object ``unit``) meet Shape in report.ts: Shape.area is renamed with it, and
    through it Shape's uses, its ``implements`` class Tile and its other structural fits."""
    tsc = _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    engine = _engine(root)
    try:
        plan = engine.plan(Rename(address, "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    renamer = address.split(":")[1].split("/")[0]
    assert (f"src/shape.ts:2 Shape.area ({renamer} fits it without `implements`; src/report.ts names both)"
            in "\n".join(plan.warnings)), plan.warnings
    assert plan.confidence.value == "medium", plan.confidence
    assert "surface(): number;" in (root / "src" / "shape.ts").read_text()
    for path in ("src/square.ts", "src/disc.ts", "src/tile.ts", "src/presets.ts"):
        assert "area" not in (root / path).read_text(), path
    assert (root / "src" / "plot.ts").read_text() == FILES["src/plot.ts"]
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_with_structural_off_a_class_members_rename_is_refused_naming_the_interface(tmp_path: Path, backend: str) -> None:
    _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    before = _snapshot(root)
    engine = _engine(root)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(Rename("src/square.ts:Square/area", "surface", structural=False))
    finally:
        engine.close()
    assert refused.value.code == "implementations_left_behind", refused.value.message
    assert refused.value.to_json()["members"] == [
        "src/square.ts:4 (Square.area, fits Shape (src/shape.ts:2) without `implements`, and src/report.ts names both)"]
    assert "--no-structural" in refused.value.message and "Shape.area" in refused.value.message
    assert _snapshot(root) == before


CRATE = ('export interface Boxed {\n  area(): number;\n}\n\n'
         "export class Crate {\n  area(): number {\n    return 1;\n  }\n}\n\n"
         "export const boxed: Boxed = new Crate();\n")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_members_rename_is_refused_where_its_fit_says_little(tmp_path: Path, backend: str) -> None:
    """Boxed has no other member: any class with an ``area`` fits it, so its member is not renamed on
    that evidence, and the rename, which would break ``boxed``, is refused."""
    _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    (root / "src" / "crate.ts").write_text(CRATE)
    before = _snapshot(root)
    engine = _engine(root)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(Rename("src/crate.ts:Crate/area", "surface"))
    finally:
        engine.close()
    assert refused.value.code == "implementations_left_behind", refused.value.message
    assert refused.value.to_json()["members"] == [
        "src/crate.ts:6 (Crate.area, fits Boxed (src/crate.ts:2) without `implements`, and src/crate.ts names both, "
        "Boxed has no other required member: it fits Boxed by this one name alone)"], refused.value.message
    assert "cannot follow" in refused.value.message
    assert _snapshot(root) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_base_members_rename_renames_the_interface_its_subclasses_fit(tmp_path: Path, backend: str) -> None:
    """Base.area is what Aliased, Leaf, Founded and Spotted fit Shape with: renaming it renames Shape.area too."""
    tsc = _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    for path, text in INHERITED.items():
        (root / path).write_text(text)
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


CHANCE = {
    # Ring has Shape's members, but the only file that names both imports neither (zod's v3 classes
    # and v4 interfaces share names this way): Shape is not Ring's to rename.
    "src/ring.ts": 'export class Ring {\n  name = "ring";\n  area(): number {\n    return 7;\n  }\n}\n',
    "src/notes.ts": '// A Ring is drawn like a Shape, elsewhere.\nexport const caption = "rings";\n',
    "src/draw.ts": 'import { Ring } from "./ring";\n\nexport const drawn = new Ring().area();\n',
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_named_with_an_interface_only_where_neither_is_imported_leaves_the_interface(tmp_path: Path,
                                                                                            backend: str) -> None:
    tsc = _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    for path, text in CHANCE.items():
        (root / path).write_text(text)
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/ring.ts:Ring/area", "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert not any("also renamed" in warning for warning in plan.warnings), plan.warnings
    assert (root / "src" / "shape.ts").read_text() == FILES["src/shape.ts"]
    assert "new Ring().surface()" in (root / "src" / "draw.ts").read_text()
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr


THROUGH_A_BARREL = {
    "src/hoop.ts": 'export class Hoop {\n  name = "hoop";\n  area(): number {\n    return 8;\n  }\n}\n',
    "src/all.ts": 'export * from "./shape";\nexport { Hoop } from "./hoop";\n',
    # Names both, and sees both files through the barrel only.
    "src/hoops.ts": 'import { Shape, Hoop } from "./all";\n\nexport const hoop: Shape = new Hoop();\n',
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_class_met_as_an_interface_through_a_barrel_renames_the_interface(tmp_path: Path, backend: str) -> None:
    tsc = _tsc(backend)
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    for path, text in THROUGH_A_BARREL.items():
        (root / path).write_text(text)
    engine = _engine(root)
    try:
        plan = engine.plan(Rename("src/hoop.ts:Hoop/area", "surface"))
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert "src/shape.ts:2 Shape.area (Hoop fits it without `implements`; src/hoops.ts names both)" in "\n".join(
        plan.warnings), plan.warnings
    checked = subprocess.run([tsc, "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr

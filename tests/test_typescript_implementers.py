"""A TypeScript interface member's rename and the classes that satisfy the interface only
structurally, without ``implements`` (issue 40, item 4), on the real servers: tsserver (through
typescript-language-server) and TypeScript 7's ``tsc --lsp``.

Neither server renames such a class's member: before, the plan named it as a use not renamed and
the apply broke tsc where a ``Square`` is passed as a ``Shape``. Now the plan is refused as
``implementations_left_behind``, listing the member, and nothing is written. Skipped, with the
reason, when a server is not installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.errors import Refused
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.typescript7 import TSC_LSP
from tests.test_lsp_e2e import require
from tests.test_typescript7 import require_typescript7

pytestmark = pytest.mark.e2e

FILES = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020"}, "include": ["src"]}\n',
    "src/shape.ts": "export interface Shape {\n  area(): number;\n  name: string;\n  label?: string;\n}\n",
    # A Shape by structure alone: no `implements Shape`.
    "src/square.ts": ("export class Square {\n  name = \"square\";\n  constructor(private side: number) {}\n"
                      "  area(): number {\n    return this.side * this.side;\n  }\n}\n"),
    # A Shape by its parameter property `name`.
    "src/disc.ts": ("export class Disc {\n  constructor(public name: string, private r: number) {}\n"
                    "  area(): number {\n    return 3 * this.r * this.r;\n  }\n}\n"),
    # Has `area` but not `name`: not a Shape, never listed. `legend` has both, but no file that
    # names Shape names it: a fit by chance, not listed either.
    "src/plot.ts": ("export class Plot {\n  area(): number {\n    return 0;\n  }\n}\n\n"
                    'export const legend = { name: "legend", area: 0 };\n'),
    # An untyped object constant that meets Shape only where report.ts passes it.
    "src/presets.ts": 'export const unit = {\n  name: "unit",\n  area() {\n    return 1;\n  },\n};\n',
    # Declares `implements Shape`: the server renames it.
    "src/tile.ts": ('import { Shape } from "./shape";\n\nexport class Tile implements Shape {\n  name = "tile";\n'
                    "  area(): number {\n    return 1;\n  }\n}\n"),
    "src/report.ts": ('import { Shape } from "./shape";\nimport { Square } from "./square";\nimport { Disc } from "./disc";\n'
                      'import { Tile } from "./tile";\nimport { Plot } from "./plot";\nimport { unit } from "./presets";\n\n'
                      "export function total(shapes: Shape[]): number {\n"
                      "  return shapes.reduce((sum, shape) => sum + shape.area(), 0);\n}\n\n"
                      "export const sum = total([new Square(2), new Disc(\"d\", 1), new Tile(), unit]);\n"
                      'export const circle: Shape = { name: "circle", area: () => 3 };\n'
                      "export const plotted = new Plot().area();\n"),
}
TYPESCRIPT_7_LOCK = '{"lockfileVersion": 3, "packages": {"": {}, "node_modules/typescript": {"version": "7.0.2"}}}\n'


def _project(root: Path, typescript7: bool) -> Path:
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    if typescript7:
        (root / "package-lock.json").write_text(TYPESCRIPT_7_LOCK)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".graft" not in p.parts}


@pytest.mark.parametrize("backend", ["typescript-language-server", TSC_LSP])
def test_a_member_rename_is_refused_listing_the_classes_that_fit_without_implements(tmp_path: Path, backend: str) -> None:
    if backend == TSC_LSP:
        require_typescript7()
    else:
        require("typescript-language-server")
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    before = _snapshot(root)
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    try:
        with pytest.raises(Refused) as refused:
            engine.plan(Rename("src/shape.ts:Shape/area", "surface"))
    finally:
        engine.close()
    assert refused.value.code == "implementations_left_behind", refused.value.message
    message = refused.value.message
    assert "src/square.ts:4 (Square.area)" in message and "src/disc.ts:3 (Disc.area)" in message, message
    assert "src/presets.ts:3 (unit.area)" in message, message
    assert "Plot" not in message and "Tile" not in message and "legend" not in message, message
    assert refused.value.to_json()["members"] == ["src/disc.ts:3 (Disc.area)", "src/presets.ts:3 (unit.area)",
                                                   "src/square.ts:4 (Square.area)"]
    assert _snapshot(root) == before


@pytest.mark.parametrize("backend", ["typescript-language-server", TSC_LSP])
def test_once_they_declare_implements_the_rename_reaches_them_and_tsc_stays_clean(tmp_path: Path, backend: str) -> None:
    """The way out the refusal names: each class says ``implements Shape`` (the object is typed as
    one); the server renames them all."""
    if backend == TSC_LSP:
        tsc = require_typescript7()[0]
    else:
        require("typescript-language-server")
        tsc = shutil.which("tsc") or pytest.skip("tsc is not installed (.ci/install-servers)")
    root = _project(tmp_path / "p", typescript7=backend == TSC_LSP)
    for path, name in (("src/square.ts", "Square"), ("src/disc.ts", "Disc")):
        text = (root / path).read_text().replace(f"export class {name} {{", f"export class {name} implements Shape {{")
        (root / path).write_text(f'import {{ Shape }} from "./shape";\n\n{text}')
    presets = (root / "src" / "presets.ts").read_text().replace("export const unit = {", "export const unit: Shape = {")
    (root / "src" / "presets.ts").write_text(f'import {{ Shape }} from "./shape";\n\n{presets}')
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, PoolConfig()), source=SourcePreference.LSP)
    try:
        plan = engine.plan(Rename("src/shape.ts:Shape/area", "surface"))
        assert f"from {backend}" in plan.warnings, plan.warnings
        engine.edits().apply(plan.edit)
    finally:
        engine.close()
    assert "area" not in (root / "src" / "square.ts").read_text() + (root / "src" / "disc.ts").read_text()
    assert "surface()" in (root / "src" / "presets.ts").read_text()
    assert "area()" in (root / "src" / "plot.ts").read_text()
    checked = subprocess.run([str(tsc), "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr

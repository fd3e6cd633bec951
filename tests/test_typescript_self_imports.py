"""The import of a moved name that its destination had (engine.refactor.typescript.self_imports):
removed with its separator whatever its place in the list, the whole statement when alone."""

from __future__ import annotations

import pytest

from engine.answers import TextEdit
from engine.edits.text import apply_text_edits
from engine.positions import Position, Range
from engine.refactor.typescript.self_imports import self_import_removals


@pytest.mark.parametrize(("before", "after"), [
    ('import { latest, each } from "./internal"\nlatest\n', 'import { each } from "./internal"\nlatest\n'),
    ('import { each, latest } from "./internal";\nlatest\n', 'import { each } from "./internal";\nlatest\n'),
    ("import {\n\teach,\n\tlatest,\n} from '../internal'\n", "import {\n\teach,\n} from '../internal'\n"),
    ("import {\n\teach,\n\tlatest as newest,\n\tis\n} from '../internal'\n", "import {\n\teach,\n\tlatest as newest,\n\tis\n} from '../internal'\n"),
    ("import { type latest } from './x'\nconst a = 1\n", "const a = 1\n"),
    ("import { other as latest } from './x'\n", ""),
])
def test_the_destinations_import_of_the_moved_name_goes(before: str, after: str) -> None:
    removals = self_import_removals(before, (), "latest", "dest.ts")
    assert all(r.edit is not None for r in removals)
    assert apply_text_edits(before, tuple(r.edit for r in removals if r.edit is not None), "\n") == after


def test_an_import_the_servers_edit_touches_is_a_conflict_not_a_second_rewrite() -> None:
    text = 'import { latest, each } from "./internal"\n'
    server = (TextEdit(Range(Position(0, 9), Position(0, 9)), "is, "),)
    [removal] = self_import_removals(text, server, "latest", "dest.ts")
    assert removal.edit is None and removal.conflict.startswith("dest.ts:1 imports latest")

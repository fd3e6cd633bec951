"""The real-project benchmark's judge (benchmarks/bench_real_projects.py, stale_references.py),
checked on a tiny package built in tmp_path: no network, no corpus, no engine run.

Each refactoring is done by hand (files rewritten to the moved/renamed state, or to a broken
one), then judged. The stale importers live in modules the tiny suite never imports: that is
where a test suite cannot see a stale reference and the judge must.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
if TYPE_CHECKING:  # mypy knows benchmarks/ as the package it is; pytest imports the module from sys.path, as before
    from benchmarks import bench_real_projects as bench
    from benchmarks import stale_references as stale
else:
    import bench_real_projects as bench
    import stale_references as stale

PROJECT: dict[str, object] = {"name": "tiny", "version": "0", "tests": ["tests"]}
MOVE: dict[str, object] = {"op": "move", "address": "pkg/a.py:f", "dest": "pkg/c.py", "old": "f", "module": "pkg.a"}
RENAME: dict[str, object] = {"op": "rename", "address": "pkg/a.py:old_name", "new_name": "new_name", "old": "old_name",
                             "remaining": 2, "remaining_at": ["pkg/c.py:2", "pkg/c.py:3"]}


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


PRISTINE = {
    "pytest.ini": "[pytest]\n",
    "pkg/__init__.py": dedent("""
        from .a import f, old_name

        __all__ = ["f", "old_name"]
        """),
    "pkg/a.py": dedent("""
        def g():
            return 1


        def f(x):
            return x + g()


        def old_name():
            return "a"


        def caller():
            return old_name()
        """),
    # Imported by the suite: every form of importing f and old_name.
    "pkg/b.py": dedent("""
        import pkg.a as m
        from pkg import a
        from pkg.a import (
            old_name,
            f,
        )


        def use():
            return f(1) + m.f(2) + a.f(3)


        def label():
            return old_name() + m.old_name()
        """),
    # The move's destination; its local old_name is a homonym a rename must leave.
    "pkg/c.py": dedent("""
        def h():
            old_name = 0
            return old_name
        """),
    # Never imported by the suite.
    "pkg/d.py": dedent("""
        from .a import (
            g,
            f,
        )


        def twice():
            return f(g())
        """),
    "pkg/e.py": dedent("""
        import pkg
        import pkg.a as m
        from pkg import old_name
        from pkg.a import (
            g,
            f,
        )


        def shout():
            return m.old_name().upper() + old_name() + str(pkg.a.f(0) + f(g()))
        """),
    "tests/test_x.py": dedent("""
        from pkg import f
        from pkg.b import label, use


        def test_it():
            assert f(1) == 2
            assert use() == 9
            assert label() == "aa"
        """),
}

MOVED = {
    "pkg/__init__.py": dedent("""
        from .a import old_name
        from .c import f

        __all__ = ["f", "old_name"]
        """),
    "pkg/a.py": dedent("""
        def g():
            return 1


        def old_name():
            return "a"


        def caller():
            return old_name()
        """),
    "pkg/b.py": dedent("""
        import pkg.a as m
        import pkg.c as mc
        from pkg import c
        from pkg.a import (
            old_name,
        )
        from pkg.c import f


        def use():
            return f(1) + mc.f(2) + c.f(3)


        def label():
            return old_name() + m.old_name()
        """),
    "pkg/c.py": dedent("""
        from pkg.a import g


        def h():
            old_name = 0
            return old_name


        def f(x):
            return x + g()
        """),
    "pkg/d.py": dedent("""
        from .a import (
            g,
        )
        from .c import f


        def twice():
            return f(g())
        """),
    "pkg/e.py": dedent("""
        import pkg
        import pkg.a as m
        import pkg.c
        from pkg import old_name
        from pkg.a import (
            g,
        )
        from pkg.c import f


        def shout():
            return m.old_name().upper() + old_name() + str(pkg.c.f(0) + f(g()))
        """),
}


def renamed(text: str) -> str:
    return text.replace("old_name", "new_name")


RENAMED = {path: renamed(PRISTINE[path]) for path in ("pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/e.py")}


@dataclass
class Tiny:
    root: Path
    before: dict[str, str]

    def write(self, files: dict[str, str]) -> None:
        for path, text in files.items():
            target = self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def judge(self, case: dict[str, object]) -> str:
        return bench.judge(self.root, self.before, PROJECT, case, 1)


@pytest.fixture
def tiny(tmp_path: Path) -> Iterator[Tiny]:
    project = Tiny(tmp_path / "tiny", {})
    project.write(PRISTINE)
    project.before = bench.digest(project.root)
    saved = dict(bench.PRISTINE)
    bench.PRISTINE.clear()
    bench.PRISTINE.update({p: t for p, t in PRISTINE.items() if p.endswith(".py")})
    yield project
    bench.PRISTINE.clear()
    bench.PRISTINE.update(saved)


def test_the_tiny_project_is_green_before_any_refactoring(tiny: Tiny) -> None:
    green, count, tail = bench.run_tests(tiny.root, PROJECT)
    assert (green, count) == (True, 1), tail


# -- moves ---------------------------------------------------------------------------


def test_a_correct_move_passes(tiny: Tiny) -> None:
    tiny.write(MOVED)
    assert tiny.judge(MOVE) == ""


def test_a_no_op_move_fails(tiny: Tiny) -> None:
    assert tiny.judge(MOVE) == "no-op: no file changed"


def test_a_copy_instead_of_a_move_fails(tiny: Tiny) -> None:
    tiny.write({"pkg/c.py": MOVED["pkg/c.py"]})
    assert tiny.judge(MOVE).startswith("copied, not moved: f is still defined in pkg/a.py and now also in pkg/c.py")


def test_a_move_that_loses_the_definition_fails(tiny: Tiny) -> None:
    tiny.write({path: text for path, text in MOVED.items() if path != "pkg/c.py"})
    assert tiny.judge(MOVE).startswith("lost: f is defined in neither")


def test_a_move_leaving_a_relative_parenthesised_import_fails(tiny: Tiny) -> None:
    tiny.write({**MOVED, "pkg/d.py": PRISTINE["pkg/d.py"]})
    why = tiny.judge(MOVE)
    assert why.startswith("stale references to f:"), why
    assert "pkg/d.py:3: from pkg.a import f" in why  # line 3: the alias, not the `from` line


def test_a_move_leaving_an_absolute_parenthesised_import_and_an_attribute_fails(tiny: Tiny) -> None:
    tiny.write({**MOVED, "pkg/e.py": PRISTINE["pkg/e.py"]})
    why = tiny.judge(MOVE)
    assert "pkg/e.py:6: from pkg.a import f" in why, why
    assert "pkg/e.py:11: pkg.a.f (pkg.a.f)" in why, why


def test_a_move_leaving_a_module_alias_attribute_fails(tiny: Tiny) -> None:
    tiny.write({**MOVED, "pkg/d.py": MOVED["pkg/d.py"] + "\n\nimport pkg.a as alias\n\n\ndef late():\n    return alias.f(1)\n"})
    assert "pkg/d.py:15: alias.f (pkg.a.f)" in tiny.judge(MOVE)


def test_a_moved_name_is_still_reachable_through_a_repointed_re_export(tiny: Tiny) -> None:
    """tests/test_x.py keeps ``from pkg import f``: pkg/__init__.py now takes f from pkg.c."""
    tiny.write(MOVED)
    assert stale.stale_references(tiny.root, MOVE, bench.PRISTINE) == []


def test_a_move_that_drops_the_re_export_leaves_its_users_stale(tiny: Tiny) -> None:
    tiny.write({**MOVED, "pkg/__init__.py": 'from .a import old_name\n\n__all__ = ["f", "old_name"]\n'})
    found = stale.stale_references(tiny.root, MOVE, bench.PRISTINE)
    assert "pkg/__init__.py:3: __all__ lists 'f'" in found
    assert "tests/test_x.py:1: from pkg import f" in found


# -- renames -------------------------------------------------------------------------


def test_a_correct_rename_passes(tiny: Tiny) -> None:
    tiny.write(RENAMED)
    assert tiny.judge(RENAME) == ""


def test_a_correct_rename_passes_by_count_too(tiny: Tiny) -> None:
    tiny.write(RENAMED)
    assert tiny.judge({k: v for k, v in RENAME.items() if k != "remaining_at"}) == ""


def test_a_rename_leaving_a_module_alias_attribute_fails(tiny: Tiny) -> None:
    tiny.write({**RENAMED, "pkg/e.py": RENAMED["pkg/e.py"].replace("m.new_name()", "m.old_name()")})
    why = tiny.judge(RENAME)
    assert why.startswith("stale references to old_name:"), why
    assert "pkg/e.py:11: m.old_name (pkg.a.old_name)" in why


def test_a_rename_leaving_an_import_from_the_re_exporting_package_fails(tiny: Tiny) -> None:
    tiny.write({**RENAMED, "pkg/e.py": RENAMED["pkg/e.py"].replace("from pkg import new_name", "from pkg import old_name")})
    assert "pkg/e.py:3: from pkg import old_name" in tiny.judge(RENAME)


def test_a_rename_leaving_dunder_all_fails(tiny: Tiny) -> None:
    tiny.write({**RENAMED, "pkg/__init__.py": RENAMED["pkg/__init__.py"].replace('"new_name"]', '"old_name"]')})
    assert "pkg/__init__.py:3: __all__ lists 'old_name'" in tiny.judge(RENAME)


def test_a_rename_with_the_right_count_at_the_wrong_places_fails(tiny: Tiny) -> None:
    """caller() keeps old_name and one homonym in pkg/c.py is renamed: still two tokens."""
    tiny.write({**RENAMED, "pkg/a.py": RENAMED["pkg/a.py"].replace("return new_name()", "return old_name()"),
                "pkg/c.py": PRISTINE["pkg/c.py"].replace("old_name = 0", "new_name = 0")})
    why = tiny.judge(RENAME)
    assert why == "stale: 'old_name' left at pkg/a.py:14; homonym 'old_name' renamed at pkg/c.py:2", why


def test_a_renamed_method_or_parameter_is_left_to_the_token_check(tiny: Tiny) -> None:
    """A position on c.py's local: m.old_name elsewhere is another thing, not a stale reference."""
    local = {**RENAME, "address": "pkg/c.py:2:5"}
    assert stale.stale_references(tiny.root, local, bench.PRISTINE) == []


# -- file renames --------------------------------------------------------------------

RENAME_FILE: dict[str, object] = {"op": "rename-file", "address": "pkg/d.py", "dest": "pkg/doubling.py", "old": "pkg.d"}
IMPORTS_D = dedent("""
    import pkg.d
    import pkg.d as dd
    from pkg import d
    from pkg.d import twice
    from . import d as d2


    def more():
        return pkg.d.twice() + dd.twice() + d.twice() + twice() + d2.twice()


    TARGET = "pkg.d.twice"
    """)


def renamed_file(tiny: Tiny) -> None:
    (tiny.root / "pkg/d.py").rename(tiny.root / "pkg/doubling.py")


def test_a_correct_file_rename_passes(tiny: Tiny) -> None:
    renamed_file(tiny)
    assert tiny.judge(RENAME_FILE) == ""


def test_a_no_op_file_rename_fails(tiny: Tiny) -> None:
    assert tiny.judge(RENAME_FILE) == "no-op: no file changed"


def test_a_copy_instead_of_a_file_rename_fails(tiny: Tiny) -> None:
    tiny.write({"pkg/doubling.py": PRISTINE["pkg/d.py"]})
    assert tiny.judge(RENAME_FILE).startswith("copied, not renamed: pkg/d.py is still there")


def test_a_file_rename_leaving_importers_fails_with_every_form_named(tiny: Tiny) -> None:
    renamed_file(tiny)
    tiny.write({"pkg/f.py": IMPORTS_D})
    found = stale.stale_module_references(tiny.root, "pkg.d")
    assert found == ["pkg/f.py:1: import pkg.d", "pkg/f.py:2: import pkg.d", "pkg/f.py:3: from pkg import d",
                     "pkg/f.py:4: from pkg.d import ...", "pkg/f.py:5: from pkg import d",
                     "pkg/f.py:9: pkg.d (pkg.d)", "pkg/f.py:12: string 'pkg.d.twice'"], found


def test_a_file_rename_with_its_importers_rewritten_passes_the_import_check(tiny: Tiny) -> None:
    renamed_file(tiny)
    tiny.write({"pkg/f.py": IMPORTS_D.replace("pkg.d", "pkg.doubling").replace(" d", " doubling")})
    assert stale.stale_module_references(tiny.root, "pkg.d") == []


def test_a_bare_line_feed_in_a_crlf_file_fails(tiny: Tiny) -> None:
    project = {**PROJECT, "crlf": ["pkg/c.py"]}
    bench.convert_to_crlf(tiny.root, ["pkg/c.py"])
    assert bench.line_endings_verdict(tiny.root, project, MOVE) == ""
    (tiny.root / "pkg/c.py").write_bytes((tiny.root / "pkg/c.py").read_bytes() + b"\ndef f(x):\n    return x\n")
    assert bench.line_endings_verdict(tiny.root, project, MOVE) == "bare LF written into CRLF files: pkg/c.py"


# -- module names --------------------------------------------------------------------


@pytest.mark.parametrize(("path", "pythonpath", "module"), [
    ("sqlparse/utils.py", ".", "sqlparse.utils"),
    ("src/pkg/a.py", "src", "pkg.a"),
    ("src/pkg/__init__.py", "src", "pkg"),
    ("tests/test_x.py", "src", "tests.test_x"),
])
def test_module_names_follow_the_pythonpath(path: str, pythonpath: str, module: str) -> None:
    assert stale.module_name(path, pythonpath) == module


@pytest.mark.parametrize(("importer", "is_package", "level", "module", "resolved"), [
    ("pkg.b", False, 1, "a", "pkg.a"),
    ("pkg", True, 1, "a", "pkg.a"),
    ("pkg.sub.b", False, 2, None, "pkg"),
    ("pkg.b", False, 0, "os.path", "os.path"),
    ("b", False, 2, "a", None),
])
def test_relative_imports_resolve_against_the_importers_package(
        importer: str, is_package: bool, level: int, module: str | None, resolved: str | None) -> None:
    assert stale.resolve_from(importer, is_package, level, module) == resolved


# -- codegraft's expectations and sources --------------------------------------------


def test_with_server_a_plan_not_from_lsp_fails(tiny: Tiny) -> None:
    tiny.write(MOVED)
    why, _ = bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, RENAME, 1, True, bench.Graft("ast", ()), None)
    assert why == "not from the server (source ast)"


def test_an_expected_name_clash_passes_only_on_that_refusal(tiny: Tiny) -> None:
    from engine.errors import GraftError, Refused

    class Clash(Refused):
        code = "name_clash"

    case = {**RENAME, "expect": "name_clash"}
    assert bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, case, 1, False, None,
                                   Clash("new_name already exists in pkg/a.py\ndetails")) == ("", "refused: new_name already exists in pkg/a.py")
    why, _ = bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, case, 1, False, None, GraftError("no"))
    assert why.startswith("refused with code error, expected name_clash")
    why, _ = bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, case, 1, False, bench.Graft("ast", ()), None)
    assert why == "expected a refusal (name_clash), but it applied the change"


def test_an_expected_refusal_is_not_met_by_a_crash(tiny: Tiny) -> None:
    case = {**MOVE, "expect": "refusal"}
    why, _ = bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, case, 1, False, None, KeyError("x"))
    assert why.startswith("KeyError")


def test_an_expected_warning_needs_a_warning_and_a_green_suite(tiny: Tiny) -> None:
    case = {**RENAME, "expect": "warning"}
    assert bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, case, 1, False, bench.Graft("ast", ("w",)), None) == ("", "warned")
    why, _ = bench.codegraft_verdict(tiny.root, tiny.before, PROJECT, case, 1, False, bench.Graft("ast", ()), None)
    assert why == "expected a warning, the plan had none"


def test_a_peer_passes_an_expect_case_only_with_a_green_suite(tiny: Tiny) -> None:
    case = {**RENAME, "expect": "name_clash"}
    assert bench.peer_verdict(tiny.root, tiny.before, PROJECT, case, 1, ValueError("clash")) == ("", "refused: clash")
    tiny.write({"pkg/b.py": renamed(PRISTINE["pkg/b.py"])})  # a half-done rename breaks the suite
    why, _ = bench.peer_verdict(tiny.root, tiny.before, PROJECT, case, 1, None)
    assert why.startswith("tests: 0/1 passed (red)")


def test_a_stub_twin_created_or_renamed_with_its_module_is_in_scope(tiny: Tiny) -> None:
    """cachetools: moving typedkey into func.py writes its declaration into func.pyi, and
    renaming keys.py renames keys.pyi; neither file mentioned the name or module before."""
    assert bench.scope_verdict({"pkg/c.py", "pkg/c.pyi"}, MOVE) == ""
    assert bench.scope_verdict({"pkg/d.py", "pkg/d.pyi", "pkg/doubling.py", "pkg/doubling.pyi"}, RENAME_FILE) == ""
    assert bench.scope_verdict({"pkg/c.py", "pkg/b.pyi"}, MOVE) == "unexpected files changed: pkg/b.pyi"


def test_a_moved_name_still_provided_through_a_star_import_is_not_stale(tiny: Tiny) -> None:
    """more-itertools: ``from .more import *`` in the package __init__; is_prime moves from
    recipes to more and into more's __all__, so ``mi.is_prime`` still works."""
    tiny.write({**MOVED, "pkg/__init__.py": 'from .a import old_name\nfrom .c import *\n\n__all__ = ["f", "old_name"]\n',
                "pkg/c.py": '__all__ = ["f"]\n\n' + MOVED["pkg/c.py"]})
    assert not [f for f in stale.stale_references(tiny.root, MOVE, bench.PRISTINE) if "tests/test_x.py" in f]
    tiny.write({"pkg/c.py": '__all__ = []\n\n' + MOVED["pkg/c.py"]})  # no longer handed out by the star
    assert "tests/test_x.py:1: from pkg import f" in stale.stale_references(tiny.root, MOVE, bench.PRISTINE)

"""What importing the light entry points costs (issue 17): the operation registry and `graft --help`
load none of the heavy modules; a `--source ast` read in-process loads no LibCST, jedi or pool
(it builds answers from syntax trees, and the graph's modules come with the engine's facade).
The thin client's own imports are tested with real processes in test_daemon.py."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

HEAVY = {"libcst", "networkx", "jedi", "pygls", "lsprotocol", "lsp_pool", "diskcache", "tree_sitter"}
"""Top-level modules the light paths must not import."""


def heavy_modules_after(code: str) -> set[str]:
    """The heavy top-level modules in sys.modules after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    return set(result.stdout.split()) & HEAVY


def test_the_operation_registry_imports_nothing_heavy() -> None:
    code = ("from engine.refactor.operations import OPERATIONS\n"
            "for operation in OPERATIONS.values():\n"
            "    operation.fields()")
    assert heavy_modules_after(code) == set()


def test_an_ast_read_in_process_loads_no_refactoring_machinery_and_no_pool() -> None:
    code = ("import contextlib, io, os\n"
            "from frontends.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['--root', 'fixtures/sample', '--source', 'ast', 'find', 'shop/models.py:Order']) == 0")
    assert heavy_modules_after(code) & {"libcst", "jedi", "pygls", "lsprotocol", "lsp_pool"} == set()


def test_a_symbol_rename_plans_without_libcst() -> None:
    """LibCST's slow import would stand between a cold daemon and its server's first
    request; only parameter renames and moves need it."""
    code = ("import contextlib, io\n"
            "from frontends.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    assert main(['--root', 'fixtures/sample', '--source', 'ast', 'rename', 'shop/models.py:Order', 'Purchase',"
            " '--json']) == 0")
    assert "libcst" not in heavy_modules_after(code)


def test_a_typescript_or_go_rename_imports_no_libcst() -> None:
    """The TypeScript passes of every TypeScript rename import engine.refactor.move_other (for its
    refusal type): LibCST, which only its Go move needs, cost a cold TypeScript 7 rename 0.5 s."""
    code = "import engine.refactor.typescript.passes, engine.refactor.move_other\n"
    assert "libcst" not in heavy_modules_after(code)

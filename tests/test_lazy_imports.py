"""What importing the light entry points costs (issue 17): `graft --help` and `--source ast` reads
must not load LibCST, the graph, jedi or the language-server pool."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

HEAVY = {"libcst", "networkx", "jedi", "pygls", "lsprotocol", "lsp_pool", "diskcache"}
"""Top-level modules the light paths must not import. tree_sitter belongs here too once
engine/languages/spec.py stops importing tree_sitter.Node at run time for its type aliases."""


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

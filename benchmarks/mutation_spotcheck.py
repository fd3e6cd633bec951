"""A mutation spot-check of the guards: break each guard with a one-line change and record which
test fails, so that a guard no test holds is seen.

Run: ``.venv/bin/python benchmarks/mutation_spotcheck.py [--only NAME ...]``

Every mutation is made in a scratch copy of the committed tree (``git archive HEAD``), never in
the working tree, which other work may share: the copy's tests run with the copy first on
``PYTHONPATH``, so the broken code is what they import, in this process and in the programs
they start. The copy's selected tests run once unbroken first; a selection that does not pass
unbroken makes that row's answer worthless, and the script says so instead of counting it.
Prints a Markdown table: the guard, the change, the tests run, and the tests that failed
(none is a guard that no selected test holds).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST_TIMEOUT = 1800
"""Seconds one selection may take in the scratch copy (a loaded machine, real servers in some)."""

WORKSPACE_TESTS = ("tests/test_workspace.py", "tests/test_outside_workspace.py", "tests/test_hostile_workspace.py")


@dataclass(frozen=True)
class Mutation:
    name: str
    """What the guard keeps, in a few words."""
    path: str
    original: str
    """The exact text the mutation replaces; it must occur once in the file."""
    mutated: str
    tests: tuple[str, ...]
    """The pytest arguments that select the tests that should catch it."""


MUTATIONS = (
    Mutation("journal seal (HMAC) checked", "engine/edits/journal_trust.py",
             "if secret is None or not isinstance(given, str) or not hmac.compare_digest(given, seal(manifest, secret)):",
             "if secret is None or not isinstance(given, str):",
             ("tests/test_journal_trust.py",)),
    Mutation("a restore adds no setuid/setgid/write bits", "engine/edits/journal_trust.py",
             "return (recorded & ~GUARDED_BITS) | (recorded & current & GUARDED_BITS)",
             "return recorded",
             ("tests/test_journal_trust.py",)),
    Mutation("a path outside the workspace is refused", "engine/workspace.py",
             "if not _is_within(lexical, root):",
             "if False:",
             WORKSPACE_TESTS),
    Mutation("a symlink pointing outside is refused", "engine/workspace.py",
             "if not _is_within(real, root):",
             "if False:",
             WORKSPACE_TESTS),
    Mutation("no write into .git/ or .graft/", "engine/workspace.py",
             "if part.lower() in PROTECTED_DIR_NAMES:",
             "if False:",
             WORKSPACE_TESTS),
    Mutation("dirty-tree guard", "engine/edits/apply.py",
             "            if dirty:\n",
             "            if False:\n",
             ("tests/test_apply.py",)),
    Mutation("syntax check before apply", "engine/edits/apply.py",
             "if broken and not options.allow_syntax_errors:",
             "if False:",
             ("tests/test_apply.py", "tests/test_edits.py")),
    Mutation("stale plan refused (file changed since the plan)", "engine/edits/materialize.py",
             "if check_hashes and operation.expected_sha256 and source.sha256 != operation.expected_sha256:",
             "if False:",
             ("tests/test_apply.py", "tests/test_edits.py")),
    Mutation("an interrupted transaction is rolled back on recovery", "engine/edits/apply.py",
             "                    self._roll_back(record)\n",
             "                    pass\n",
             ("tests/test_apply.py", "tests/test_journal_trust.py")),
    Mutation("a server's rename outside the root is refused", "engine/refactor/rename.py",
             "    if outside:\n        raise EditsOutsideWorkspace(outside, \"the server's rename\")",
             "    if False:\n        raise EditsOutsideWorkspace(outside, \"the server's rename\")",
             ("tests/test_outside_workspace.py",)),
    Mutation("a rename that a name would capture is refused", "engine/refactor/rename.py",
             "captures = name_captures(leftovers.corpus, edit, old_name, new_name)",
             "captures = []",
             ("tests/test_refactor_cases.py", "-k", "clash or captured")),
    Mutation("the cache unpickles only its own classes", "engine/graph/safe_pickle.py",
             "allowed = module in _VALUE_MODULES or (module, name) in _VALUE_CLASSES or module.startswith(\"networkx.classes.\")",
             "allowed = True",
             ("tests/test_graph_edges.py", "tests/test_hostile_workspace.py")),
)


def scratch_copy(into: Path) -> Path:
    """The committed tree (HEAD), unpacked under ``into``: uncommitted work is not in it."""
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=REPO, capture_output=True, check=True).stdout
    root = into / "tree"
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(root, filter="tar")
    return root


def run_tests(root: Path, selection: tuple[str, ...]) -> tuple[int, list[str]]:
    """(pytest's exit status, the tests that failed or errored) for ``selection`` in ``root``."""
    environment = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rfE", *selection],
                          cwd=root, env=environment, capture_output=True, text=True, timeout=TEST_TIMEOUT)
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, flags=re.M)
    return done.returncode, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="run only the mutations whose names contain one of these")
    chosen = parser.parse_args().only
    mutations = [m for m in MUTATIONS if not chosen or any(word in m.name for word in chosen)]
    rows = ["| guard | change (file) | tests run | failed when broken |", "|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="graft-mutation-") as scratch:
        root = scratch_copy(Path(scratch))
        baseline: dict[tuple[str, ...], tuple[int, list[str]]] = {}
        for mutation in mutations:
            if mutation.tests not in baseline:
                baseline[mutation.tests] = run_tests(root, mutation.tests)
            target = root / mutation.path
            original = target.read_text(encoding="utf-8")
            if original.count(mutation.original) != 1:
                rows.append(f"| {mutation.name} | `{mutation.path}`: the original line is not there once | | not run |")
                continue
            target.write_text(original.replace(mutation.original, mutation.mutated), encoding="utf-8")
            try:
                status, failed = run_tests(root, mutation.tests)
            finally:
                target.write_text(original, encoding="utf-8")
            unbroken_status, unbroken_failed = baseline[mutation.tests]
            if unbroken_status != 0:
                verdict = f"not counted: {len(unbroken_failed)} fail unbroken too ({', '.join(unbroken_failed[:3])})"
            elif failed:
                verdict = f"{len(failed)}: " + ", ".join(f"`{name}`" for name in failed[:3]) + (" …" if len(failed) > 3 else "")
            else:
                verdict = "**none** (pytest status {})".format(status)
            change = mutation.original.strip().splitlines()[0]
            rows.append(f"| {mutation.name} | `{change}` → `{mutation.mutated.strip().splitlines()[0]}` (`{mutation.path}`) | "
                        f"`{' '.join(mutation.tests)}` | {verdict} |")
            print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""introduce-parameter --pass-at-calls on methods of real projects (issue 44): the calls of a method
are found through basedpyright's references (``--source lsp``), and every case is judged by the
project's own suite.

Run: ``.venv/bin/python benchmarks/bench_introduce_parameter_methods.py PROJECT... [--seed N] [--each N]``

The cases are picked by syntax alone, with a seeded random choice: a method (not a dunder) of a
class in the project's package whose body holds a number or a one-line string (not a docstring,
nor in an f-string, a subscript, a default or a lambda); that literal becomes the parameter
``graft_param``. Each runs through the CLI on a fresh copy of the project (sdists and test
commands as in benchmarks/real_projects.toml). It passes when the suite passes as many tests as
before; an applied edit with fewer passing is a silent breakage; a refusal is neither.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import libcst as cst

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.bench_extract_corpus import project_of, run_tests  # noqa: E402
from benchmarks.bench_real_projects import green_baseline  # noqa: E402
from benchmarks.extract_corpus_pick import Module, walk  # noqa: E402

GRAFT = str(Path(sys.executable).parent / "graft")
_OUTSIDE = (cst.Expr, cst.FormattedString, cst.Subscript, cst.Param, cst.Decorator, cst.Lambda)


def candidates(source: Path, package: str) -> list[str]:
    """The span of the first literal in each method's body, in file order."""
    found = []
    for path in sorted((source / package).rglob("*.py")):
        if "test" in path.relative_to(source).as_posix():
            continue
        module = Module(source, path)
        for klass in (node for node in walk(module.module) if isinstance(node, cst.ClassDef)):
            for method in klass.body.body:
                if not isinstance(method, cst.FunctionDef) or method.name.value.startswith("__") \
                        or not isinstance(method.body, cst.IndentedBlock):
                    continue
                literal = next((node for node in walk(method.body) if isinstance(node, (cst.Integer, cst.SimpleString))
                                and "\n" not in getattr(node, "value", "")
                                and not any(isinstance(a, _OUTSIDE) for a in module.ancestors(node))), None)
                if literal is not None:
                    found.append(module.span(literal))
    return found


def attempt(source: Path, project: dict[str, object], address: str, baseline: int) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "p"
        shutil.copytree(source, root)
        ran = subprocess.run([GRAFT, "--no-daemon", "--source", "lsp", "--root", str(root), "--json", "introduce-parameter",
                              address, "graft_param", "--pass-at-calls", "--apply", "--check", "none"],
                             capture_output=True, text=True, timeout=300)
        if ran.returncode != 0:
            error = json.loads(ran.stdout).get("error", {}) if ran.stdout.strip().startswith("{") else {}
            return f"refused {error.get('code', '?')}: {str(error.get('message', ran.stderr.strip()))[:300]}"
        green, count, _tail = run_tests(root, project)
        return "PASS" if green and count == baseline else f"BROKE: {count}/{baseline} tests passed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("projects", nargs="+")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--each", type=int, default=6)
    options = parser.parse_args()
    generator = random.Random(options.seed)
    totals = {"PASS": 0, "BROKE": 0, "refused": 0}
    for name in options.projects:
        project = project_of(name)
        source, baseline = green_baseline(project)
        listed = candidates(source, str(project.get("package", name)))
        for address in generator.sample(listed, min(options.each, len(listed))):
            outcome = attempt(source, project, address, baseline)
            totals[outcome.split(":")[0].split(" ")[0]] += 1
            print(f"{name} {address}\n    {outcome}", flush=True)
    print(json.dumps(totals))


if __name__ == "__main__":
    main()

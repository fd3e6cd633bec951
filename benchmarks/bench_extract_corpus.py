"""Extract function, extract variable, inline (a variable, a function at one call or at all of
them) and introduce parameter on real projects from PyPI, codegraft and rope on the same cases
in the same run (issue 44).

Run: ``.venv/bin/python benchmarks/bench_extract_corpus.py [--only PROJECT] [--tools codegraft,rope] [--warm]``

The cases are in benchmarks/extract_corpus.toml, picked from each project's code by syntax
alone (benchmarks/extract_corpus_pick.py, seeded) and frozen there; the projects' versions and
test commands are benchmarks/real_projects.toml's. Each tool runs each case on a fresh copy of
the project (its sdist, fetched once into benchmarks/.corpus/), and a case passes when:

* the tool made an edit (a refusal is no pass, but no breakage either);
* exactly the case's file changed (``files`` when it names others);
* every changed Python file compiles;
* the name asked for is in the changed file (extract and introduce: where it was asked);
* pyflakes reports nothing new in the changed files (no undefined or unused name);
* the project's own suite passes as many tests as before.

A tool's edit that fails any of the last four is a *silent breakage*: it was not refused. Times
are each tool's own planning and writing, in this process (codegraft's engine made per case,
as rope's project is), without the tests. With ``--warm`` each project is one copy, restored
after every case, with one codegraft engine kept across its cases as the CLI's daemon keeps one
(reads kept between calls, refreshed from the disk before each) and one rope project kept
likewise (validated before each case).
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.bench_real_projects import BaselineRed, changed_files, digest, green_baseline  # noqa: E402

if TYPE_CHECKING:
    from rope.base.project import Project as RopeProject

    from engine.api import Engine

CASES = REPO / "benchmarks" / "extract_corpus.toml"
PROJECTS = REPO / "benchmarks" / "real_projects.toml"
PYFLAKES = REPO / "benchmarks" / ".corpus" / "pyflakes-4.1.0"


@dataclass
class Outcome:
    passed: bool
    refused: bool
    seconds: float
    why: str
    processor_seconds: float = 0.0
    """This process's processor time over the same span (a server's own is not in it)."""
    first_of_project: bool = False


def project_of(name: str) -> dict[str, object]:
    """The project's entry of real_projects.toml (version, tests, test_deps) with this corpus's own keys."""
    known = {str(p["name"]): p for p in tomllib.loads(PROJECTS.read_text(encoding="utf-8"))["project"]}
    ours = {str(p["name"]): p for p in tomllib.loads(CASES.read_text(encoding="utf-8")).get("project", [])}
    merged = {key: value for key, value in known[name].items() if key != "case"}
    merged.update({key: value for key, value in ours.get(name, {}).items() if key != "case"})
    merged["case"] = ours.get(name, {}).get("case", [])
    return merged


def case_file(case: dict[str, object]) -> str:
    return re.split(r":(?=\d|[A-Za-z_/])", str(case["address"]), maxsplit=1)[0]


# -- the tools ----------------------------------------------------------------------------


def codegraft(root: Path, case: dict[str, object], kept: Engine | None = None) -> None:
    from engine.edits.session import EditOptions
    from engine.refactor.operations import build

    engine = kept if kept is not None else new_engine(root)
    try:
        if kept is not None:
            engine.refresh_from_disk()  # as the daemon does before each call: the last case's files were restored
        fields: dict[str, object] = {key: case[key] for key in ("address", "new_name", "match") if key in case}
        plan = engine.plan(build(case["op"], fields))
        engine.edits().apply(plan.edit, EditOptions(allow_dirty=True))
    finally:
        if kept is None:
            engine.close()


def new_engine(root: Path, *, long_lived: bool = False) -> Engine:
    from engine.api import Engine, SourcePreference
    from engine.workspace import Workspace
    from process_tools.adapter import ProcessTools

    workspace = Workspace(root)
    if long_lived:
        workspace.keep_reads_between_calls()
    engine = Engine(workspace, tools=ProcessTools(workspace), source=SourcePreference.AST)
    engine.baseline_fill.enabled = long_lived
    return engine


def rope(root: Path, case: dict[str, object], source_folder: str = ".", kept: RopeProject | None = None) -> None:
    import rope.base.project
    from rope.refactor.extract import ExtractMethod, ExtractVariable
    from rope.refactor.inline import create_inline
    from rope.refactor.introduce_parameter import IntroduceParameter

    # A src/ layout's folder is named to rope, as the project's tests find it on the path.
    folders = [source_folder] if source_folder != "." else []
    project = kept if kept is not None else rope.base.project.Project(str(root), ropefolder=None, source_folders=folders)
    if kept is not None:
        project.validate()  # the last case's files were restored
    try:
        resource = project.get_resource(case_file(case))
        text = resource.read()
        start, end = _offsets(text, case)
        kind = str(case["kind"])
        if kind in ("extract-function", "extract-function-expression"):  # rope's ExtractMethod takes either
            changes = ExtractMethod(project, resource, start, end).get_changes(str(case["new_name"]))
        elif kind == "extract-variable":
            changes = ExtractVariable(project, resource, start, end).get_changes(str(case["new_name"]))
        elif kind == "introduce-parameter":
            changes = IntroduceParameter(project, resource, start).get_changes(str(case["new_name"]))
        elif kind == "inline-call":
            changes = create_inline(project, resource, start).get_changes(only_current=True, remove=False)
        else:
            changes = create_inline(project, resource, start).get_changes()
        project.do(changes)
    finally:
        if kept is None:
            project.close()


def _offsets(text: str, case: dict[str, object]) -> tuple[int, int]:
    """(start, end) character offsets of the case's span; for a function named by its path, its name."""
    address = str(case["address"])
    lines = text.splitlines(keepends=True)
    spans = re.search(r":(\d+):(\d+)(?:-(\d+):(\d+))?$", address)
    if spans is None:  # FILE:function: rope is pointed at the def's name
        name = address.rsplit(":", 1)[1]
        found = re.search(rf"^def {re.escape(name)}\b", text, re.MULTILINE)
        if found is None:
            raise LookupError(f"no def {name}")
        return found.start() + 4, found.start() + 4 + len(name)

    def offset(line: str, column: str) -> int:
        return sum(len(part) for part in lines[: int(line) - 1]) + int(column) - 1
    start = offset(spans.group(1), spans.group(2))
    end = offset(spans.group(3), spans.group(4)) if spans.group(3) else start
    return start, end


# -- the verdict ----------------------------------------------------------------------------


SUITE_SECONDS = 240
"""A suite still running after this is a hang the edit caused (each of these suites takes seconds)."""


def run_tests(root: Path, project: dict[str, object]) -> tuple[bool, int, str]:
    """bench_real_projects.run_tests, with a shorter limit: rope's inline of cachetools' RRCache.popitem hangs its suite."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, cast(list[object], project["tests"]))]
    env = {"PYTHONPATH": str(root / str(project.get("pythonpath", "."))), "PATH": "/usr/bin:/bin", "HOME": str(root),
           "PYTHONDONTWRITEBYTECODE": "1"}
    ran = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=SUITE_SECONDS)
    found = re.search(r"(\d+) passed", ran.stdout)
    return ran.returncode == 0, int(found.group(1)) if found else 0, ran.stdout[-600:] + ran.stderr[-600:]


def pyflakes_messages(root: Path, files: list[str]) -> Counter[str]:
    """pyflakes's messages on ``files``, without their line numbers (compared before and after)."""
    if not files:
        return Counter()
    ran = subprocess.run([sys.executable, "-m", "pyflakes", *files], cwd=root, capture_output=True, text=True,
                         env={"PYTHONPATH": str(PYFLAKES), "PATH": "/usr/bin:/bin"}, timeout=120)
    return Counter(re.sub(r"^[^:]+:\d+:(\d+:)? ", "", line) for line in ran.stdout.splitlines() if line.strip())


def verdict(root: Path, source: Path, before: dict[str, str], project: dict[str, object], case: dict[str, object],
            baseline: int) -> str:
    changed = changed_files(before, digest(root))
    expected = set(cast(list[str], case.get("files", [case_file(case)])))
    if not changed:
        return "no change"
    if changed != expected:
        return f"files changed: {', '.join(sorted(changed))} (expected {', '.join(sorted(expected))})"
    python = sorted(path for path in changed if path.endswith(".py"))
    for path in python:
        try:
            ast.parse((root / path).read_text(encoding="utf-8"))
        except SyntaxError as error:
            return f"syntax error: {path}:{error.lineno}: {error.msg}"
    name = case.get("new_name")
    if name is not None and not re.search(rf"\b{re.escape(str(name))}\b", (root / case_file(case)).read_text(encoding="utf-8")):
        return f"{name} is not in {case_file(case)}"
    new = pyflakes_messages(root, python) - pyflakes_messages(source, python)
    if new:
        return "pyflakes: " + "; ".join(sorted(new))[:200]
    green, count, tail = run_tests(root, project)
    if not green or count != baseline:
        last = tail.strip().splitlines()[-1] if tail.strip() else ""
        return f"tests: {count}/{baseline} passed" + ("" if green else f" (red) {last[:160]}")
    return ""


@dataclass
class Warm:
    """``--warm``: one copy of a project, restored after every case, and each tool's engine or
    project kept across the project's cases (made by its first case, whose time includes it)."""

    source: Path
    root: Path
    engine: Engine | None = None
    rope_project: RopeProject | None = None

    def restore(self) -> None:
        """The copy's files as the project's again (the last case's edit undone on the disk)."""
        want, have = digest(self.source), digest(self.root)
        for path in have.keys() - want.keys():
            (self.root / path).unlink()
        for path, sha in want.items():
            if have.get(path) != sha:
                (self.root / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.source / path, self.root / path)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
        if self.rope_project is not None:
            self.rope_project.close()
        shutil.rmtree(self.root.parent, ignore_errors=True)


def warm_copy(source: Path) -> Warm:
    root = Path(tempfile.mkdtemp()) / "p"
    shutil.copytree(source, root)
    return Warm(source, root)


def attempt(tool: str, source: Path, project: dict[str, object], case: dict[str, object], baseline: int,
            warm: Warm | None = None) -> Outcome:
    if warm is None:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch) / "p"
            shutil.copytree(source, root)
            return _attempt_in(root, tool, source, project, case, baseline, None)
    warm.restore()
    try:
        return _attempt_in(warm.root, tool, source, project, case, baseline, warm)
    finally:
        warm.restore()


def _attempt_in(root: Path, tool: str, source: Path, project: dict[str, object], case: dict[str, object], baseline: int,
                warm: Warm | None) -> Outcome:
    before = digest(root)
    folder = str(project.get("pythonpath", "."))
    started, processor_started = time.perf_counter(), time.process_time()
    try:
        if tool == "codegraft":
            if warm is not None and warm.engine is None:
                warm.engine = new_engine(root, long_lived=True)
            codegraft(root, case, warm.engine if warm is not None else None)
        else:
            if warm is not None and warm.rope_project is None:
                from rope.base.project import Project

                warm.rope_project = Project(str(root), ropefolder=None, source_folders=[folder] if folder != "." else [])
            rope(root, case, folder, warm.rope_project if warm is not None else None)
    except Exception as failure:  # noqa: BLE001 - a refusal or a tool's failure is a result here
        seconds, processor = time.perf_counter() - started, time.process_time() - processor_started
        code = getattr(failure, "code", None)
        why = f"refused: {code}" if code else f"error: {type(failure).__name__}: {str(failure).splitlines()[0][:120] if str(failure) else ''}"
        return Outcome(False, True, seconds, why, processor)
    seconds, processor = time.perf_counter() - started, time.process_time() - processor_started
    try:
        why = verdict(root, source, before, project, case, baseline)
    except subprocess.TimeoutExpired:
        why = f"tests: the suite did not finish in {SUITE_SECONDS} s (a hang)"
    return Outcome(not why, False, seconds, why, processor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="one project")
    parser.add_argument("--tools", default="codegraft,rope")
    parser.add_argument("--kind", help="only the cases of this kind (extract-function-expression, ...)")
    parser.add_argument("--warm", action="store_true", help="one engine (and one rope project) kept across a project's cases")
    options = parser.parse_args()
    tools = options.tools.split(",")
    names = [str(p["name"]) for p in tomllib.loads(CASES.read_text(encoding="utf-8"))["project"]]
    totals: dict[str, list[Outcome]] = {tool: [] for tool in tools}
    per_kind: dict[tuple[str, str], list[Outcome]] = {}
    for name in names:
        if options.only and name != options.only:
            continue
        project = project_of(name)
        try:
            source, baseline = green_baseline(project)
        except BaselineRed as red:
            print(f"{name}: skipped, {red}", file=sys.stderr)
            continue
        print(f"\n## {name} {project['version']} ({baseline} tests)")
        warm = warm_copy(source) if options.warm else None
        try:
            first = True
            for number, case in enumerate(cast(list[dict[str, object]], project["case"]), 1):
                if options.kind and case["kind"] != options.kind:
                    continue
                cells = []
                for tool in tools:
                    outcome = attempt(tool, source, project, case, baseline, warm)
                    outcome.first_of_project = first
                    totals[tool].append(outcome)
                    per_kind.setdefault((tool, str(case["kind"])), []).append(outcome)
                    mark = "PASS" if outcome.passed else "refused" if outcome.refused else "BROKE"
                    cells.append(f"{tool}={mark} {outcome.seconds * 1000:.0f} ms{'' if outcome.passed else ' (' + outcome.why + ')'}")
                print(f"{number:2} {case['kind']:<19} {case['address']}\n     " + "\n     ".join(cells), flush=True)
                first = False
        finally:
            if warm is not None:
                warm.close()
    summarize(tools, totals, per_kind)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return (ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2) if ordered else 0.0


def _medians(found: list[Outcome]) -> str:
    return f"{_median([o.seconds for o in found]) * 1000:.1f} ms ({_median([o.processor_seconds for o in found]) * 1000:.1f} ms)"


def _ratios(found: list[Outcome], beside: list[Outcome]) -> str:
    """Median time over the other tool's, wall and processor, over all cases and without each
    project's first."""
    def ratio(mine: list[float], theirs: list[float]) -> str:
        return f"{_median(mine) / _median(theirs):.2f}x" if theirs and _median(theirs) else "n/a"
    later = [o for o in found if not o.first_of_project]
    later_beside = [o for o in beside if not o.first_of_project]
    return (f"wall {ratio([o.seconds for o in found], [o.seconds for o in beside])}, "
            f"processor {ratio([o.processor_seconds for o in found], [o.processor_seconds for o in beside])}; "
            f"without first cases wall {ratio([o.seconds for o in later], [o.seconds for o in later_beside])}, "
            f"processor {ratio([o.processor_seconds for o in later], [o.processor_seconds for o in later_beside])}")


def summarize(tools: list[str], totals: dict[str, list[Outcome]], per_kind: dict[tuple[str, str], list[Outcome]]) -> None:
    print("\n| tool | passed | refused | silent breakage | median time per case | without each project's first case |")
    print("|---|---|---|---|---|---|")
    for tool in tools:
        found = totals[tool]
        print(f"| {tool} | {sum(o.passed for o in found)}/{len(found)} | {sum(o.refused for o in found)} | "
              f"{sum(not o.passed and not o.refused for o in found)} | {_medians(found)} | "
              f"{_medians([o for o in found if not o.first_of_project])} |")
    if len(tools) > 1:
        print(f"(time: wall, then this process's processor time; ratios to {tools[-1]}, same run: "
              + "; ".join(f"{tool} {_ratios(totals[tool], totals[tools[-1]])}" for tool in tools[:-1]) + ")")
    kinds = sorted({kind for _, kind in per_kind})
    print("\n| kind | " + " | ".join(tools) + " |")
    print("|---|" + "---|" * len(tools))
    for kind in kinds:
        cells = []
        for tool in tools:
            found = per_kind.get((tool, kind), [])
            cells.append(f"{sum(o.passed for o in found)}/{len(found)} ({sum(not o.passed and not o.refused for o in found)} broke)")
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

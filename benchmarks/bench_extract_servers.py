"""Extract function, extract variable (or constant) and inline on real TypeScript, JavaScript and
Go projects, through the servers' own refactorings (issue 44): tsserver (typescript-language-server,
TypeScript 5.9) and gopls.

Run: ``.venv/bin/python benchmarks/bench_extract_servers.py [--only PROJECT]``

The cases are benchmarks/extract_corpus_servers.toml; the projects, their versions, tests and
configs are benchmarks/real_projects_ts.toml's and real_projects_go.toml's (cached under
benchmarks/.corpus/). Each case runs on a fresh copy of its project, planned and applied by
codegraft with the project's server. It passes when:

* only the case's file changed;
* extract: the name asked for is declared in it, and the server's own name (newFunction,
  newLocal, newVar) is not left anywhere; inline: the inlined name is gone from the line;
* formatting kept: TypeScript/JavaScript lines the edit added are indented with the file's own
  character (tabs or spaces); a Go file gofmt -l did not list is not listed after;
* TypeScript/JavaScript: ``tsc --noEmit`` over the project's configs reports nothing new, and its
  own tests (where they ship) pass with the same count; Go: ``go build ./...`` and ``go vet ./...``
  say nothing new, and ``go test ./...`` passes the same number of tests.

A refusal is no pass, but no breakage either; an applied edit that fails a check is a silent
breakage. Times are codegraft's planning and applying, a server per case (started cold).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Callable, cast

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks import real_projects_go as go, real_projects_ts as ts  # noqa: E402
from benchmarks.bench_extract_corpus import Outcome  # noqa: E402  (one outcome type for both extract corpora)

CASES = REPO / "benchmarks" / "extract_corpus_servers.toml"
SERVER_NAMES = re.compile(r"\b(?:newFunction|newLocal|newMethod|newVar|newConst)\w*\b")

Case = dict[str, object]


def address_of(root: Path, case: Case) -> str:
    """The case's span (or position, for an inline) as ``FILE:LINE:COL[-LINE:COL]``, 1-based."""
    path = str(case["file"])
    lines = (root / path).read_text(encoding="utf-8").split("\n")
    if "lines" in case:
        first, last = (int(n) for n in str(case["lines"]).split("-"))
        start = len(lines[first - 1]) - len(lines[first - 1].lstrip())
        return f"{path}:{first}:{start + 1}-{last}:{len(lines[last - 1].rstrip()) + 1}"
    number, text = int(cast(int, case["line"])), str(case["text"])
    column = lines[number - 1].find(text)
    if column < 0:
        raise ValueError(f"{text!r} is not on {path}:{number}")
    if case["op"] == "inline":
        return f"{path}:{number}:{column + 1}"
    return f"{path}:{number}:{column + 1}-{number}:{column + len(text) + 1}"


def codegraft(root: Path, case: Case) -> None:
    """Plan and apply the case with codegraft and the project's server; refusals propagate."""
    from engine.api import Engine, SourcePreference
    from engine.edits.session import EditOptions
    from engine.refactor.operations.base import RefactorOperation
    from engine.refactor.operations.extract_function import ExtractFunction
    from engine.refactor.operations.extract_variable import ExtractVariable
    from engine.refactor.operations.inline_symbol import Inline
    from engine.workspace import Workspace
    from lsp_pool.adapter import PoolServices
    from process_tools.adapter import ProcessTools

    address = address_of(root, case)
    operation: RefactorOperation
    if case["op"] == "extract-function":
        operation = ExtractFunction(address, str(case["new_name"]))
    elif case["op"] == "extract-variable":
        operation = ExtractVariable(address, str(case["new_name"]), constant=bool(case.get("constant", False)))
    else:
        operation = Inline(address)
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace), tools=ProcessTools(workspace), source=SourcePreference.LSP)
    try:
        with workspace.remembering_reads():
            plan = engine.plan(operation)
            engine.edits().apply(plan.edit, EditOptions(allow_dirty=True))
    finally:
        engine.close()


def edit_verdict(root: Path, before: dict[str, str], after: dict[str, str], case: Case, was: str) -> str:
    """Only the case's file changed, the name is where it was asked for, nothing of the server's left."""
    changed = go.changed_files(before, after)
    if changed != {str(case["file"])}:
        return f"changed {sorted(changed)[:4]}, not just {case['file']}"
    text = (root / str(case["file"])).read_text(encoding="utf-8")
    if case["op"] == "inline":
        line = text.split("\n")[int(cast(int, case["line"])) - 1] if "line" in case else ""
        return f"{case['text']} is still on its line: {line.strip()[:80]}" if re.search(rf"\b{re.escape(str(case['text']))}\b", line) and \
            was.split("\n")[int(cast(int, case["line"])) - 1] == line else ""
    name = str(case["new_name"])
    declared = re.search(rf"\b(?:function|const|let|var|func(?:\s*\([^)]*\))?)\s+{name}\b|\b{name}\s*:=", text)
    if not declared:
        return f"{name} is not declared in {case['file']}"
    left = SERVER_NAMES.search(text)
    return f"the server's name {left.group()} is left" if left and not SERVER_NAMES.search(was) else ""


def indent_verdict(was: str, now: str) -> str:
    """Lines the edit added are indented with the character the file used (tabs or spaces)."""
    def indent_char(text: str) -> str:
        tabs = sum(1 for line in text.split("\n") if line.startswith("\t"))
        spaces = sum(1 for line in text.split("\n") if line.startswith("  "))
        return "\t" if tabs > spaces else " "
    kept = indent_char(was)
    old = set(was.split("\n"))
    wrong = [line for line in now.split("\n") if line not in old and line[:1] in " \t" and line.strip() and line[0] != kept
             and not line.lstrip().startswith("*")]
    return f"{len(wrong)} added lines indented with {'spaces' if kept == chr(9) else 'tabs'}: {wrong[0].strip()[:60]}" if wrong else ""


def run_typescript(project: dict[str, object], cases: list[Case], scratch: Path) -> list[tuple[str, Outcome]]:
    source, baseline = ts.green_baseline(project)
    print(f"{project['name']} {project['version']}: tsc clean, {baseline} tests green", file=sys.stderr)
    rows = []
    for number, case in enumerate(cases):
        root = scratch / f"{project['name']}-{number}"
        shutil.copytree(source, root, symlinks=True)
        before = ts.digest(root)
        was = (root / str(case["file"])).read_text(encoding="utf-8")

        def judge(root: Path = root, before: dict[str, str] = before, was: str = was, case: Case = case) -> str:
            for check in (lambda: edit_verdict(root, before, ts.digest(root), case, was),
                          lambda: indent_verdict(was, (root / str(case["file"])).read_text(encoding="utf-8")),
                          lambda: ts.type_check(root, project), lambda: ts.suite_verdict(root, project, baseline)):
                why = check()
                if why:
                    return why
            return ""
        rows.append((label(project, case), attempt(root, case, judge)))
        shutil.rmtree(root, ignore_errors=True)
    return rows


def run_go(project: dict[str, object], cases: list[Case], scratch: Path) -> list[tuple[str, Outcome]]:
    base = go.green_baseline(project)
    module = str(project["module"])
    print(f"{project['name']} {project['version']}: {base.passed} tests green", file=sys.stderr)
    rows = []
    for number, case in enumerate(cases):
        root = scratch / f"{project['name']}-{number}" / module
        shutil.copytree(base.source, root)
        before = go.digest(root)
        was = (root / str(case["file"])).read_text(encoding="utf-8")

        def judge(root: Path = root, before: dict[str, str] = before, was: str = was, case: Case = case) -> str:
            changed = go.changed_files(before, go.digest(root))
            for check in (lambda: edit_verdict(root, before, go.digest(root), case, was),
                          lambda: go.format_verdict(root, changed, base, {"op": case["op"]}),
                          lambda: go.build_verdict(root, base), lambda: go.suite_verdict(root, base)):
                why = check()
                if why:
                    return why
            return ""
        rows.append((label(project, case), attempt(root, case, judge)))
        shutil.rmtree(scratch / f"{project['name']}-{number}", ignore_errors=True)
    return rows


def attempt(root: Path, case: Case, judge: Callable[[], str]) -> Outcome:
    from engine.errors import GraftError

    started = time.perf_counter()
    try:
        codegraft(root, case)
    except GraftError as error:
        return Outcome(False, True, time.perf_counter() - started, f"refused ({error.code}): {str(error).splitlines()[0][:120]}")
    except Exception as error:  # noqa: BLE001 - a crash is a row of the table, not the end of the run
        return Outcome(False, False, time.perf_counter() - started, f"{type(error).__name__}: {str(error)[:120]}")
    seconds = time.perf_counter() - started
    try:
        why = judge()
    except Exception as error:  # noqa: BLE001 - a judge that timed out fails the case
        why = f"{type(error).__name__}: {str(error)[:120]}"
    return Outcome(not why, False, seconds, why)


def label(project: dict[str, object], case: Case) -> str:
    where = case.get("lines") or f"{case.get('line')} {case.get('text')}"
    name = f" -> {case['new_name']}" + (" (constant)" if case.get("constant") else "") if "new_name" in case else ""
    return f"{project['name']}: {case['op']} {case['file']}:{where}{name}"


def projects() -> list[tuple[dict[str, object], list[Case]]]:
    known = {str(p["name"]): p for p in ts.load()}
    known.update({str(p["name"]): p for p in cast(list[dict[str, object]], tomllib.loads(go.DATA.read_text())["project"])})
    ours = tomllib.loads(CASES.read_text(encoding="utf-8"))["project"]
    return [({**known[str(p["name"])], "language": p["language"]}, cast(list[Case], p["case"])) for p in ours]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", help="a project's name (repeatable)")
    arguments = parser.parse_args()
    rows: list[tuple[str, Outcome]] = []
    with tempfile.TemporaryDirectory() as folder:
        for project, cases in projects():
            if arguments.only and project["name"] not in arguments.only:
                continue
            run = run_go if project["language"] == "go" else run_typescript
            for case_label, outcome in run(project, cases, Path(folder)):
                rows.append((case_label, outcome))
                verdict = "PASS" if outcome.passed else "refused" if outcome.refused else "FAIL"
                print(f"  {verdict:8}{outcome.seconds:6.2f}s  {case_label}" + (f"\n      {outcome.why}" if outcome.why else ""),
                      file=sys.stderr)
    passed = sum(o.passed for _, o in rows)
    refused = sum(o.refused for _, o in rows)
    print(f"{passed}/{len(rows)} passed, {refused} refused, {len(rows) - passed - refused} silent breakages")
    for case_label, outcome in rows:
        cells = [case_label, "pass" if outcome.passed else "refused" if outcome.refused else "FAIL", f"{outcome.seconds:.2f} s", outcome.why]
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")  # a regex's | would split the row
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

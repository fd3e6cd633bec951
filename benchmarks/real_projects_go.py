"""codegraft on real Go modules from the Go module proxy, judged by each module's own tests:
the Go half of benchmarks/bench_real_projects.py (``--language go``); the corpus is
benchmarks/real_projects_go.toml.

A module's ``flaky = ["TestName"]`` are tests that fail now and then on an unchanged copy: they
are skipped (``go test -skip``) in every run, the baseline's included.

A module is downloaded once with ``go mod download`` into a module cache of its own under
benchmarks/.corpus/go/ (reruns are offline: every ``go`` run here has GOPROXY=off) and copied,
writable, to ``.corpus/go/src/<module>@<version>/<module path>``: a module whose tests match their
own file paths (pkg/errors) finds its import path in them. A module released without a go.mod
gets the one its ``gomod`` line says.

A case passes when, on a fresh copy with codegraft's plan applied (gopls answering):
- something changed, and a move's or delete's declaration, or a renamed file, is where it should be;
- ``go build ./...`` succeeds and ``go vet ./...`` says nothing it did not say before;
- ``go test -vet=off ./...`` (vet is judged above, against its own findings before) is green with the same number of passed tests (subtests included) as before;
- for a rename or delete, the old name's leftover Go identifier tokens (comments and strings left out) are exactly the
  case's ``remaining_at = ["file.go:LINE", ...]`` (homonyms, and the uses a warned-about case
  leaves), or number ``remaining`` (default 0);
- only files whose text mentioned the old name (and a move's or rename-file's destination) changed;
- every changed Go file that ``gofmt -l`` did not list before is not listed after.
A case with ``expect = "<code>"`` passes when codegraft refuses it with that error code
(``"refused"``: any code) and changes nothing; ``expect = "warning"`` when the plan warns (its text containing ``warning``
when the case gives one) and the judge above passes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from benchmarks.leftover_places import leftover_places_verdict

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "benchmarks" / ".corpus" / "go"
DATA = REPO / "benchmarks" / "real_projects_go.toml"

Project = dict[str, object]
Case = dict[str, object]


class BaselineRed(Exception):
    """A module's own tests, build or vet fail before anything was changed."""


@dataclass(frozen=True)
class Baseline:
    source: Path
    passed: int
    vet: Counter[str]
    """go vet's findings as they were, without their line and column (edits move lines)."""
    unformatted: frozenset[str]
    digests: dict[str, str]
    texts: dict[str, str]
    flaky: list[str]


@dataclass
class Outcome:
    passed: bool
    seconds: float
    why: str
    note: str = ""


# -- modules -------------------------------------------------------------------------------------


def go_env(offline: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GOMODCACHE": str(CACHE / "modcache"), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local",
                "GOWORK": "off"})
    if offline:
        env["GOPROXY"] = "off"
    return env


def module_source(project: Project) -> Path:
    """The module's writable copy (downloaded from the proxy once)."""
    module, version = str(project["module"]), str(project["version"])
    target = CACHE / "src" / f"{project['name']}@{version}" / module
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    downloaded = _go(["go", "mod", "download", "-json", f"{module}@{version}"], CACHE, offline=False)
    found = json.loads(downloaded.stdout)
    if "Dir" not in found:
        raise BaselineRed(f"go mod download {module}@{version}: {found.get('Error', downloaded.stderr)}")
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        copy = Path(scratch) / "m"
        shutil.copytree(found["Dir"], copy)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)  # the module cache's copies are read-only
        if not (copy / "go.mod").exists():
            (copy / "go.mod").write_text(f"module {module}\n\n{project.get('gomod', 'go 1.12')}\n")
        target.parent.mkdir(parents=True, exist_ok=True)
        copy.rename(target)
    return target


def _go(command: list[str], cwd: Path, offline: bool = True, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=go_env(offline), timeout=timeout)


def run_tests(root: Path, flaky: list[str] | None = None) -> tuple[bool, int, str]:
    """(green, passed tests and subtests, the tail of the output). ``flaky``: the module's tests
    that fail now and then on an unchanged copy, skipped in every run (the baseline's too)."""
    skip = ["-skip", f"^({'|'.join(flaky)})$"] if flaky else []
    ran = _go(["go", "test", "-count=1", "-vet=off", *skip, "-json", "./..."], root)
    passed, output = 0, []
    for line in ran.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            output.append(line)
            continue
        if event.get("Action") == "pass" and event.get("Test"):
            passed += 1
        elif event.get("Action") == "output" and ("FAIL" in event.get("Output", "") or not event.get("Test")):
            output.append(event["Output"].rstrip())
    tail = "\n".join(output[-12:]) + ran.stderr[-800:]
    return ran.returncode == 0, passed, tail


def vet_findings(root: Path) -> tuple[bool, Counter[str]]:
    """(go build succeeded, go vet's findings with their line and column left out)."""
    built = _go(["go", "build", "./..."], root)
    if built.returncode != 0:
        return False, Counter(built.stderr.strip().splitlines()[:5])
    vetted = _go(["go", "vet", "./..."], root)
    found = [re.sub(r":\d+(:\d+)?:", ":", line) for line in vetted.stderr.splitlines()
             if re.match(r"\S+\.(go|s):\d+", line.removeprefix("vet: "))]
    if vetted.returncode != 0 and not found:
        found = vetted.stderr.strip().splitlines()[:5]
    return True, Counter(found)


def unformatted(root: Path, files: list[str]) -> frozenset[str]:
    paths = [f for f in files if f.endswith(".go")]
    if not paths:
        return frozenset()
    listed = subprocess.run(["gofmt", "-l", *paths], cwd=root, capture_output=True, text=True, check=False)
    return frozenset(line.strip() for line in listed.stdout.splitlines() if line.strip())


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and ".graft" not in p.parts}


def green_baseline(project: Project) -> Baseline:
    return baseline_at(module_source(project), str(project["name"]), _flaky(project))


def baseline_at(source: Path, name: str, flaky: list[str]) -> Baseline:
    """A module's state before any refactoring; BaselineRed when it does not build or its tests fail."""
    built, vet = vet_findings(source)
    if not built:
        raise BaselineRed(f"{name} does not build before any refactoring: {list(vet)}")
    green, passed, tail = run_tests(source, flaky)
    if not green:
        raise BaselineRed(f"{name}'s own tests fail before any refactoring:\n{tail}")
    digests = digest(source)
    texts = {p: (source / p).read_text(encoding="utf-8", errors="replace") for p in digests if p.endswith((".go", ".s", ".mod"))}
    return Baseline(source, passed, vet, unformatted(source, list(digests)), digests, texts, flaky)


def _flaky(project: Project) -> list[str]:
    return [str(name) for name in cast(list[object], project.get("flaky", []))]


# -- codegraft -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Graft:
    source: str
    warnings: tuple[str, ...]


def codegraft(root: Path, case: Case) -> Graft:
    """Plan and apply the case with codegraft and gopls; engine refusals propagate (GraftError)."""
    from engine.api import Engine, SourcePreference
    from engine.edits.session import EditOptions
    from engine.refactor.operations.base import RefactorOperation
    from engine.refactor.operations.move_file import FileRename
    from engine.refactor.operations.move_symbol import Move
    from engine.refactor.operations.rename_symbol import Rename
    from engine.refactor.operations.safe_delete import Delete
    from engine.workspace import Workspace
    from lsp_pool.adapter import PoolServices
    from process_tools.adapter import ProcessTools

    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace), tools=ProcessTools(workspace), source=SourcePreference.AUTO)
    strict = bool(case.get("strict", False))
    operation: RefactorOperation
    if case["op"] == "rename":
        operation = Rename(str(case["address"]), str(case["new_name"]), strict=strict)
    elif case["op"] == "rename-file":
        operation = FileRename(str(case["address"]), str(case["dest"]), strict=strict,
                               build_change=bool(case.get("build_change", False)))
    elif case["op"] == "move":
        operation = Move(str(case["address"]), str(case["dest"]), create=not (root / str(case["dest"])).exists(), strict=strict)
    else:
        operation = Delete(str(case["address"]))
    try:
        with workspace.remembering_reads():
            plan = engine.plan(operation)
            engine.edits().apply(plan.edit, EditOptions(allow_dirty=True))
    finally:
        engine.close()
    return Graft(plan.source.value, tuple(plan.warnings))


# -- judging -------------------------------------------------------------------------------------

_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)


def name_tokens(root: Path, name: str) -> list[str]:
    """``file.go:LINE`` of every Go identifier spelled ``name`` outside comments and strings."""
    pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    found = []
    for path in sorted(root.rglob("*.go")):
        if ".graft" in path.parts:
            continue
        code = _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), path.read_text(encoding="utf-8", errors="replace"))
        relative = path.relative_to(root).as_posix()
        found += [f"{relative}:{number}" for number, line in enumerate(code.split("\n"), 1) for _ in pattern.finditer(line)]
    return found


def _declares(text: str, name: str) -> bool:
    code = _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    return re.search(rf"^(func\s+(\([^)]*\)\s*)?{re.escape(name)}\b|type\s+{re.escape(name)}\b|(var|const)\s+{re.escape(name)}\b"
                     rf"|\t{re.escape(name)}\b[^\n]*=)", code, re.M) is not None


def placement_verdict(root: Path, case: Case) -> str:
    op, old = case["op"], str(case["old"])
    if op == "rename-file":
        if (root / str(case["address"])).exists() or not (root / str(case["dest"])).exists():
            return f"the file did not move from {case['address']} to {case['dest']}"
    elif op == "move":
        source, dest = root / str(case["address"]).partition(":")[0], root / str(case["dest"])
        if not dest.exists() or not _declares(dest.read_text(encoding="utf-8"), old):
            return f"{old} is not declared in {case['dest']}"
        if source.exists() and _declares(source.read_text(encoding="utf-8"), old):
            return f"{old} is still declared in its source (a copy)"
    elif op == "delete":
        path = root / str(case["address"]).partition(":")[0]
        if path.exists() and _declares(path.read_text(encoding="utf-8"), old):
            return f"{old} is still declared"
    return ""


def changed_files(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


def leftover_verdict(root: Path, case: Case) -> str:
    """A rename's or delete's leftover old-name tokens against the homonyms the case lists (a
    move within its package and a file rename keep every name as it is)."""
    if case["op"] not in ("rename", "delete"):
        return ""
    old = str(case["old"])
    left = name_tokens(root, old)
    return leftover_places_verdict(old, left, case)


def scope_verdict(changed: set[str], base: Baseline, case: Case) -> str:
    old = str(case["old"])
    own = {str(case["address"]).partition(":")[0], str(case.get("dest", ""))} if case["op"] in ("move", "rename-file") else set()
    allowed = own | {p for p, text in base.texts.items() if old in text}
    if case["op"] == "rename-file":
        allowed = own
    extra = sorted(changed - allowed)
    return f"unexpected files changed: {', '.join(extra[:4])}" if extra else ""


def build_verdict(root: Path, base: Baseline) -> str:
    built, vet = vet_findings(root)
    if not built:
        return f"go build fails: {'; '.join(list(vet)[:2])}"
    new = vet - base.vet
    return f"new go vet findings: {'; '.join(list(new)[:2])}" if new else ""


def suite_verdict(root: Path, base: Baseline) -> str:
    green, count, tail = run_tests(root, base.flaky)
    if green and count == base.passed:
        return ""
    last = [line for line in tail.strip().splitlines() if line.strip()][-3:]
    return f"tests: {count}/{base.passed} passed" + ("" if green else f" (red) {' | '.join(last)}")


def format_verdict(root: Path, changed: set[str], base: Baseline, case: Case) -> str:
    present = [p for p in changed if (root / p).exists()]
    was = set(base.unformatted)
    if case["op"] == "rename-file" and str(case["address"]) in was:
        was.add(str(case["dest"]))  # a renamed file keeps its formatting, whatever it was
    newly = sorted(unformatted(root, present) - was)
    return f"gofmt -l lists {', '.join(newly[:4])}" if newly else ""


def judge(root: Path, base: Baseline, case: Case) -> str:
    changed = changed_files(base.digests, digest(root))
    if not changed:
        return "no-op: no file changed"
    for verdict in (lambda: placement_verdict(root, case), lambda: build_verdict(root, base),
                    lambda: suite_verdict(root, base), lambda: leftover_verdict(root, case),
                    lambda: scope_verdict(changed, base, case), lambda: format_verdict(root, changed, base, case)):
        why = verdict()
        if why:
            return why
    return ""


def _first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0][:110] if text else ""


def verdict(root: Path, base: Baseline, case: Case, graft: Graft | None, error: BaseException | None) -> tuple[str, str]:
    """(why the case failed, '' when it passed; a note on how an ``expect`` case was met)."""
    from engine.errors import GraftError

    expect = case.get("expect")
    if expect is not None and expect != "warning":
        if error is None:
            return f"expected a refusal ({expect}), but it applied the change", ""
        if not isinstance(error, GraftError):
            return f"{type(error).__name__}: {_first_line(error)}", ""
        if expect != "refused" and error.code != expect:
            return f"refused with code {error.code}, expected {expect}: {_first_line(error)}", ""
        if changed_files(base.digests, digest(root)):
            return f"refused ({error.code}) but files changed", ""
        return "", f"refused ({error.code}): {_first_line(error)}"
    if error is not None or graft is None:
        return (f"{type(error).__name__}{f' ({error.code})' if isinstance(error, GraftError) else ''}: {_first_line(error)}"
                if error else "no plan"), ""
    if case["op"] == "rename" and graft.source != "lsp":
        return f"not from the server (source {graft.source})", ""
    if expect == "warning":
        wanted = str(case.get("warning", ""))
        if not any(wanted in w for w in graft.warnings) or not graft.warnings:
            return f"expected a warning{f' naming {wanted!r}' if wanted else ''}, the plan had: {list(graft.warnings)[:2]}", ""
        why = judge(root, base, case)
        return why, "" if why else "warned"
    return judge(root, base, case), ""


def attempt(base: Baseline, module: str, case: Case, scratch: Path) -> Outcome:
    """codegraft on a fresh copy of the module at ``scratch``/<module path>: applied, timed, judged."""
    root = scratch / module
    shutil.copytree(base.source, root)
    graft, error = None, None
    started = time.perf_counter()
    try:
        graft = codegraft(root, case)
    except Exception as failure:  # noqa: BLE001 - a refusal may be the expected outcome; the verdict decides
        error = failure
    seconds = time.perf_counter() - started
    try:
        why, note = verdict(root, base, case, graft, error)
    except Exception as failure:  # noqa: BLE001 - e.g. the tests timed out
        why, note = f"{type(failure).__name__}: {_first_line(failure)}", ""
    return Outcome(not why, seconds, why, note)


def case_label(project: Project, case: Case) -> str:
    return f"{project['name']}: {case['op']} {case['address']}" + (f" -> {case['new_name']}" if "new_name" in case else "")


def run(data: dict[str, object], only: set[str] | None) -> list[tuple[str, str, Outcome]]:
    """Every case of every (chosen) module: (module, label, outcome), printed as it goes."""
    import sys

    rows = []
    for project in cast(list[Project], data["project"]):
        if only is not None and project["name"] not in only:
            continue
        base = green_baseline(project)
        print(f"{project['name']} {project['version']}: {base.passed} tests green", file=sys.stderr)
        for case in cast(list[Case], project["case"]):
            with tempfile.TemporaryDirectory() as scratch:
                outcome = attempt(base, str(project["module"]), case, Path(scratch))
            label = case_label(project, case)
            rows.append((str(project["name"]), label, outcome))
            print(f"  {'PASS' if outcome.passed else 'fail'} {outcome.seconds:6.2f}s  {label}", file=sys.stderr)
            if outcome.why or outcome.note:
                print(f"      {outcome.why or outcome.note}", file=sys.stderr)
    return rows


def table(rows: list[tuple[str, str, Outcome]]) -> str:
    lines = [f"{'case':<90}{'codegraft (gopls)':>20}"]
    for _module, label, outcome in rows:
        lines.append(f"{label[:89]:<90}{('PASS' if outcome.passed else 'fail') + f' {outcome.seconds:6.2f}s':>20}")
    passed = sum(o.passed for _m, _l, o in rows)
    total = sum(o.seconds for _m, _l, o in rows)
    lines.append(f"{'total passed (time)':<90}{f'{passed}/{len(rows)} ({total:.1f}s)':>20}")
    return "\n".join(lines)

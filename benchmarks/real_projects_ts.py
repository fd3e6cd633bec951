"""Issue 40's TypeScript/JavaScript corpus: codegraft's refactorings on real npm packages
(benchmarks/real_projects_ts.toml), judged without the engine's help.

Run: ``.venv/bin/python benchmarks/bench_real_projects.py --language typescript [--backend both] [--only NAME]``
(tarballs come from the npm registry once, into benchmarks/.corpus/npm/; the test runners and
the packages a project's tests or types need are installed beside it, from the registry).

Two backends (issue 47): ``tsserver``, the projects as published (no TypeScript of their own:
typescript-language-server on TypeScript 5.9), and ``tsc-lsp``, each project made a TypeScript 7
project (its package.json and node_modules, benchmarks/real_projects_ts7.py), so that codegraft
serves it with TypeScript 7's ``tsc --lsp`` as it would a real one. A rename's plan must say it
came from that backend's server. TypeScript 7's server has no move: on ``tsc-lsp`` a move is done by
the pinned TypeScript 6 beside it, and without that one passes only when refused with the code
``unsupported_by_server`` (or the case's own ``expect`` code).

A case passes when, after codegraft's plan is applied to a fresh copy:
- something changed; a move's definition left the source and is in the destination; a renamed
  file left its old path; a deleted symbol's definition is gone;
- the project's own tests (where they ship and run offline) pass with the same count as before;
- ``tsc --noEmit`` is clean over every tsconfig/jsconfig the project has (``tsconfigs``), with the
  project's own compiler (TypeScript 7's on ``tsc-lsp``);
- no stale reference: the old identifier's tokens left in code (comments and strings skipped)
  are exactly the case's ``remaining_at`` places (homonyms), or number ``remaining``; after a
  rename-file no import or require names the old path;
- only files that mention the old name changed (plus a move's destination and a renamed file);
- formatting kept: a rename changes only lines holding the old name, and only by the rename;
  lines other operations add keep the file's indentation character, quotes and semicolons.
A case with ``expect = "<code>"`` passes only when codegraft refuses it with that error code
(``expect = "refusal"``: any engine error) and writes nothing.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from benchmarks.leftover_places import leftover_places_verdict
from benchmarks.real_projects_ts7 import (
    BACKENDS, SERVER_NAMES, TSC_LSP, TSSERVER, project_compiler, typescript7_missing, typescript7_variant)

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "benchmarks" / ".corpus" / "npm"
DATA = REPO / "benchmarks" / "real_projects_ts.toml"
CODE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
TEXT_SUFFIXES = (*CODE_SUFFIXES, ".json", ".md")
SKIPPED = frozenset({"node_modules", ".graft", ".git"})

Project = dict[str, object]
Case = dict[str, object]


@dataclass
class Outcome:
    passed: bool
    seconds: float
    why: str
    note: str = ""


# -- projects -------------------------------------------------------------------------------


def tool_missing(backend: str = TSSERVER) -> str:
    """Why the corpus cannot run here on ``backend`` ('' when it can): it needs node, npm, tsc and
    the server (on ``tsc-lsp``, the pinned TypeScript 7)."""
    for tool in ("node", "npm", "tsc", "typescript-language-server"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (.ci/install-servers installs it)"
    return typescript7_missing() if backend == TSC_LSP else ""


def load() -> list[Project]:
    return cast(list[Project], tomllib.loads(DATA.read_text(encoding="utf-8"))["project"])


def _slug(project: Project) -> str:
    return f"{str(project['package']).replace('@', '').replace('/', '-')}-{project['version']}"


def unpacked(project: Project) -> Path:
    """The pinned tarball from the npm registry, unpacked once; the project's extra ``files``
    (a tsconfig the tarball lacks) written, and its ``deps`` installed beside it and linked in
    as node_modules (so that copies share one install and the tree stays the tarball's)."""
    target = CACHE / _slug(project)
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    spec = f"{project['package']}@{project['version']}"
    print(f"downloading {spec} from the npm registry (once) ...", file=sys.stderr)
    packed = subprocess.run(["npm", "pack", "--json", "-q", spec], cwd=CACHE, capture_output=True, text=True,
                            check=True, timeout=600)
    archive = CACHE / json.loads(packed.stdout)[0]["filename"]
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        inner = Path(scratch) / "package"
        for path, text in cast(dict[str, str], project.get("files", {})).items():
            (inner / path).parent.mkdir(parents=True, exist_ok=True)
            (inner / path).write_text(text, encoding="utf-8")
        deps = cast(list[str], project.get("deps", []))
        if deps:
            modules = CACHE / f"{_slug(project)}-deps"
            modules.mkdir(exist_ok=True)
            (modules / "package.json").write_text('{"private": true}\n', encoding="utf-8")
            subprocess.run(["npm", "install", "-q", "--ignore-scripts", "--no-audit", "--no-fund", *deps],
                           cwd=modules, check=True, timeout=1200, capture_output=True)
            (inner / "node_modules").symlink_to(modules / "node_modules")
        inner.rename(target)
    return target


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in _files(root)}


def _files(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        parts = path.relative_to(root).parts
        if SKIPPED.intersection(parts) or not path.is_file() or path.is_symlink():
            continue
        found.append(path)
    return found


def texts(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in _files(root) if p.name.endswith(TEXT_SUFFIXES)}


# -- judges ---------------------------------------------------------------------------------


def run_tests(root: Path, project: Project) -> tuple[bool, int, str]:
    """(green, passed count, tail) of the project's own tests; (True, 0, '') when none run here."""
    command = cast(list[str], project.get("test", []))
    if not command:
        return True, 0, ""
    ran = subprocess.run(["bash", "-c", " ".join(command)], cwd=root, capture_output=True, text=True, timeout=600,
                         env={"PATH": f"{root / 'node_modules' / '.bin'}:/usr/bin:/bin", "HOME": str(root), "CI": "1",
                              "NO_COLOR": "1"})
    output = ran.stdout + ran.stderr
    found = re.findall(str(project["passed"]), output)
    count = sum(int(n) for n in found)
    return ran.returncode == 0, count, output[-800:]


def type_check(root: Path, project: Project, *, baseline: bool = False) -> str:
    """'' when ``tsc --noEmit`` over each of the project's configs, with the project's own compiler,
    reports no error but the ones the toml lists for it (``tsc7_errors``: TypeScript 7 rejects some
    JSDoc that 5.9 took, so a JavaScript project can be red on it as published), else the first
    errors. ``baseline``: the project as it is must report exactly the listed ones."""
    compiler = project_compiler(root)
    known = Counter(cast(list[str], project.get("tsc7_errors", [])) if compiler != "tsc" else [])
    found: dict[str, str] = {}  # "config: file: TScode" -> the first such error line
    keys: Counter[str] = Counter()
    for config in cast(list[str], project.get("tsconfigs", [])):
        checked = subprocess.run([compiler, "--noEmit", "-p", config], cwd=root, capture_output=True, text=True, timeout=600)
        errors = [line for line in checked.stdout.splitlines() if "error TS" in line]
        if checked.returncode != 0 and not errors:
            return f"tsc -p {config} failed: {(checked.stdout + checked.stderr)[-300:]}"
        for line in errors:
            spot = re.match(r"(.+?)\(\d+,\d+\): error (TS\d+)", line)
            key = f"{config}: {spot.group(1)}: {spot.group(2)}" if spot else f"{config}: {line}"
            keys[key] += 1
            found.setdefault(key, line)
    if baseline and keys != known:
        return f"tsc: the errors are not the listed tsc7_errors: {sorted(keys.elements())[:6]}"
    new = keys - known
    if new:
        lines = [found[key] for key in new]
        return f"tsc: {sum(new.values())} errors: {'; '.join(lines[:2])[:300]}"
    return ""


_COMMENT_OR_STRING = re.compile(
    r"//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`", re.S)


def code_only(text: str) -> str:
    """The text with comments and string literals blanked (newlines kept, so lines still count)."""
    def blank(match: re.Match[str]) -> str:
        body = match.group(0)
        if body.startswith("`"):  # a template's ${...} parts are code
            return "".join(re.findall(r"\$\{[^}]*\}", body)).replace("\n", " ") + "\n" * body.count("\n")
        return re.sub(r"[^\n]", " ", body)
    return _COMMENT_OR_STRING.sub(blank, text)


def identifier_places(root: Path, name: str, sources: tuple[str, ...] = ()) -> list[str]:
    """``file:line`` of every code token spelled ``name``, in the ``sources`` folders (all the
    project's files when none are given: the tarball's built output, when it has some, is not code
    a refactoring edits)."""
    spelled = r"\s*\.\s*".join(map(re.escape, name.split(".")))  # "Enum.Member": the qualified uses
    token = re.compile(rf"(?<![\w$]){spelled}(?![\w$])")
    found = []
    for path in sorted(_files(root)):
        if not path.name.endswith(CODE_SUFFIXES) or path.name.endswith(".min.js"):
            continue
        relative = path.relative_to(root).as_posix()
        if relative.startswith("dist/") or sources and not relative.startswith(tuple(f"{s}/" for s in sources)):
            continue
        code = code_only(path.read_text(encoding="utf-8", errors="replace"))
        found += [f"{relative}:{number}" for number, line in enumerate(code.splitlines(), 1) for _ in token.finditer(line)]
    return found


def leftover_verdict(root: Path, project: Project, case: Case) -> str:
    if case["op"] == "rename-file":
        return _stale_specifiers(root, case)
    old = str(case["old"])
    left = identifier_places(root, old, tuple(cast(list[str], project.get("sources", []))))
    if case["op"] == "move":
        return ""  # the moved name stays the same: placement and tsc judge a move
    return leftover_places_verdict(old, left, case, "tokens")


_SPECIFIER = re.compile(r"""(?:\bfrom\s*|\brequire\s*\(\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\1""", re.M)


def _stale_specifiers(root: Path, case: Case) -> str:
    """Imports, re-exports and requires that still resolve to the renamed file's old path."""
    old = posixpath.splitext(str(case["address"]))[0]
    stale = []
    for path in _files(root):
        if not path.name.endswith(CODE_SUFFIXES):
            continue
        relative = path.relative_to(root).as_posix()
        for match in _SPECIFIER.finditer(path.read_text(encoding="utf-8", errors="replace")):
            specifier = match.group(2)
            if not specifier.startswith("."):
                continue
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(relative), specifier))
            if re.sub(r"\.(?:[mc]?[jt]s|jsx|tsx)$", "", resolved) in (old, f"{old}/index"):
                stale.append(f"{relative}: {specifier}")
    return f"stale imports of {case['address']}: {', '.join(stale[:4])}" if stale else ""


def _defines(text: str, name: str) -> bool:
    pattern = (rf"^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
               rf"(?:function\*?|class|const|let|var|interface|type|enum)\s+{re.escape(name)}\b")
    return re.search(pattern, code_only(text), re.M) is not None


def placement_verdict(root: Path, case: Case) -> str:
    if case["op"] == "move":
        source, dest = root / str(case["address"]).split(":")[0], root / str(case["dest"])
        if source.is_file() and _defines(source.read_text(encoding="utf-8"), str(case["old"])):
            return "move: the definition is still in the source"
        if not dest.is_file() or not _defines(dest.read_text(encoding="utf-8"), str(case["old"])):
            return "move: the definition is not in the destination"
    if case["op"] == "rename-file":
        if (root / str(case["address"])).exists() or not (root / str(case["dest"])).is_file():
            return "rename-file: the file is not at its new path alone"
    if case["op"] == "delete":
        source = root / str(case["address"]).split(":")[0]
        if _defines(source.read_text(encoding="utf-8"), str(case["old"]).split("/")[-1]):
            return "delete: the definition is still there"
    return ""


def scope_verdict(changed: set[str], case: Case, pristine: Mapping[str, str]) -> str:
    old = str(case["old"]).split(".")[-1]  # an enum member's definition spells the member alone
    own = {str(case.get("dest", ""))} if case["op"] in ("move", "rename-file") else set()
    if case["op"] == "rename-file":
        own.add(str(case["address"]))
        old = posixpath.splitext(posixpath.basename(str(case["address"])))[0]
    allowed = own | {path for path, text in pristine.items() if old in text}
    extra = sorted(changed - allowed)
    return f"unexpected files changed: {', '.join(extra[:4])}" if extra else ""


def formatting_verdict(root: Path, changed: set[str], case: Case, pristine: Mapping[str, str]) -> str:
    """Lines the refactoring did not need are untouched; the lines it wrote keep the file's style."""
    for path in sorted(changed):
        if path not in pristine or not (root / path).is_file() or not path.endswith(CODE_SUFFIXES):
            continue
        before = pristine[path].splitlines()
        after = (root / path).read_text(encoding="utf-8").splitlines()
        why = (_rename_lines_only(before, after, case) if case["op"] == "rename"
               else _style_kept(pristine[path], before, after))
        if why:
            return f"formatting: {path}: {why}"
    return ""


def _rename_lines_only(before: list[str], after: list[str], case: Case) -> str:
    old, new = str(case["old"]).split(".")[-1], str(case["new_name"])
    either = re.compile(rf"(?<![\w$])(?:{re.escape(old)}|{re.escape(new)})(?![\w$])")
    if len(before) != len(after):
        return f"{len(before)} lines became {len(after)}"
    for number, (was, now) in enumerate(zip(before, after), 1):
        # Some of a line's old tokens may be homonyms the rename must keep: the line may differ
        # only where it spelled the old name.
        if was != now and either.sub("\0", was) != either.sub("\0", now) and not _renamed_with_alias(was, now, old, new):
            return f"line {number} changed beyond the rename: {was.strip()[:60]!r} -> {now.strip()[:60]!r}"
    return ""


def _renamed_with_alias(was: str, now: str, old: str, new: str) -> bool:
    """An import or export specifier that keeps the old local name through an alias (``new as old``)."""
    return now.replace(f"{new} as {old}", old) == was or now.replace(f"{old} as {new}", old) == was


def _style_kept(text: str, before: list[str], after: list[str]) -> str:
    indent_chars = {line[0] for line in before if line[:1] in (" ", "\t")}
    quotes = re.findall(r"""(?:from|require\()\s*(['"])""", text)
    quote = max(set(quotes), key=quotes.count) if quotes else None
    statements = [line.rstrip() for line in before if re.match(r"\s*(import|export)\b.*['\"]\)?;?\s*$", line)]
    semicolons = sum(line.endswith(";") for line in statements) * 2 > len(statements) if statements else None
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "insert"):
            continue
        for line in after[j1:j2]:
            if line[:1] in (" ", "\t") and indent_chars and line[0] not in indent_chars:
                return f"indented with {'tabs' if line[0] == chr(9) else 'spaces'}: {line.strip()[:60]!r}"
            if quote and re.search(r"""(?:from|require\()\s*(['"])""", line) and quote not in re.findall(
                    r"""(?:from|require\()\s*(['"])""", line):
                return f"quotes changed: {line.strip()[:60]!r}"
            if semicolons is not None and re.match(r"\s*(import|export)\b.*['\"]\)?;?\s*$", line) and \
                    line.rstrip().endswith(";") != semicolons:
                return f"semicolon style changed: {line.strip()[:60]!r}"
    return ""


def judge(root: Path, before: Mapping[str, str], project: Project, case: Case, baseline: int,
          pristine: Mapping[str, str]) -> str:
    """'' when the case passes, else why not (the cheap structural checks first)."""
    changed = {p for p in set(before) | set(digest(root)) if before.get(p) != digest(root).get(p)}
    if not changed:
        return "no-op: no file changed"
    for verdict in (lambda: placement_verdict(root, case),
                    lambda: leftover_verdict(root, project, case),
                    lambda: scope_verdict(changed, case, pristine),
                    lambda: formatting_verdict(root, changed, case, pristine),
                    lambda: type_check(root, project),
                    lambda: suite_verdict(root, project, baseline)):
        why = verdict()
        if why:
            return why
    return ""


def suite_verdict(root: Path, project: Project, baseline: int) -> str:
    green, count, tail = run_tests(root, project)
    if green and count == baseline:
        return ""
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    return f"tests: {count}/{baseline} passed" + ("" if green else f" (red) {last[:200]}")


class BaselineRed(Exception):
    """The project fails its own judges before anything changed: nothing can be judged on it."""


def green_baseline(project: Project, backend: str = TSSERVER) -> tuple[Path, int]:
    source = project_source(project, backend)
    why = type_check(source, project, baseline=True)
    green, count, tail = run_tests(source, project)
    if why or not green:
        raise BaselineRed(f"{project['name']} is red before any refactoring: {why or tail}")
    return source, count


def project_source(project: Project, backend: str) -> Path:
    """The unpacked project as ``backend`` serves it: as published, or made a TypeScript 7 project."""
    source = unpacked(project)
    return typescript7_variant(source) if backend == TSC_LSP else source


# -- codegraft ------------------------------------------------------------------------------


def codegraft(root: Path, case: Case) -> tuple[str, ...]:
    """Plan and apply the case with codegraft and its language server: the plan's warnings
    (which say the server it came from); refusals propagate."""
    from engine.api import Engine, SourcePreference
    from engine.edits.session import EditOptions
    from engine.refactor.operations.move_file import FileRename
    from engine.refactor.operations.move_symbol import Move
    from engine.refactor.operations.rename_symbol import Rename
    from engine.refactor.operations.safe_delete import Delete
    from engine.workspace import Workspace
    from lsp_pool.adapter import PoolServices
    from process_tools.adapter import ProcessTools

    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace), tools=ProcessTools(workspace),
                    source=SourcePreference.AUTO)
    try:
        with workspace.remembering_reads():
            operation = {"rename": lambda: Rename(str(case["address"]), str(case["new_name"])),
                         "move": lambda: Move(str(case["address"]), str(case["dest"])),
                         "rename-file": lambda: FileRename(str(case["address"]), str(case["dest"])),
                         "delete": lambda: Delete(str(case["address"]))}[str(case["op"])]()
            plan = engine.plan(operation)
            engine.edits().apply(plan.edit, EditOptions(allow_dirty=True))
    finally:
        engine.close()
    return tuple(plan.warnings)


UNSUPPORTED = "unsupported_by_server"


def expected_codes(case: Case, backend: str) -> tuple[str, ...]:
    """The refusal codes that pass the case on ``backend`` (() when it must be applied; "refusal":
    any engine error). TypeScript 7's server cannot move: a move is asked of the pinned TypeScript 6
    beside it (lsp_pool.typescript_companion), and without that one its only right answer is that code."""
    from lsp_pool.typescript_companion import pinned_tsserver

    expect = (str(case["expect"]),) if case.get("expect") else ()
    if backend == TSC_LSP and case["op"] == "move" and pinned_tsserver() is None:
        return (*expect, UNSUPPORTED)
    return expect


def served_verdict(case: Case, backend: str, warnings: tuple[str, ...]) -> str:
    """'' when a rename's plan came from ``backend``'s server (a corpus run on TypeScript 7 that
    tsserver answered would prove nothing), else why not."""
    server = SERVER_NAMES[backend]
    if case["op"] != "rename" or f"from {server}" in warnings:
        return ""
    said = [warning for warning in warnings if warning.startswith("from ")]
    return f"not from {server}: {said[0] if said else 'the plan names no server'}"


def verdict(root: Path, before: Mapping[str, str], project: Project, case: Case, baseline: int,
            pristine: Mapping[str, str], error: BaseException | None, backend: str = TSSERVER,
            warnings: tuple[str, ...] = ()) -> tuple[str, str]:
    """(why not, note) for codegraft's attempt at a case."""
    from engine.errors import GraftError

    codes = expected_codes(case, backend)
    if codes:
        expect = " or ".join(codes)
        if error is None:
            return f"expected a refusal ({expect}), but it applied the change", ""
        if not isinstance(error, GraftError):
            return f"{type(error).__name__}: {str(error)[:150]}", ""
        if "refusal" not in codes and error.code not in codes:
            return f"refused with code {error.code}, expected {expect}: {str(error).splitlines()[0][:120]}", ""
        if digest(root) != before:
            return "refused, but files changed", ""
        return "", f"refused ({error.code}): {str(error).splitlines()[0][:100]}"
    if error is not None:
        code = f" [{error.code}]" if isinstance(error, GraftError) else ""
        return f"{type(error).__name__}{code}: {str(error).splitlines()[0][:200] if str(error) else ''}", ""
    return served_verdict(case, backend, warnings) or judge(root, before, project, case, baseline, pristine), ""


def attempt(source: Path, before: Mapping[str, str], project: Project, case: Case, baseline: int,
            pristine: Mapping[str, str], scratch: Path, backend: str = TSSERVER) -> Outcome:
    """codegraft on a fresh copy of the project (its node_modules links kept): applied, timed, judged."""
    root = scratch / "p"
    shutil.copytree(source, root, symlinks=True)
    error: BaseException | None = None
    warnings: tuple[str, ...] = ()
    started = time.perf_counter()
    try:
        warnings = codegraft(root, case)
    except Exception as failure:  # noqa: BLE001 - a refusal or a crash is a result here
        error = failure
    seconds = time.perf_counter() - started
    try:
        why, note = verdict(root, before, project, case, baseline, pristine, error, backend, warnings)
    except Exception as failure:  # noqa: BLE001 - e.g. a judge timed out
        why, note = f"{type(failure).__name__}: {failure}", ""
    return Outcome(not why, seconds, why, note)


def case_label(project: Project, case: Case) -> str:
    return f"{project['name']}: {case['op']} {case['address']}"


Row = tuple[Project, Case, Outcome]


def run_backend(backend: str, only: set[str] | None) -> list[Row]:
    """Every case of the corpus (or of the ``only`` projects) on ``backend``, each on a fresh copy."""
    rows: list[Row] = []
    for project in load():
        if only is not None and project["name"] not in only:
            continue
        try:
            source, baseline = green_baseline(project, backend)
        except BaselineRed as red:
            raise SystemExit(str(red)) from None
        before, pristine = digest(source), texts(source)
        print(f"[{backend}] {project['name']} {project['version']}: baseline green ({baseline} tests)", file=sys.stderr)
        for case in cast(list[Case], project["case"]):
            with tempfile.TemporaryDirectory() as scratch:
                outcome = attempt(source, before, project, case, baseline, pristine, Path(scratch), backend)
            rows.append((project, case, outcome))
            print(f"  {'PASS' if outcome.passed else 'fail'} {outcome.seconds:6.2f}s  {case['op']:<11} {case['address']}"
                  + (f"\n      {outcome.why or outcome.note}" if outcome.why or outcome.note else ""), file=sys.stderr)
    return rows


def summary(backend: str, rows: list[Row]) -> str:
    """Per project: cases, passed, refused with the expected code, median seconds; then the total."""
    lines = [f"| project ({backend}) | cases | passed | refused as expected | median s |", "|---|---|---|---|---|"]
    names = list(dict.fromkeys(str(project["name"]) for project, _, _ in rows))
    for name in [*names, None]:
        mine = [outcome for project, _, outcome in rows if name is None or project["name"] == name]
        seconds = sorted(outcome.seconds for outcome in mine)
        median = seconds[len(seconds) // 2] if seconds else 0.0
        label = f"{name}" if name else "**total**"
        lines.append(f"| {label} | {len(mine)} | {sum(o.passed for o in mine)} | {sum(bool(o.note) for o in mine)} | "
                     f"{median:.1f} |")
    return "\n".join(lines)


def main(only: set[str] | None = None, backends: tuple[str, ...] = (TSSERVER,)) -> None:
    for backend in backends:
        missing = tool_missing(backend)
        if missing:
            raise SystemExit(f"{backend}: {missing}")
    for backend in backends:
        started = time.perf_counter()
        rows = run_backend(backend, only)
        print(f"\n== {backend}")
        for project, case, outcome in rows:
            print(f"{case_label(project, case)[:90]:<92}{'PASS' if outcome.passed else 'fail'} {outcome.seconds:6.2f}s  "
                  f"{outcome.why[:120]}")
        passed, refused = sum(o.passed for _, _, o in rows), sum(bool(o.note) for _, _, o in rows)
        print(f"total passed on {backend}: {passed}/{len(rows)} ({refused} of them refusals with the expected code), "
              f"{time.perf_counter() - started:.0f}s")
        print(summary(backend, rows))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main(set(sys.argv[1].split(",")) if len(sys.argv) > 1 else None, BACKENDS)

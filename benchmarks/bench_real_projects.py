"""Renames and moves on real PyPI projects, judged by the projects' own test suites; codegraft,
rope and jedi side by side, in the same run.

Run: ``.venv/bin/python benchmarks/bench_real_projects.py [--server] [--only NAME] [--tools codegraft,rope,jedi]``
(rope is installed into the venv on first use; sdists are fetched from PyPI once, into
benchmarks/.corpus/). Projects and cases are data: benchmarks/real_projects.toml.

A case passes for a tool when, after the tool's refactoring is applied to a fresh copy:
- the project's test suite is green with the same number of passed tests as before;
- no stale reference remains in code: for a rename, the old name occurs as a Python
  name token exactly ``remaining`` times (homonyms the case lists); for a move, no file
  but the source imports the name from the source or reads ``source.name``;
- only files that mention the old name (and, for a move, the destination) changed.
Times are the tool's plan + apply, wall clock; ratios matter, the machine is noisy.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tokenize
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CACHE = REPO / "benchmarks" / ".corpus"
DATA = REPO / "benchmarks" / "real_projects.toml"


@dataclass
class Outcome:
    passed: bool
    seconds: float
    why: str


# -- projects -----------------------------------------------------------------------


def unpacked(project: dict[str, object]) -> Path:
    name, version = str(project["name"]), str(project["version"])
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"downloading {name} {version} sdist from PyPI (once) ...", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    f"{name}=={version}", "--dest", str(CACHE)], check=True)
    archive = next(p for p in CACHE.iterdir() if p.name.lower().replace("_", "-").startswith(f"{name}-{version}".lower().replace("_", "-"))
                   and p.name.endswith(".tar.gz"))
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        inner = next(Path(scratch).iterdir())
        inner.rename(target)
    return target


def run_tests(root: Path, project: dict[str, object]) -> tuple[bool, int, str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, project["tests"])]  # type: ignore[arg-type]
    env = {"PYTHONPATH": str(root / str(project.get("pythonpath", "."))), "PATH": "/usr/bin:/bin", "HOME": str(root)}
    ran = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, timeout=600)
    found = re.search(r"(\d+) passed", ran.stdout)
    return ran.returncode == 0, int(found.group(1)) if found else 0, ran.stdout[-600:] + ran.stderr[-600:]


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and ".graft" not in p.parts and "__pycache__" not in p.parts
            and ".ropeproject" not in p.parts}


def name_tokens(root: Path, name: str) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if ".graft" in path.parts:
            continue
        try:
            # tokenize.tokenize honours coding cookies (test data may be latin-1).
            tokens = list(tokenize.tokenize(io.BytesIO(path.read_bytes()).readline))
        except (SyntaxError, tokenize.TokenError, UnicodeDecodeError):
            continue  # not Python a tool could have edited
        found += [f"{path.relative_to(root)}:{t.start[0]}" for t in tokens if t.type == tokenize.NAME and t.string == name]
    return found


# -- the tools -----------------------------------------------------------------------


def codegraft(root: Path, case: dict[str, object], server: bool) -> None:
    from engine.api import Engine, SourcePreference
    from engine.edits.session import EditOptions
    from engine.workspace import Workspace

    workspace = Workspace(root)
    services = None
    if server:
        from lsp_pool.adapter import PoolServices

        services = PoolServices(workspace)
    engine = Engine(workspace, services=services, source=SourcePreference.AUTO if server else SourcePreference.AST)
    try:
        if case["op"] == "rename":
            plan = engine.plan_rename(str(case["address"]), str(case["new_name"]))
        else:
            plan = engine.plan_move(str(case["address"]), str(case["dest"]))
        engine.edits().apply(plan.edit, EditOptions(allow_dirty=True))
    finally:
        engine.close()


def _position(root: Path, case: dict[str, object]) -> tuple[str, int, int]:
    """(file, 1-based line, 0-based column) of the case's target, for the peers' position APIs."""
    from engine.api import Engine
    from engine.names import PositionAddress, parse_address
    from engine.workspace import Workspace

    parsed = parse_address(str(case["address"]))
    if isinstance(parsed, PositionAddress) and parsed.column is not None:
        return parsed.file, parsed.line, parsed.column - 1
    engine = Engine(Workspace(root))
    try:
        symbol = engine.resolve(parsed)
    finally:
        engine.close()
    start = symbol.selection_range.start
    return symbol.file, start.line + 1, start.column


def rope_tool(root: Path, case: dict[str, object], file: str, line: int, column: int) -> None:
    import rope.base.project
    from rope.refactor.move import create_move
    from rope.refactor.rename import Rename

    project = rope.base.project.Project(str(root), ropefolder=None)
    try:
        resource = project.get_resource(file)
        text = resource.read()
        offset = sum(len(l) for l in text.splitlines(keepends=True)[: line - 1]) + column
        if case["op"] == "rename":
            changes = Rename(project, resource, offset).get_changes(str(case["new_name"]), in_hierarchy=True)
        else:
            changes = create_move(project, resource, offset).get_changes(project.get_resource(str(case["dest"])))
        project.do(changes)
    finally:
        project.close()


def jedi_tool(root: Path, case: dict[str, object], file: str, line: int, column: int) -> None:
    import jedi

    if case["op"] != "rename":
        raise NotImplementedError("jedi has no move refactoring")
    script = jedi.Script(path=str(root / file), project=jedi.Project(str(root)))
    script.rename(line, column, new_name=str(case["new_name"])).apply()


# -- judging -------------------------------------------------------------------------


def judge(root: Path, before: dict[str, str], project: dict[str, object], case: dict[str, object], baseline: int) -> str:
    """'' when the case passes, else why not."""
    green, count, tail = run_tests(root, project)
    if not green or count != baseline:
        return f"tests: {count}/{baseline} passed" + ("" if green else f" (red) {tail.strip().splitlines()[-1] if tail.strip() else ''}")
    old = str(case["old"])
    if case["op"] == "rename":
        left = name_tokens(root, old)
        if len(left) != int(case.get("remaining", 0)):  # type: ignore[arg-type]
            return f"stale: {len(left)} '{old}' names left (expected {case.get('remaining', 0)}): {', '.join(left[:4])}"
    else:
        module = str(case["module"])
        pattern = re.compile(rf"from\s+{re.escape(module)}\s+import\s[^\n]*\b{re.escape(old)}\b|\b{re.escape(module)}\.{re.escape(old)}\b")
        source = str(case["address"]).split(":")[0]
        stale = [p.relative_to(root).as_posix() for p in root.rglob("*.py")
                 if p.relative_to(root).as_posix() != source and pattern.search(p.read_text(encoding="utf-8", errors="replace"))]
        if stale:
            return f"stale imports of {module}.{old} in {', '.join(stale[:4])}"
    after = digest(root)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    allowed = {str(case.get("dest", ""))} | {p for p, text in PRISTINE.items() if old in text}
    extra = sorted(changed - allowed)
    return f"unexpected files changed: {', '.join(extra[:4])}" if extra else ""


PRISTINE: dict[str, str] = {}
"""The current project's Python files before any refactoring, by path."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", action="store_true", help="codegraft with its language servers (default: no server, --source ast)")
    parser.add_argument("--only", help="one project by name")
    parser.add_argument("--tools", default="codegraft,rope,jedi")
    args = parser.parse_args()
    tools = args.tools.split(",")
    if "rope" in tools:
        try:
            import rope  # noqa: F401
        except ImportError:
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "rope"], check=True)
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    totals = {tool: [0, 0, 0.0] for tool in tools}
    rows = []
    for project in data["project"]:
        if args.only and project["name"] != args.only:
            continue
        source = unpacked(project)
        green, baseline, tail = run_tests(source, project)
        if not green:
            raise SystemExit(f"{project['name']}'s own tests fail before any refactoring:\n{tail}")
        before = digest(source)
        PRISTINE.clear()
        PRISTINE.update({p: (source / p).read_text(encoding="utf-8", errors="replace") for p in before if p.endswith(".py")})
        print(f"{project['name']} {project['version']}: {baseline} tests green", file=sys.stderr)
        for case in project["case"]:
            file, line, column = _position(source, case)
            results = {}
            for tool in tools:
                with tempfile.TemporaryDirectory() as scratch:
                    root = Path(scratch) / "p"
                    shutil.copytree(source, root)
                    started = time.perf_counter()
                    try:
                        if tool == "codegraft":
                            codegraft(root, case, args.server)
                        elif tool == "rope":
                            rope_tool(root, case, file, line, column)
                        else:
                            jedi_tool(root, case, file, line, column)
                        seconds = time.perf_counter() - started
                        why = judge(root, before, project, case, baseline)
                    except Exception as error:  # noqa: BLE001 - a tool's failure is a result here
                        seconds = time.perf_counter() - started
                        why = f"{type(error).__name__}: {str(error).splitlines()[0][:100] if str(error) else ''}"
                results[tool] = Outcome(not why, seconds, why)
                totals[tool][0] += not why
                totals[tool][1] += 1
                totals[tool][2] += seconds
            rows.append((f"{project['name']}: {case['op']} {case['address']}", results))
            cells = "  ".join(f"{t}={'PASS' if r.passed else 'fail'} {r.seconds:5.2f}s" for t, r in results.items())
            print(f"  {case['op']:<6} {case['address']:<55} {cells}", file=sys.stderr)
            for tool, outcome in results.items():
                if not outcome.passed:
                    print(f"      {tool}: {outcome.why}", file=sys.stderr)
    print()
    print(f"{'case':<75}" + "".join(f"{t:>18}" for t in tools))
    for label, results in rows:
        print(f"{label[:74]:<75}" + "".join(f"{('PASS' if r.passed else 'fail') + f' {r.seconds:6.2f}s':>18}" for r in results.values()))
    print(f"{'total passed (time)':<75}" + "".join(f"{f'{p}/{n} ({s:.1f}s)':>18}" for p, n, s in totals.values()))


if __name__ == "__main__":
    main()

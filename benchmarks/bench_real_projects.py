"""Renames, moves and file renames on real PyPI projects, judged by the projects' own test suites; codegraft,
rope and jedi side by side, in the same run.

Run: ``.venv/bin/python benchmarks/bench_real_projects.py [--server] [--indexed-words] [--only NAME] [--tools codegraft,rope,jedi]``
(``--language go``: the Go module corpus instead, benchmarks/real_projects_go.toml, codegraft with
gopls, judged by go build, go vet and go test: benchmarks/real_projects_go.py; ``--language typescript
[--backend tsserver|tsc-lsp|both]``: the npm corpus on tsserver and/or TypeScript 7: benchmarks/real_projects_ts.py)
(rope is installed into the venv on first use; sdists are fetched from PyPI once, into
benchmarks/.corpus/). Projects and cases are data: benchmarks/real_projects.toml.

A case passes for a tool when, after the tool's refactoring is applied to a fresh copy:
- something changed (a no-op fails);
- for a move, the name's top-level definition left the source module and is in the
  destination (a copy fails); for a rename-file, the file left its old path and is at the
  new one;
- the project's test suite is green with the same number of passed tests as before;
- no stale reference remains in code, found by resolving imports and attributes
  (benchmarks/stale_references.py): ``from M import old`` in any form, ``x.old`` where ``x``
  is M imported under any name, ``from M import *`` users of a bare ``old``, ``"M.old"``
  strings, ``__all__`` entries; M is the defining/source module or a package that
  re-exported the name before; after a rename-file, nothing imports the old module in any
  form (``import``, ``from``, ``from pkg import old``, ``pkg.old``, dotted strings);
- for a rename, the old name's leftover Python name tokens (homonyms) are exactly the
  case's ``remaining_at = ["file.py:LINE", ...]`` locations, or, without that list, number
  exactly ``remaining``;
- only files that mention the old name (and, for a move, the destination) changed.

A case is ``op = "rename"`` (address, new_name, old), ``"move"`` (address, dest, old, module)
or ``"rename-file"`` (address = the file, dest = its new path, old = its dotted module).
A case with ``expect = "name_clash" | "refusal" | "warning"`` is one codegraft should refuse
(with that error code / any engine error) or warn about while keeping the suite green; rope
and jedi pass it when they leave the suite green. With --server, codegraft's plan must come
from the language server. Times are the tool's plan + apply, wall clock; ratios matter, the
machine is noisy.
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.leftover_places import leftover_places_verdict  # noqa: E402
from benchmarks.real_project_peers import jedi_tool, raw_server_tool, rope_tool  # noqa: E402
from benchmarks.stale_references import (  # noqa: E402
    move_verdict, rename_file_verdict, stale_module_references, stale_references)

CACHE = REPO / "benchmarks" / ".corpus"
DATA = REPO / "benchmarks" / "real_projects.toml"
REFUSALS = ("name_clash", "refusal")
"""``expect`` values a case passes by codegraft refusing it."""


@dataclass
class Outcome:
    passed: bool
    seconds: float
    why: str
    source: str = ""
    """Which source answered codegraft's plan (lsp / ast / regex); '' for the peers."""
    note: str = ""
    """How an ``expect`` case was met: 'refused: ...' or 'warned'."""


@dataclass(frozen=True)
class Graft:
    """What codegraft's plan said about itself."""

    source: str
    warnings: tuple[str, ...]


# -- projects -----------------------------------------------------------------------


def unpacked(project: dict[str, object]) -> Path:
    name, version = str(project["name"]), str(project["version"])
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return with_crlf(target, project)
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
    return with_crlf(target, project)


def with_crlf(root: Path, project: dict[str, object]) -> Path:
    """A copy of the unpacked project beside it whose ``crlf = [...]`` files have Windows line
    endings (sdists are LF-only, and a tool must keep a CRLF file CRLF, including the lines it
    inserts); ``root`` itself when the project names none. The unpacked sdist is never changed:
    another run may be reading it."""
    files = cast(list[str], project.get("crlf", []))
    if not files:
        return root
    target = root.with_name(root.name + "-crlf")
    if target.is_dir():
        return target
    with tempfile.TemporaryDirectory(dir=root.parent) as scratch:
        copy = Path(scratch) / "p"
        shutil.copytree(root, copy, symlinks=True)
        convert_to_crlf(copy, files)
        copy.rename(target)
    return target


def convert_to_crlf(root: Path, files: list[str]) -> None:
    for path in files:
        data = (root / path).read_bytes()
        (root / path).write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))


def install_test_deps(project: dict[str, object]) -> None:
    """The project's ``test_deps = [...]`` (distributions its suite imports: freezegun, pretend),
    installed into this interpreter once, from PyPI."""
    from importlib.metadata import PackageNotFoundError, distribution

    missing = []
    for name in cast(list[str], project.get("test_deps", [])):
        try:
            distribution(name)
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        print(f"installing {project['name']}'s test dependencies: {', '.join(missing)}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing], check=True)


class BaselineRed(Exception):
    """A project's own suite fails before anything was changed: nothing can be judged on it."""


def green_baseline(project: dict[str, object]) -> tuple[Path, int]:
    """The project unpacked, its test dependencies installed, and its suite run once as it is:
    (its source, the passing test count); BaselineRed with the suite's tail when it fails."""
    source = unpacked(project)
    install_test_deps(project)
    green, passed, tail = run_tests(source, project)
    if not green:
        raise BaselineRed(f"{project['name']}'s own tests fail before any refactoring:\n{tail}")
    return source, passed


def run_tests(root: Path, project: dict[str, object]) -> tuple[bool, int, str]:
    tests = cast(list[object], project["tests"])
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, tests)]
    # No bytecode: a .pyc written by an earlier run (or copied along with the tree, mtimes kept)
    # would be trusted over a same-sized, same-second edit (a rename to a name of equal length).
    env = {"PYTHONPATH": str(root / str(project.get("pythonpath", "."))), "PATH": "/usr/bin:/bin", "HOME": str(root),
           "PYTHONDONTWRITEBYTECODE": "1"}
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
        found += [f"{path.relative_to(root).as_posix()}:{t.start[0]}" for t in tokens if t.type == tokenize.NAME and t.string == name]
    return found


# -- the tools -----------------------------------------------------------------------


INDEXED_WORDS = False
"""--indexed-words: codegraft plans as the CLI's daemon does after its first call, with its files'
words indexed (engine.refactor.mentions), so that every search for a name is narrowed by them."""


def codegraft(root: Path, case: dict[str, object], server: bool) -> Graft:
    """Plan and apply the case with codegraft; engine refusals propagate (GraftError)."""
    from engine.api import Engine, SourcePreference
    from engine.edits.session import EditOptions
    from engine.refactor.operations.move_file import FileRename
    from engine.refactor.operations.move_symbol import Move
    from engine.refactor.operations.rename_symbol import Rename
    from engine.workspace import Workspace

    from process_tools.adapter import ProcessTools

    workspace = Workspace(root)
    services = None
    if server:
        from lsp_pool.adapter import PoolServices

        services = PoolServices(workspace)
    # The process tools, as `graft` has them: moves and file renames import the planned modules
    # before they are accepted (without them that check is skipped, with a warning).
    engine = Engine(workspace, services=services, tools=ProcessTools(workspace),
                    source=SourcePreference.AUTO if server else SourcePreference.AST)
    try:
        if INDEXED_WORDS:
            engine.graph()
            engine.index_words()
        with workspace.remembering_reads():  # one call's reads, as `graft` makes them (EngineClient.run_operation)
            if case["op"] == "rename":
                plan = engine.plan(Rename(str(case["address"]), str(case["new_name"])))
            elif case["op"] == "rename-file":
                plan = engine.plan(FileRename(str(case["address"]), str(case["dest"])))
            else:
                plan = engine.plan(Move(str(case["address"]), str(case["dest"])))
            engine.edits().apply(plan.edit, EditOptions(allow_dirty=True))
    finally:
        engine.close()
    return Graft(plan.source.value, tuple(plan.warnings))


def _position(root: Path, case: dict[str, object]) -> tuple[str, int, int]:
    """(file, 1-based line, 0-based column) of the case's target, for the peers' position APIs."""
    from engine.api import Engine
    from engine.names import PositionAddress, parse_address
    from engine.workspace import Workspace

    if case["op"] == "rename-file":
        return str(case["address"]), 1, 0  # the peers rename a module by its file alone
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


def _peer_position(root: Path, case: dict[str, object]) -> tuple[str, int, int] | None:
    """The target's position, or None when codegraft cannot resolve the address (a case it
    is expected to refuse may be one): the peers then fail that case, the run goes on."""
    from engine.errors import GraftError

    try:
        return _position(root, case)
    except GraftError:
        return None


# -- judging -------------------------------------------------------------------------


def judge(root: Path, before: dict[str, str], project: dict[str, object], case: dict[str, object], baseline: int,
          *, suite_only: bool = False) -> str:
    """'' when the case passes, else why not. Cheap structural checks run before the suite
    so that a no-op or a copy is named as such, not as whatever the suite happens to say.
    ``suite_only``: judge by the test suite alone (peers on an ``expect`` case)."""
    if suite_only:
        return suite_verdict(root, project, baseline)
    changed = changed_files(before, digest(root))
    if not changed:
        return "no-op: no file changed"
    for verdict in (lambda: placement_verdict(root, case),
                    lambda: suite_verdict(root, project, baseline),
                    lambda: stale_verdict(root, project, case),
                    lambda: leftover_verdict(root, case),
                    lambda: scope_verdict(changed, case),
                    lambda: line_endings_verdict(root, project, case)):
        why = verdict()
        if why:
            return why
    return ""


def placement_verdict(root: Path, case: dict[str, object]) -> str:
    """A move's definition, or a renamed file, is where it should be (not copied, not lost)."""
    if case["op"] == "move":
        return move_verdict(root, case)
    if case["op"] == "rename-file":
        return rename_file_verdict(root, case)
    return ""


def line_endings_verdict(root: Path, project: dict[str, object], case: dict[str, object]) -> str:
    """The project's CRLF files (``crlf = [...]``, followed through a rename-file) have no bare LF."""
    mixed = []
    for path in cast(list[str], project.get("crlf", [])):
        if case["op"] == "rename-file" and path == case["address"]:
            path = str(case["dest"])
        target = root / path
        if target.is_file() and b"\n" in target.read_bytes().replace(b"\r\n", b""):
            mixed.append(path)
    return f"bare LF written into CRLF files: {', '.join(mixed)}" if mixed else ""


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> set[str]:
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


def suite_verdict(root: Path, project: dict[str, object], baseline: int) -> str:
    green, count, tail = run_tests(root, project)
    if green and count == baseline:
        return ""
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    return f"tests: {count}/{baseline} passed" + ("" if green else f" (red) {last}")


def stale_verdict(root: Path, project: dict[str, object], case: dict[str, object]) -> str:
    pythonpath = str(project.get("pythonpath", "."))
    if case["op"] == "rename-file":
        found = stale_module_references(root, str(case["old"]), pythonpath)
    else:
        found = stale_references(root, case, PRISTINE, pythonpath)
    more = f" (+{len(found) - 4} more)" if len(found) > 4 else ""
    return f"stale references to {case['old']}: {'; '.join(found[:4])}{more}" if found else ""


def leftover_verdict(root: Path, case: dict[str, object]) -> str:
    """A rename's leftover old-name tokens against the homonyms the case lists: by location
    when it gives ``remaining_at`` (a right count can hide a wrong set), else by count."""
    if case["op"] != "rename":
        return ""
    old = str(case["old"])
    left = name_tokens(root, old)
    return leftover_places_verdict(old, left, case)


def scope_verdict(changed: set[str], case: dict[str, object]) -> str:
    old = str(case["old"])
    if case["op"] == "rename-file":
        # Importers spell the module's last part (``from . import base``) or its dotted name.
        old = old.rpartition(".")[2]
        own = {str(case["address"]), str(case["dest"])}
    else:
        own = {str(case.get("dest", ""))} if case["op"] == "move" else set()
    # A stub twin goes with its module: the destination's new stub, the renamed file's .pyi.
    own |= {f"{path}i" for path in own if path.endswith(".py")}
    allowed = own | {p for p, text in PRISTINE.items() if old in text}
    extra = sorted(changed - allowed)
    return f"unexpected files changed: {', '.join(extra[:4])}" if extra else ""


def first_line(error: BaseException) -> str:
    text = str(error)
    return text.splitlines()[0][:100] if text else ""


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {first_line(error)}"


def expected_refusal(case: dict[str, object], error: BaseException | None) -> tuple[str, str]:
    """(why not, note) for codegraft on a case it should refuse."""
    from engine.errors import GraftError

    expect = str(case["expect"])
    if error is None:
        return f"expected a refusal ({expect}), but it applied the change", ""
    if not isinstance(error, GraftError):
        return describe(error), ""  # a crash is not a refusal
    if expect == "name_clash" and error.code != "name_clash":
        return f"refused with code {error.code}, expected name_clash: {first_line(error)}", ""
    return "", f"refused: {first_line(error)}"


def codegraft_verdict(root: Path, before: dict[str, str], project: dict[str, object], case: dict[str, object],
                      baseline: int, server: bool, graft: Graft | None, error: BaseException | None) -> tuple[str, str]:
    """(why not, note) for codegraft's attempt at a case."""
    expect = case.get("expect")
    if expect in REFUSALS:
        return expected_refusal(case, error)
    if error is not None or graft is None:
        return describe(error) if error else "no plan", ""
    if server and case["op"] == "rename" and graft.source != "lsp":
        # Renames must come from the server when one is asked for; moves and file renames are
        # LibCST's by design (the server's own leaves relative imports behind), whatever --server says.
        return f"not from the server (source {graft.source})", ""
    if expect == "warning":
        if not graft.warnings:
            return "expected a warning, the plan had none", ""
        why = suite_verdict(root, project, baseline)
        return why, "" if why else "warned"
    return judge(root, before, project, case, baseline), ""


def peer_verdict(root: Path, before: dict[str, str], project: dict[str, object], case: dict[str, object],
                 baseline: int, error: BaseException | None) -> tuple[str, str]:
    """(why not, note) for rope or jedi. On an ``expect`` case only the suite counts, so a peer
    that refuses (raises before writing) passes as long as it broke nothing."""
    if case.get("expect"):
        why = judge(root, before, project, case, baseline, suite_only=True)
        return why, f"refused: {first_line(error)}" if error is not None and not why else ""
    if error is not None:
        return describe(error), ""
    return judge(root, before, project, case, baseline), ""


def attempt(tool: str, source: Path, before: dict[str, str], project: dict[str, object], case: dict[str, object],
            baseline: int, server: bool, position: tuple[str, int, int] | None) -> Outcome:
    """One tool on a fresh copy of the project: applied, timed, judged."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "p"
        shutil.copytree(source, root)
        graft: Graft | None = None
        error: BaseException | None = None
        started = time.perf_counter()
        try:
            if tool.startswith("codegraft"):
                graft = codegraft(root, case, _with_server(tool, server))
            elif position is None:
                raise LookupError(f"no position for {case['address']}: codegraft could not resolve it")
            elif tool == "rope":
                rope_tool(root, case, *position)
            elif tool == "basedpyright":
                raw_server_tool(root, case, *position)
            else:
                jedi_tool(root, case, *position)
        except Exception as failure:  # noqa: BLE001 - a tool's failure (or refusal) is a result here
            error = failure
        seconds = time.perf_counter() - started
        try:
            if tool.startswith("codegraft"):
                why, note = codegraft_verdict(root, before, project, case, baseline, _with_server(tool, server), graft, error)
            else:
                why, note = peer_verdict(root, before, project, case, baseline, error)
        except Exception as failure:  # noqa: BLE001 - e.g. the suite timed out
            why, note = describe(failure), ""
    return Outcome(not why, seconds, why, graft.source if graft else "", note)


PRISTINE: dict[str, str] = {}
"""The current project's text files before any refactoring, by path: a file a correct refactoring
may change mentions the old name (Python source and stubs, doctest text files, config)."""

_TEXT_SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt", ".cfg", ".toml", ".ini")


def pristine_texts(source: Path, files: Mapping[str, str] | list[str]) -> dict[str, str]:
    return {p: (source / p).read_text(encoding="utf-8", errors="replace") for p in files if p.endswith(_TEXT_SUFFIXES)}

TOOLS = ("codegraft-server", "codegraft-ast", "rope", "jedi", "basedpyright")
"""codegraft with its language servers, codegraft without (--source ast), rope, jedi, and the raw
basedpyright rename: side by side in one run. ``codegraft`` alone follows --server."""


def _with_server(tool: str, server_flag: bool) -> bool:
    return tool == "codegraft-server" or (tool == "codegraft" and server_flag)


def case_cells(results: Mapping[str, Outcome]) -> str:
    """``codegraft=PASS  0.48s [ast]  rope=fail  0.31s ...``: the source shows which answer was judged."""
    return "  ".join(f"{t}={'PASS' if r.passed else 'fail'} {r.seconds:5.2f}s" + (f" [{r.source}]" if r.source else "")
                     for t, r in results.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", action="store_true", help="codegraft with its language servers (default: no server, --source ast)")
    parser.add_argument("--only", help="projects by name, comma-separated")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, of {', '.join(TOOLS)} (default: all)")
    parser.add_argument("--data", default=str(DATA), help="the corpus (default: benchmarks/real_projects.toml)")
    parser.add_argument("--language", choices=("python", "go", "typescript"), default="python",
                        help="python: the PyPI corpus, codegraft beside its peers; go: the Go module corpus "
                             "(benchmarks/real_projects_go.toml), codegraft with gopls; typescript: the npm corpus "
                             "(benchmarks/real_projects_ts.toml), codegraft with typescript-language-server")
    parser.add_argument("--backend", choices=("tsserver", "tsc-lsp", "both"), default="tsserver",
                        help="--language typescript: the projects as published, on typescript-language-server "
                             "(tsserver); each made a TypeScript 7 project, on TypeScript 7's tsc --lsp (tsc-lsp); or both")
    parser.add_argument("--indexed-words", action="store_true",
                        help="codegraft with its files' words indexed first, as the CLI's daemon has them after a call")
    args = parser.parse_args()
    if args.language == "typescript":
        from benchmarks import real_projects_ts

        backends = real_projects_ts.BACKENDS if args.backend == "both" else (args.backend,)
        real_projects_ts.main(set(args.only.split(",")) if args.only else None, backends)
        return
    if args.language == "go":
        from benchmarks import real_projects_go

        only_go = set(args.only.split(",")) if args.only else None
        data_go = args.data if args.data != str(DATA) else str(real_projects_go.DATA)
        print(real_projects_go.table(real_projects_go.run(tomllib.loads(Path(data_go).read_text(encoding="utf-8")), only_go)))
        return
    global INDEXED_WORDS
    INDEXED_WORDS = args.indexed_words
    tools = args.tools.split(",")
    if "rope" in tools:
        try:
            import rope  # noqa: F401
        except ImportError:
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "rope"], check=True)
    data = tomllib.loads(Path(args.data).read_text(encoding="utf-8"))
    only = set(args.only.split(",")) if args.only else None
    totals = {tool: [0, 0, 0.0] for tool in tools}
    rows = []
    for project in data["project"]:
        if only is not None and project["name"] not in only:
            continue
        try:
            source, baseline = green_baseline(project)
        except BaselineRed as red:
            raise SystemExit(str(red)) from None
        before = digest(source)
        PRISTINE.clear()
        PRISTINE.update(pristine_texts(source, before))
        print(f"{project['name']} {project['version']}: {baseline} tests green", file=sys.stderr)
        for case in project["case"]:
            position = _peer_position(source, case)
            results = {tool: attempt(tool, source, before, project, case, baseline, args.server, position) for tool in tools}
            for tool, outcome in results.items():
                totals[tool][0] += outcome.passed
                totals[tool][1] += 1
                totals[tool][2] += outcome.seconds
            rows.append((f"{project['name']}: {case['op']} {case['address']}", results))
            print(f"  {case['op']:<6} {case['address']:<55} {case_cells(results)}", file=sys.stderr)
            for tool, outcome in results.items():
                if not outcome.passed or outcome.note:
                    print(f"      {tool}: {outcome.why or outcome.note}", file=sys.stderr)
    print()
    print(f"{'case':<75}" + "".join(f"{t:>18}" for t in tools))
    for label, results in rows:
        print(f"{label[:74]:<75}" + "".join(f"{('PASS' if r.passed else 'fail') + f' {r.seconds:6.2f}s':>18}" for r in results.values()))
    print(f"{'total passed (time)':<75}" + "".join(f"{f'{p}/{n} ({s:.1f}s)':>18}" for p, n, s in totals.values()))


if __name__ == "__main__":
    main()

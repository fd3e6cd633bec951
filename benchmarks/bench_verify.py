"""An apply's latency with the check after it (issue 39), beside an unverified edit in the same run.

Run: ``.venv/bin/python benchmarks/bench_verify.py [--only werkzeug,rxjs,pflag] [--runs 2] [--skip-serena]``

Projects, each a fresh copy made a git repository:
- werkzeug 3.1.3, its sdist from PyPI (``pip download``), with basedpyright;
- rxjs 7.8.1's TypeScript sources from npm (``npm pack``), with typescript-language-server;
- github.com/spf13/pflag v1.0.5 from the Go module proxy (``go mod download``), with gopls.

On each, one long-lived engine (as the CLI's daemon keeps one), warmed by one apply and its undo,
times from the plan to the answer, each followed by an undo that is not timed:
- an insert after a function, ``--check full``, ``fast`` and ``none``;
- a method rename with about 20 references, ``--check full``, ``fast`` and ``none``;
- both again with ``full`` and the engine's kept errors forgotten first ("cold"): the errors
  before the write asked of the server, as for the first edit after any other change (after an
  undo the workspace is as it was, and the errors of the earlier check before the write are kept).
For each it prints the scope (the written files and the importers that can see what the edit
changed, engine.edits.check_scope), how many of them were compared, every per-file diagnostics
request's time (the before pass and the after pass with its recheck), and how many files mention
the names the edit changed.

Beside it, in the same run: Serena's ``insert_after_symbol`` and ``rename_symbol`` (MCP, warm,
no check after the edit) on werkzeug when Serena is installed (see benchmarks/agent_servers.py's
``find_serena``), and the raw server's rename request alone (a bare client, no edit written) on
each project. Ratios are printed; nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.raw_lsp import RawClient  # noqa: E402
from engine.client import EngineClient  # noqa: E402
from engine.edits.session import EditOptions  # noqa: E402
from engine.edits.verification import CheckMode, Verification  # noqa: E402
from engine.opening import open_engine  # noqa: E402
from engine.refactor.operations.insert_text import InsertAfter  # noqa: E402
from engine.refactor.operations.rename_symbol import Rename  # noqa: E402
from lsp_pool.registry import SPECS_BY_ID, locate  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "graft-bench-verify"
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false"]
TARGETS = {"insert": 0.5, "rename": 1.0}
"""The issue's targets in seconds, verification included (werkzeug, warm)."""


@dataclass(frozen=True)
class Project:
    name: str
    server: str
    fetch: Callable[[Path], Path]
    """Brings the sources into the cache folder given and returns the project's root there."""
    insert_after: str
    inserted: str
    inserted_name: str
    rename: str
    """The method's address for codegraft."""
    new_name: str
    rename_at: tuple[str, str]
    """For the raw server: the file and the text whose first occurrence starts at the method's name."""
    serena_insert: tuple[str, str] | None = None
    serena_rename: tuple[str, str] | None = None
    serena_language: str = "python_basedpyright"
    """Serena's id of the language server it runs for the project."""


def _run(command: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def _werkzeug(cache: Path) -> Path:
    root = cache / "werkzeug-3.1.3"
    if not root.is_dir():
        _run([sys.executable, "-m", "pip", "download", "-q", "werkzeug==3.1.3", "--no-deps", "--no-binary", ":all:", "-d", str(cache)])
        with tarfile.open(cache / "werkzeug-3.1.3.tar.gz") as archive:
            archive.extractall(cache, filter="data")
    return root


def _rxjs(cache: Path) -> Path:
    root = cache / "rxjs" / "package"
    if not root.is_dir():
        _run(["npm", "pack", "-q", "rxjs@7.8.1"], cwd=cache)
        with tarfile.open(cache / "rxjs-7.8.1.tgz") as archive:
            archive.extractall(cache / "rxjs", filter="data")
    return root


def _pflag(cache: Path) -> Path:
    root = cache / "pflag"
    if not root.is_dir():
        found = json.loads(_run(["go", "mod", "download", "-json", "github.com/spf13/pflag@v1.0.5"], cwd=cache))
        shutil.copytree(found["Dir"], root)
        for path in [root, *root.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)  # the module cache's copies are read-only
    return root


PROJECTS = (
    Project("werkzeug", "basedpyright", _werkzeug,
            "src/werkzeug/utils.py:secure_filename", "def bench_inserted() -> int:\n    return 1\n", "bench_inserted",
            "src/werkzeug/sansio/multipart.py:MultipartDecoder/next_event", "next_part_event",
            ("src/werkzeug/sansio/multipart.py", "def next_event"),
            ("secure_filename", "src/werkzeug/utils.py"), ("MultipartDecoder/next_event", "src/werkzeug/sansio/multipart.py")),
    Project("rxjs", "typescript-language-server", _rxjs,
            "src/internal/util/noop.ts:noop", "export function benchInserted(): number {\n  return 1;\n}\n", "benchInserted",
            "src/internal/Subscription.ts:Subscription/remove", "detach", ("src/internal/Subscription.ts", "remove(teardown"),
            ("noop", "src/internal/util/noop.ts"), ("Subscription/remove", "src/internal/Subscription.ts"), "typescript"),
    Project("pflag", "gopls", _pflag,
            "flag.go:FlagSet/Parsed", "func benchInserted() int {\n\treturn 1\n}\n", "benchInserted",
            "flag.go:FlagSet/Parsed", "WasParsed", ("flag.go", "Parsed() bool"),
            ("Parsed[0]", "flag.go"), ("Parsed[0]", "flag.go"), "go"),  # Serena names the method Parsed[0], the function Parsed[1]
)


def fresh_copy(source: Path, scratch: Path, name: str) -> Path:
    root = scratch / name
    shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(".git", ".graft", ".serena"))
    _run([*GIT, "init", "-q"], cwd=root)
    _run([*GIT, "add", "-A"], cwd=root)
    _run([*GIT, "commit", "-qm", "as released"], cwd=root)
    return root


# -- codegraft: a long-lived engine ------------------------------------------------------------


@dataclass
class Run:
    seconds: float
    plan: float
    """The plan's share of ``seconds``; the rest is the apply with its check."""
    verification: Verification | None
    edits: int
    passes: dict[str, list[float]]
    """Each diagnostics request's seconds, by pass: before the write, after it, and the recheck of the importers."""


@dataclass
class Case:
    name: str
    mode: CheckMode
    nothing_kept: bool = False
    """The engine's kept errors forgotten before each run: the errors before the write are asked
    of the server, as for the first edit of a file after any change."""
    runs: list[Run] = field(default_factory=list)


class TimedServices:
    """The engine's language services with every diagnostics request timed, by pass: ``before``
    until the apply tells the servers of its write, ``after`` from then, ``recheck`` from the first
    request asked as a recheck (the after pass asked once more for the untouched importers)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.passes: dict[str, list[float]] = {}
        self._phase = "before"

    def start(self) -> None:
        self.passes = {"before": [], "after": [], "recheck": []}
        self._phase = "before"

    def files_changed(self, *args: Any, **kwargs: Any) -> Any:
        if self._phase == "before":
            self._phase = "after"
        return self._inner.files_changed(*args, **kwargs)

    def diagnostics(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("recheck"):
            self._phase = "recheck"
        started = time.perf_counter()
        try:
            return self._inner.diagnostics(*args, **kwargs)
        finally:
            self.passes.setdefault(self._phase, []).append(time.perf_counter() - started)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def codegraft_cases(project: Project, root: Path, runs: int) -> list[Case]:
    engine = open_engine(root)
    timed = TimedServices(engine.services)
    engine.services = timed  # a timing proxy of the same interface
    client = EngineClient(engine)
    operations = {"insert": InsertAfter(project.insert_after, project.inserted),
                  "rename": Rename(project.rename, project.new_name)}
    cases = [Case(f"{kind} {mode.value}", mode) for kind in operations for mode in (CheckMode.FULL, CheckMode.FAST, CheckMode.NONE)]
    cases += [Case(f"{kind} full, cold", CheckMode.FULL, nothing_kept=True) for kind in operations]
    try:
        engine.index()
        for operation in operations.values():  # warm: the server has seen every file in scope once
            warm = client.run_operation(operation, apply=True, options=EditOptions(allow_dirty=True, check=CheckMode.FULL))
            client.undo(warm.transaction)
        for case in cases:
            operation = operations[case.name.split()[0]]
            for _ in range(runs):
                timed.start()
                if case.nothing_kept:
                    engine.kept_errors.clear()
                started = time.perf_counter()
                with engine.workspace.remembering_reads():  # as EngineClient.run_operation does
                    plan = engine.plan(operation)
                    planned = time.perf_counter()
                    outcome = client.run(plan, apply=True, options=EditOptions(allow_dirty=True, check=case.mode))
                seconds = time.perf_counter() - started
                verified = outcome.verification
                case.runs.append(Run(seconds, planned - started, verified, outcome.edits, dict(timed.passes)))
                client.undo(outcome.transaction)
                print(f"  [{project.name}] {case.name}: {seconds:.2f} s; {verified.summary() if verified else 'no check'}",
                      file=sys.stderr, flush=True)
    finally:
        engine.close()
    return cases


# -- beside it: the raw server's rename, and Serena ----------------------------------------------


def raw_rename(project: Project, root: Path, runs: int) -> tuple[list[float], int]:
    """The server's own rename request alone through a bare client (no edit written), warm."""
    command = list(locate(SPECS_BY_ID[project.server]) or ())
    if not command:
        return [], 0
    file, text = project.rename_at
    lines = (root / file).read_text().splitlines()
    line = next(n for n, row in enumerate(lines) if text in row)
    column = lines[line].index(re.split(r"[ (]", text.removeprefix("def "))[0], lines[line].index(text))
    client = RawClient(command, str(root))
    try:
        client.request("initialize", {
            "processId": None, "rootUri": root.as_uri(), "workspaceFolders": [{"uri": root.as_uri(), "name": project.name}],
            "capabilities": {"window": {"workDoneProgress": True}, "workspace": {"configuration": True}},
        })
        client.notify("initialized", {})
        uri = (root / file).as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": _language(file), "version": 1,
                                                                "text": (root / file).read_text()}})
        place = {"textDocument": {"uri": uri}, "position": {"line": line, "character": column}}
        edit: Any = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the server has loaded the project enough to answer
            try:
                edit = client.request("textDocument/rename", {**place, "newName": project.new_name})
            except RuntimeError:
                edit = None
            if edit:
                break
            time.sleep(0.5)
        times = []
        for _ in range(runs + 1):
            started = time.perf_counter()
            edit = client.request("textDocument/rename", {**place, "newName": project.new_name})
            times.append(time.perf_counter() - started)
        return times[1:], _edit_count(edit)
    finally:
        client.close()


def _language(file: str) -> str:
    return {".py": "python", ".ts": "typescript", ".go": "go"}[Path(file).suffix]


def _edit_count(edit: Any) -> int:
    if not edit:
        return 0
    changes = edit.get("documentChanges") or [{"edits": e} for e in (edit.get("changes") or {}).values()]
    return sum(len(change.get("edits", [])) for change in changes)


async def serena_edits(project: Project, root: Path, scratch: Path, runs: int) -> tuple[dict[str, list[float]], str]:
    """Serena's unverified insert and rename (warm), each put back with git after; and why not, if not run."""
    from benchmarks.agent_servers import find_serena, serena_spec
    from mcp.client import Client
    from mcp.client.stdio import stdio_client

    if project.serena_insert is None or project.serena_rename is None:
        return {}, "no Serena case for this project"
    executable, why = find_serena(None)
    if executable is None:
        return {}, why
    spec, why = serena_spec(executable, root, scratch, project.serena_language)
    if spec is None:
        return {}, why
    times: dict[str, list[float]] = {"insert": [], "rename": []}
    with (scratch / "serena.log").open("w") as log:
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(stdio_client(spec.params, errlog=log), cache=None))
            (name, path), (method, method_path) = project.serena_insert, project.serena_rename
            calls = {"insert": ("insert_after_symbol", {"name_path": name, "relative_path": path, "body": "\n\n" + project.inserted}),
                     "rename": ("rename_symbol", {"name_path": method, "relative_path": method_path, "new_name": project.new_name})}
            for kind, (tool, arguments) in calls.items():
                for attempt in range(runs + 1):  # the first call warms its server
                    started = time.perf_counter()
                    result = await asyncio.wait_for(client.call_tool(tool, arguments), 300)
                    seconds = time.perf_counter() - started
                    text = "".join(getattr(item, "text", "") for item in result.content)
                    if result.is_error or text.lower().startswith("error"):
                        return times, f"Serena's {tool} failed: {text[:200]}"
                    if attempt:
                        times[kind].append(seconds)
                    _run(["git", "checkout", "-q", "--", "."], cwd=root)
    return times, spec.version


# -- report ------------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _pass(times: list[float]) -> str:
    if not times:
        return "-"
    return f"{len(times)}, {sum(times):.2f}, {median(times) * 1000:.0f}, {max(times) * 1000:.0f}"


def mentions(root: Path, names: list[str]) -> int:
    """Source files whose text holds any of the names as a word."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    suffixes = {".py", ".pyi", ".ts", ".tsx", ".go"}
    return sum(1 for path in root.rglob("*") if path.suffix in suffixes and ".git" not in path.parts and ".graft" not in path.parts
               and pattern.search(path.read_text(errors="replace")))


def report(project: Project, root: Path, cases: list[Case], raw: tuple[list[float], int], serena: tuple[dict[str, list[float]], str]) -> None:
    print(f"\n## {project.name} ({project.server})")
    print("Diagnostics requests of the last run, per pass: count, sum s, median ms, max ms.")
    print(f"{'case':<17} {'median s':>8} {'plan s':>7} {'scope':>5} {'checked':>7} {'edits':>5} "
          f"{'before':>20} {'after':>20} {'recheck':>20}  answer")
    for case in cases:
        last = case.runs[-1]
        verified = last.verification
        passes = [_pass(last.passes.get(name, [])) for name in ("before", "after", "recheck")]
        print(f"{case.name:<17} {median([r.seconds for r in case.runs]):>8.2f} {last.plan:>7.2f} "
              f"{len(verified.in_scope) if verified else 0:>5} {len(verified.checked) if verified else 0:>7} {last.edits:>5} "
              f"{passes[0]:>20} {passes[1]:>20} {passes[2]:>20}  {verified.summary() if verified else '-'}")
    names = {"insert": [project.inserted_name], "rename": [project.rename.rsplit("/", 1)[-1], project.new_name]}
    for kind, words in names.items():
        print(f"files mentioning {', '.join(words)} (a scope narrowed to the changed names holds at least these): "
              f"{mentions(root, words)}")
    by_case = {case.name: median([r.seconds for r in case.runs]) for case in cases}
    raw_times, raw_edits = raw
    if raw_times:
        print(f"raw {project.server} rename request alone: {median(raw_times):.3f} s ({raw_edits} edits); "
              f"codegraft rename full / raw: {by_case['rename full'] / median(raw_times):.1f}x, "
              f"fast / raw: {by_case['rename fast'] / median(raw_times):.1f}x, none / raw: {by_case['rename none'] / median(raw_times):.1f}x")
    serena_times, serena_said = serena
    if serena_times.get("insert") and serena_times.get("rename"):
        print(f"Serena ({serena_said}), unverified: insert {median(serena_times['insert']):.3f} s, rename {median(serena_times['rename']):.3f} s")
        for kind in ("insert", "rename"):
            print(f"  codegraft {kind} full / Serena: {by_case[kind + ' full'] / median(serena_times[kind]):.1f}x, "
                  f"fast / Serena: {by_case[kind + ' fast'] / median(serena_times[kind]):.1f}x, "
                  f"none / Serena: {by_case[kind + ' none'] / median(serena_times[kind]):.1f}x")
    else:
        print(f"Serena: not run ({serena_said})")
    if project.name == "werkzeug":
        for kind, target in TARGETS.items():
            print(f"target {kind} with full verification <= {target} s: measured {by_case[kind + ' full']:.2f} s "
                  f"({by_case[kind + ' full'] / target:.1f}x the target); with nothing kept from an earlier check "
                  f"{by_case[kind + ' full, cold']:.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(p.name for p in PROJECTS))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--skip-serena", action="store_true")
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    wanted = set(args.only.split(","))
    for project in PROJECTS:
        if project.name not in wanted:
            continue
        if locate(SPECS_BY_ID[project.server]) is None:
            print(f"\n## {project.name}: skipped, {project.server} is not installed")
            continue
        source = project.fetch(CACHE)
        scratch = Path(tempfile.mkdtemp(prefix=f"graft-bench-verify-{project.name}-"))
        try:
            print(f"{project.name}: codegraft ...", file=sys.stderr, flush=True)
            cases = codegraft_cases(project, fresh_copy(source, scratch, "codegraft"), args.runs)
            print(f"{project.name}: raw {project.server} ...", file=sys.stderr, flush=True)
            raw = raw_rename(project, fresh_copy(source, scratch, "raw"), args.runs)
            serena: tuple[dict[str, list[float]], str] = ({}, "--skip-serena")
            if not args.skip_serena:
                print(f"{project.name}: Serena ...", file=sys.stderr, flush=True)
                serena = asyncio.run(serena_edits(project, fresh_copy(source, scratch, "serena"), scratch, args.runs))
            report(project, scratch / "codegraft", cases, raw, serena)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GRAFT_DAEMON", "0")
    sys.exit(main())

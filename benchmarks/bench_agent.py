"""An agent's task list over MCP, on a real project: codegraft (``graft mcp``) and, where it is
installed, Serena, each over stdio through the official ``mcp`` client, each on its own copy of
the same project with the same language server (basedpyright).

Run: ``.venv/bin/python benchmarks/bench_agent.py [--project NAME] [--skip-serena] [--serena PATH] [--keep]``

Issue 43's run: ``--all werkzeug,pflag,redux``: the Python tasks on werkzeug 3.1.3, then six
tasks each on a Go and a TypeScript project (benchmarks/agent_languages.py), codegraft and Serena
in the same run, ending with one table: tasks right, broken tests, calls, characters, wall time.

A benchmark, not a test: it prints a report and asserts nothing. For every task and server it
gives the wall time of the first and the second call, the size of each answer in characters
(its text content plus the JSON of its structured content: what a client receives) and whether
the answer was right, with the reason. Right and wrong are decided against the code itself
(``ast``/``tokenize`` of the copy, the files on disk after an edit, ``python -c "import module"``),
never against another tool; benchmarks/agent_targets.py picks the targets and knows the answers.

The project is a pinned sdist of benchmarks/real_projects.toml (default sqlparse), fetched into
benchmarks/.corpus/ like bench_real_projects.py does, copied to a scratch folder once per server
(the cache is never edited), ``git init``-ed and committed, so a tool's dirty-file guard sees a
real repository. Tasks, in order, each two calls:

- overview of a module, overview of the project (codegraft only: Serena has no such tool);
- find a ``Class/method`` by name path; references of a function (by name path, then by the
  FILE:LINE:COL of a call site: Serena addresses symbols by name path only); read the function's
  body; its definition from a call site (FILE:LINE:COL on the callee's name; Serena's
  find_declaration takes a regex with one group around the name instead);
- rename the function and rename it back: the project must be byte-identical afterwards;
- two edits in a row to one file (replace_symbol_body on two functions; both must land);
- a replace with an unexpected indent and one with an unclosed parenthesis (each sent twice):
  right is a refusal with nothing written, or a written result that imports and is the code
  that was meant;
- insert a function after a symbol, then another after the one just inserted.

Read tasks send the same call twice (cold, then warm). Edits are applied for real (codegraft's
``apply: true``); after each edit task the copy is put back to its commit by rewriting the changed
files, as a user's ``git checkout`` would, so one task's outcome never decides the next one's.

Serena: the ``serena`` executable is looked for as --serena, $SERENA_BIN, on PATH, then in
$TMPDIR/serena-venv (``python3.11 -m venv /tmp/serena-venv && /tmp/serena-venv/bin/pip install
serena-agent``). It runs ``start-mcp-server --context agent`` with a private SERENA_HOME (no
dashboard, no usage report, tools interface), its project configuration kept outside the copy,
and the language server ``python_basedpyright`` pointed at the basedpyright-langserver of this
virtualenv. When it is missing or does not start, the report says Serena was skipped and why.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from mcp.client import Client
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks import agent_targets as truth
from benchmarks.agent_suite import Suite, werkzeug_suite
from benchmarks.agent_targets import Targets
from benchmarks.bench_real_projects import DATA, unpacked
from benchmarks.agent_servers import (CALL_TIMEOUT, GIT_IDENTITY, Outcome, ServerSpec, Session,  # noqa: E402
                                      codegraft_spec, find_serena, serena_spec)
from benchmarks.agent_tasks import TASKS, Context  # noqa: E402
from benchmarks import agent_languages as languages  # noqa: E402

# -- running a server ------------------------------------------------------------------------


@dataclass
class ServerRun:
    name: str
    version: str = ""
    language_server: str = ""
    skipped: str = ""
    connect_seconds: float = 0.0
    tools: list[str] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    log: str = ""
    suite_ran: bool = False
    """The project's own tests were run (a baseline, then after each edit)."""


def make_copy(source: Path, scratch: Path, server: str) -> Path:
    """The project copied for one server, as a fresh git repository with one commit."""
    root = scratch / server / source.name
    shutil.copytree(source, root, symlinks=True, ignore=shutil.ignore_patterns(".git", ".graft", ".serena", "__pycache__"))
    git = ["git", "-C", str(root), *GIT_IDENTITY]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "--no-verify", "-m", "pristine sdist"], check=True)
    return root


async def run_server(spec: ServerSpec, root: Path, targets: Targets, log_path: Path, timeout: float,
                     answers: Path | None = None, suite_for: Callable[[Path], Suite] | None = None) -> ServerRun:
    """The task list through one server on its copy ``root``; with ``suite_for``, the project's
    suite is run on the untouched copy first and in each state an edit leaves."""
    run = ServerRun(spec.adapter.name, spec.version, spec.language_server, log=str(log_path))
    suite = suite_for(root) if suite_for is not None else None
    run.suite_ran = suite is not None
    base = {path: (root / path).read_bytes() for path in truth.digest(root)}
    ctx_base_digest = truth.digest(root)
    with log_path.open("w") as log:
        async with AsyncExitStack() as stack:
            started = time.perf_counter()
            try:
                client = await stack.enter_async_context(Client(stdio_client(spec.params, errlog=log), cache=None))
                run.tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            except Exception as error:  # noqa: BLE001  (any failure to start is reported, not raised)
                run.skipped = f"did not start: {_innermost(error)}"
                return run
            run.connect_seconds = time.perf_counter() - started
            ctx = Context(Session(client, timeout), spec.adapter, targets, root, base, ctx_base_digest, suite)
            for task in TASKS:
                outcome = await task(ctx)
                print(f"  [{run.name}] {outcome.task}: {outcome.verdict} "
                      f"({', '.join(f'{c.seconds:.2f}s' for c in outcome.calls) or 'no call'})", file=sys.stderr, flush=True)
                run.outcomes.append(outcome)
    if answers is not None:
        write_answers(run, answers)
    return run


def write_answers(run: ServerRun, answers: Path) -> None:
    """Every call of ``run`` in full, one JSON object a line, for a closer look (``--keep``)."""
    with answers.open("a") as out:
        for outcome in run.outcomes:
            for call in outcome.calls:
                out.write(json.dumps({"server": run.name, "task": outcome.task, "tool": call.tool, "arguments": call.arguments,
                                      "seconds": call.seconds, "is_error": call.is_error, "text": call.text,
                                      "structured": call.structured}, default=str) + "\n")


def _innermost(error: BaseException) -> str:
    """The first leaf of an exception group (the SDK's task groups wrap the real error)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"



# -- the report ------------------------------------------------------------------------------


def _seconds(outcome: Outcome, index: int) -> str:
    return f"{outcome.calls[index].seconds:.2f}" if len(outcome.calls) > index else "-"


def _chars(outcome: Outcome, index: int) -> str:
    return f"{outcome.calls[index].chars:,}" if len(outcome.calls) > index else "-"


def report(runs: list[ServerRun], targets: Targets, project: str, keep: bool) -> None:
    print(f"\nbench_agent: {project}")
    for line in targets.describe():
        print(f"  {line}")
    print("\nservers:")
    for run in runs:
        if run.skipped:
            print(f"  {run.name:<10} SKIPPED: {run.skipped}")
        else:
            print(f"  {run.name:<10} {run.version}; {run.language_server}; connect + list_tools {run.connect_seconds:.2f} s, "
                  f"{len(run.tools)} tools" + (f"; server log {run.log}" if keep else ""))
    done = [run for run in runs if not run.skipped]
    if not done:
        return
    header = f"{'task':<30} {'server':<10} {'1st s':>7} {'2nd s':>7} {'chars 1st':>10} {'chars 2nd':>10}  result"
    print("\n" + header + "\n" + "-" * len(header))
    for index in range(len(TASKS)):
        for run in done:
            outcome = run.outcomes[index]
            print(f"{outcome.task:<30} {run.name:<10} {_seconds(outcome, 0):>7} {_seconds(outcome, 1):>7} "
                  f"{_chars(outcome, 0):>10} {_chars(outcome, 1):>10}  {outcome.verdict}")
    print("(1st s of the first task includes the language server's start; chars = text content + JSON of structured content)")
    for run in done:
        calls = [c for o in run.outcomes for c in o.calls]
        echoed = [c for c in calls if isinstance(c.structured, dict) and set(c.structured) == {"result"} and c.structured["result"] == c.text]
        if calls and len(echoed) == len(calls):
            print(f"note: every {run.name} answer's structured content is {{\"result\": <its text>}}: its chars count the text twice")
    print("\nmedians over the tasks each server could do (chars: both calls' answers):")
    print(f"  {'server':<10} {'1st s':>7} {'2nd s':>7} {'chars':>8} {'max chars':>10}  right")
    for run in done:
        ran = [o for o in run.outcomes if o.calls]
        firsts = [o.calls[0].seconds for o in ran]
        seconds = [o.calls[1].seconds for o in ran if len(o.calls) > 1]
        sizes = [c.chars for o in ran for c in o.calls]
        right = sum(o.verdict == "right" for o in run.outcomes)
        judged = sum(o.verdict != "n/a" for o in run.outcomes)
        print(f"  {run.name:<10} {statistics.median(firsts) if firsts else 0:>7.2f} {statistics.median(seconds) if seconds else 0:>7.2f} "
              f"{int(statistics.median(sizes)) if sizes else 0:>8,} {max(sizes, default=0):>10,}  {right}/{judged} "
              f"({len(run.outcomes) - judged} n/a)")
    shared = [index for index in range(len(TASKS)) if all(run.outcomes[index].calls for run in done)]
    if len(done) > 1 and shared:
        # The measure of issue 16: the median answer size over the same tasks, every server having answered them.
        print(f"\nmedian answer size over the {len(shared)} tasks every server did (both calls' answers):")
        for run in done:
            sizes = [c.chars for index in shared for c in run.outcomes[index].calls]
            print(f"  {run.name:<10} {int(statistics.median(sizes)):>8,} chars")
    print("\nwhy:")
    for index in range(len(TASKS)):
        for run in done:
            outcome = run.outcomes[index]
            restored = f" [copy restored: {outcome.restored} file(s)]" if outcome.restored else ""
            print(f"  {outcome.task} / {run.name}: {outcome.verdict}: {outcome.reason}{restored}")
    largest = sorted(((c.chars, run.name, o.task, c.tool) for run in done for o in run.outcomes for c in o.calls), reverse=True)[:5]
    print("\nlargest answers:")
    for chars, server, task, tool in largest:
        print(f"  {chars:>8,} chars  {server:<10} {tool} ({task})")


# -- main ------------------------------------------------------------------------------------


CORPUS = REPO / "benchmarks" / ".corpus"


def load_project(name: str) -> tuple[dict[str, Any], Path]:
    if name == "werkzeug":  # issue 43's project: not one of the suites' projects, fetched as bench_verify.py does
        from benchmarks.bench_verify import _werkzeug
        CORPUS.mkdir(parents=True, exist_ok=True)
        return {"name": "werkzeug", "version": "3.1.3", "pythonpath": "src"}, _werkzeug(CORPUS)
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    project = next((p for p in data["project"] if p["name"] == name), None)
    if project is None:
        raise SystemExit(f"no project {name!r} in {DATA}; known: {', '.join(p['name'] for p in data['project'])}")
    # The LF sdist as published (bench_real_projects.py makes CRLF twins of some; not wanted here).
    return project, unpacked({**project, "crlf": []})


def summary_rows(project: str, runs: list[ServerRun], broken: list[str]) -> list[str]:
    """One row per server; characters and wall time also over only the tasks every server did
    (a task one server has no tool for costs it nothing)."""
    done = [run for run in runs if not run.skipped]
    shared = [index for index in range(len(done[0].outcomes)) if all(run.outcomes[index].calls for run in done)] if done else []
    return [summary_row(project, run, count, shared) for run, count in zip(runs, broken)]


def summary_row(project: str, run: ServerRun, broken: str, shared: list[int]) -> str:
    """Tasks right, broken tests, calls, characters and wall time (the calls' seconds, summed)."""
    if run.skipped:
        return f"| {project} | {run.name} | skipped: {run.skipped[:120]} | | | | | | | |"
    both = [c for index in shared for c in run.outcomes[index].calls]
    calls = [c for o in run.outcomes for c in o.calls]
    judged = [o for o in run.outcomes if o.verdict != "n/a"]
    right = sum(o.verdict == "right" for o in judged)
    na = len(run.outcomes) - len(judged)
    return (f"| {project} | {run.name} | {right}/{len(judged)}" + (f" ({na} n/a: no tool)" if na else "")
            + f" | {broken} | {len(calls)} | {sum(c.chars for c in calls):,} | {sum(c.seconds for c in calls):.1f} s"
            f" | {sum(c.chars for c in both):,} | {sum(c.seconds for c in both):.1f} s | {run.connect_seconds:.1f} s |")


async def language_runs(name: str, args: argparse.Namespace, scratch: Path) -> list[str]:
    """A Go or TypeScript project's six tasks with codegraft, then Serena; its summary rows."""
    project = languages.PROJECTS[name]
    CORPUS.mkdir(parents=True, exist_ok=True)
    source = project.fetch(CORPUS)
    runs: list[ServerRun] = []
    servers: list[tuple[str, ServerSpec | None, str]] = []
    root = make_copy(source, scratch / name, "codegraft")
    servers.append(("codegraft", codegraft_spec(root), ""))
    if not args.skip_serena:
        executable, why = find_serena(args.serena)
        spec = None
        if executable:
            spec, why = serena_spec(executable, make_copy(source, scratch / name, "serena"), scratch / name, project.serena_language)
        servers.append(("serena", spec, why))
    for server, spec, why in servers:
        run = ServerRun(server, skipped=why)
        if spec is not None:
            run.version, run.language_server = spec.version, spec.language_server
            copy = scratch / name / server / source.name
            print(f"{server} on {copy} ...", file=sys.stderr, flush=True)
            with (scratch / f"{name}.{server}.stderr.log").open("w") as log:
                async with AsyncExitStack() as stack:
                    started = time.perf_counter()
                    try:
                        client = await stack.enter_async_context(Client(stdio_client(spec.params, errlog=log), cache=None))
                        await client.list_tools()
                        run.connect_seconds = time.perf_counter() - started
                        run.outcomes = await languages.run_tasks(Session(client, args.call_timeout), server, copy, project,
                                                                 lambda line: print(line, file=sys.stderr, flush=True))
                    except Exception as error:  # noqa: BLE001  (a server that does not start is reported)
                        run.skipped = f"did not start: {_innermost(error)}"
            if args.keep:
                write_answers(run, scratch / name / "answers.jsonl")
        runs.append(run)
        for outcome in run.outcomes:
            print(f"  {name} / {server} / {outcome.task}: {outcome.verdict}: {outcome.reason[:300]} "
                  f"({len(outcome.calls)} call(s), {sum(c.chars for c in outcome.calls):,} chars, "
                  f"{sum(c.seconds for c in outcome.calls):.2f} s)")
    return summary_rows(f"{name} {project.version}", runs, [str(sum(languages.broken(o) for o in run.outcomes)) for run in runs])


async def main_async(args: argparse.Namespace) -> None:
    if args.all:
        scratch = Path(tempfile.mkdtemp(prefix="bench-agent-"))
        rows = []
        try:
            for name in args.all.split(","):
                if name in languages.PROJECTS:
                    rows += await language_runs(name, args, scratch)
                else:
                    rows += await python_runs(name, args, scratch)
        finally:
            if not args.keep:
                shutil.rmtree(scratch, ignore_errors=True)
        # The calls' wall time leaves out the connection (start, initialize, list_tools), where a
        # server may start its language server: that is the last column.
        print("\n| project | server | tasks right | broken tests | calls | characters | wall time (calls) "
              "| characters, tasks both did | wall time, tasks both did | connect + list_tools |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
        return
    await python_runs(args.project, args, None)


async def python_runs(name: str, args: argparse.Namespace, shared_scratch: Path | None) -> list[str]:
    """The Python task list on one project (the report above), and its summary rows."""
    project, source = load_project(name)
    targets = truth.pick_targets(source, str(project.get("pythonpath", "")).strip("./"))
    error = truth.import_error(source, targets)
    if error:
        raise SystemExit(f"{targets.module_name} does not import in the pristine sdist: {error}")
    scratch = shared_scratch / name if shared_scratch is not None else Path(tempfile.mkdtemp(prefix="bench-agent-"))
    scratch.mkdir(parents=True, exist_ok=True)
    runs: list[ServerRun] = []
    try:
        root = make_copy(source, scratch, "codegraft")
        print(f"codegraft on {root} ...", file=sys.stderr, flush=True)
        answers = scratch / "answers.jsonl" if args.keep else None
        suite_for = (lambda copy: werkzeug_suite(source, CORPUS, copy)) if project["name"] == "werkzeug" else None
        runs.append(await run_server(codegraft_spec(root), root, targets, scratch / "codegraft.stderr.log", args.call_timeout, answers,
                                     suite_for))
        if args.skip_serena:
            runs.append(ServerRun("serena", skipped="--skip-serena"))
        else:
            executable, why = find_serena(args.serena)
            spec = None
            if executable:
                root = make_copy(source, scratch, "serena")
                spec, why = serena_spec(executable, root, scratch)
            if spec is None:
                runs.append(ServerRun("serena", skipped=why))
            else:
                print(f"serena ({spec.version}) on {root} ...", file=sys.stderr, flush=True)
                runs.append(await run_server(spec, root, targets, scratch / "serena.stderr.log", args.call_timeout, answers,
                                             suite_for))
                if runs[-1].skipped:
                    tail = Path(runs[-1].log).read_text(errors="replace").strip().splitlines()[-5:]
                    runs[-1].skipped += "; log tail: " + " | ".join(tail)
        report(runs, targets, f"{project['name']} {project['version']} (sdist from benchmarks/.corpus, one git-committed copy per server)", args.keep)
    finally:
        if args.keep:
            print(f"\nscratch kept: {scratch}")
        elif shared_scratch is None:
            shutil.rmtree(scratch, ignore_errors=True)
    # The Python tasks are judged by imports and the code, and where its suite is set up (werkzeug)
    # by the project's own tests in each state an edit leaves.
    broken = [str(sum(o.broken or 0 for o in run.outcomes)) if run.suite_ran else "not run" for run in runs]
    return summary_rows(f"{project['name']} {project['version']}", runs, broken)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", default="sqlparse", help="a project of benchmarks/real_projects.toml, or werkzeug (default: sqlparse)")
    parser.add_argument("--skip-serena", action="store_true", help="run codegraft only")
    parser.add_argument("--serena", help="the serena executable (default: $SERENA_BIN, PATH, then $TMPDIR/serena-venv/bin/serena)")
    parser.add_argument("--call-timeout", type=float, default=CALL_TIMEOUT, help="seconds one tool call may take (default: 300)")
    parser.add_argument("--all", metavar="P1,P2", help="several projects in one run, Python ones and "
                        f"{', '.join(languages.PROJECTS)} (six tasks each), ending with one summary table "
                        "(issue 43: werkzeug,pflag,redux)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies, server logs and every answer (answers.jsonl)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

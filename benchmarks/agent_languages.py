"""bench_agent.py's Go and TypeScript projects (issue 43): six tasks each, asked of codegraft's MCP
server and Serena's in the same run, each on its own git-committed copy.

The tasks: read a function's body, find its references, rename it, move a function to another
file, insert a function after it, undo the last edit. Serena has no move and no undo tool: those
two are ``n/a`` for it (an agent would have to rewrite the files by hand). Right and wrong are
decided against the code itself: the function's text read from the file, its call sites found
by a word search of the code (comment lines excluded), and after every edit the project's own
judge (pflag: ``go build ./...`` and ``go test -vet=off ./...``, vet off because pflag's own
flag_test.go fails it; redux: ``tsc -p tsconfig.json``, redux ships no tests; the pristine copy must
pass them first), plus the file contents the edit must leave. A failed judge after an edit is
counted as broken tests. After each edit task the copy is put back to its commit, so one task's
outcome never decides the next one's (the undo task makes its own edit first).

Targets are fixed per project and were chosen by hand: a top-level function with call sites in
more than one place (Serena names a Go method ``Parsed[0]``-style; a top-level function has one
name path in both tools).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.agent_servers import Call, Outcome, Request, Session  # noqa: E402


@dataclass(frozen=True)
class LanguageProject:
    name: str
    version: str
    serena_language: str
    fetch: Callable[[Path], Path]
    suffix: str
    module: str
    function: str
    new_name: str
    move_function: str
    move_to: str
    move_creates: bool
    inserted: str
    inserted_name: str
    judge: list[list[str]]
    """The commands that must pass after an edit (run in the copy)."""
    comment: str
    """What starts a comment line in this language (its lines are not references)."""


def _run(command: list[str], cwd: Path | None = None) -> str:
    return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True).stdout


def _pflag(cache: Path) -> Path:
    """pflag v1.0.5 from the Go module proxy, writable."""
    root = cache / "pflag-1.0.5"
    if not root.is_dir():
        found = json.loads(_run(["go", "mod", "download", "-json", "github.com/spf13/pflag@v1.0.5"], cwd=cache))
        shutil.copytree(found["Dir"], root)
        for path in [root, *root.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)  # the module cache's copies are read-only
    return root


def _redux(cache: Path) -> Path:
    """redux 5.0.1 as benchmarks/real_projects_ts.py prepares it (its tsconfig, @types/node installed)."""
    root = cache / "npm" / "redux-5.0.1"
    if not (root / "node_modules").is_dir():
        raise SystemExit(f"{root} is not prepared: run benchmarks/real_projects_ts.py --only redux once")
    return root


PROJECTS = {
    "pflag": LanguageProject(
        "pflag", "1.0.5", "go", _pflag, ".go", "flag.go", "stripUnknownFlagValue", "dropUnknownFlagValue",
        "wrap", "wrap.go", True, "func benchInserted() int {\n\treturn 1\n}\n", "benchInserted",
        # go vet is off: pflag 1.0.5's own flag_test.go fails it (a redundant newline in a Println).
        [["go", "build", "./..."], ["go", "test", "-vet=off", "-count=1", "./..."]], "//"),
    "redux": LanguageProject(
        "redux", "5.0.1", "typescript", _redux, ".ts", "src/utils/kindOf.ts", "kindOf", "describeKind",
        "kindOf", "src/utils/warning.ts", False, "export function benchInserted(): number {\n  return 1\n}\n", "benchInserted",
        [["tsc", "-p", "tsconfig.json"]], "//"),
}


# -- how each server is asked --------------------------------------------------------------


def codegraft_request(task: str, p: LanguageProject) -> Request | None:
    at = f"{p.module}:{p.function}"
    requests: dict[str, Request] = {
        "read": ("read_symbol", {"address": at}),
        "references": ("find_references", {"address": at}),
        "rename": ("rename_symbol", {"address": at, "new_name": p.new_name, "apply": True}),
        "move": ("move_symbol", {"address": f"{p.module}:{p.move_function}", "dest": p.move_to, "create": p.move_creates, "apply": True}),
        "insert": ("insert_after_symbol", {"address": at, "text": p.inserted, "apply": True}),
        "undo": ("undo_edit", {}),
    }
    return requests[task]


def serena_request(task: str, p: LanguageProject) -> Request | None:
    return {
        "read": ("find_symbol", {"name_path_pattern": p.function, "relative_path": p.module, "include_body": True}),
        "references": ("find_referencing_symbols", {"name_path": p.function, "relative_path": p.module}),
        "rename": ("rename_symbol", {"name_path": p.function, "relative_path": p.module, "new_name": p.new_name}),
        "move": None,  # no tool for it
        "insert": ("insert_after_symbol", {"name_path": p.function, "relative_path": p.module, "body": p.inserted}),
        "undo": None,  # no tool for it
    }[task]


def refused(server: str, call: Call) -> bool:
    return call.is_error or (server == "serena" and call.text.lstrip().lower().startswith("error"))


def answer_lines(server: str, call: Call) -> set[tuple[str, int]]:
    """The (file, 1-based line) places an answer names."""
    if server == "serena":
        try:
            found = json.loads(call.text)
        except ValueError:
            return set()
        lines: set[tuple[str, int]] = set()
        for file, kinds in found.items() if isinstance(found, dict) else []:
            for entries in kinds.values() if isinstance(kinds, dict) else []:
                for entry in entries:
                    for match in re.finditer(r"^\s*>\s*(\d+):", entry.get("content_around_reference", ""), re.MULTILINE):
                        lines.add((file, int(match.group(1)) + 1))
        return lines
    structured = call.structured if isinstance(call.structured, dict) else {}
    locations = structured.get("locations")
    if isinstance(locations, list):
        return {(loc["file"], loc["line"]) for loc in locations}
    return {(m.group(1), int(m.group(2))) for m in re.finditer(r"^\s*([^\s:]+\.\w+):(\d+)(?::\d+)?(?=\s|$)", call.text, re.MULTILINE)}


def answer_body(server: str, call: Call) -> str:
    if server == "serena":
        try:
            found = json.loads(call.text)
        except ValueError:
            return ""
        return "\n".join(str(s.get("body", "")) for s in found if isinstance(s, dict)) if isinstance(found, list) else ""
    structured = call.structured if isinstance(call.structured, dict) else {}
    if structured.get("text"):
        return str(structured["text"])
    # The text answer: a header line, then the lines behind a ``933 | `` gutter.
    gutter = re.compile(r"^\s*\d+ \| ?")
    return "\n".join(gutter.sub("", line, count=1) for line in call.text.split("\n") if gutter.match(line))


# -- the truth -----------------------------------------------------------------------------


def function_text(root: Path, p: LanguageProject) -> str:
    """The function's source, from its ``func``/``function`` line to the closing brace at column 0."""
    lines = (root / p.module).read_text().split("\n")
    start = next(i for i, line in enumerate(lines) if re.match(rf"^(?:export )?(?:func|function) {p.function}\(", line))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    return "\n".join(lines[start:end + 1])


def call_sites(root: Path, p: LanguageProject) -> set[tuple[str, int]]:
    """Every code line that calls the function (not its definition, not a comment)."""
    call = re.compile(rf"(?<![\w.]){re.escape(p.function)}\(")
    found = set()
    for path in sorted(root.rglob(f"*{p.suffix}")):
        if "node_modules" in path.parts:
            continue
        relative = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(errors="replace").split("\n"), 1):
            if call.search(line) and not line.lstrip().startswith(p.comment) and not re.match(r"^(?:export )?(?:func|function) ", line):
                found.add((relative, number))
    return found


def judge_project(root: Path, p: LanguageProject) -> str | None:
    """None when every judge passes; else the first failure's last lines."""
    for command in p.judge:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            tail = " ".join((done.stdout + done.stderr).split())[-300:]
            return f"`{' '.join(command)}` failed: {tail}"
    return None


_NOT_THE_PROJECT = {".git", ".graft", ".serena", "node_modules"}
"""Folders of the tools' own state (codegraft's journal) and of installed packages."""


def digest(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*")
            if path.is_file() and not _NOT_THE_PROJECT & set(path.relative_to(root).parts)}


def restore(root: Path, base: dict[str, bytes]) -> int:
    """Put the copy back to its commit; the number of files rewritten or removed."""
    changed = 0
    now = digest(root)
    for path, data in now.items():
        if path not in base:
            (root / path).unlink()
            changed += 1
        elif data != base[path]:
            (root / path).write_bytes(base[path])
            changed += 1
    for path, data in base.items():
        if path not in now:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
            changed += 1
    return changed


def code_mentions(root: Path, p: LanguageProject, name: str) -> list[str]:
    """``file:line`` of code lines (not comments) that still say ``name`` as a word."""
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?!\w)")
    return [f"{path.relative_to(root).as_posix()}:{number}" for path in sorted(root.rglob(f"*{p.suffix}"))
            if "node_modules" not in path.parts
            for number, line in enumerate(path.read_text(errors="replace").split("\n"), 1)
            if word.search(_QUOTED.sub("''", line)) and not line.lstrip().startswith(p.comment)]


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
"""Quoted strings, left out of a search for code: an import's module path (``'./utils/kindOf'``)
names the file, not the function."""


# -- the tasks -----------------------------------------------------------------------------

TASKS = ("read", "references", "rename", "move", "insert", "undo")


async def run_tasks(session: Session, server: str, root: Path, p: LanguageProject, log: Callable[[str], None]) -> list[Outcome]:
    base = digest(root)
    failing = judge_project(root, p)
    if failing:
        raise SystemExit(f"{p.name}: the pristine copy fails its own judge, so no edit could be judged: {failing}")
    body = function_text(root, p)
    sites = call_sites(root, p)
    ask = codegraft_request if server == "codegraft" else serena_request
    outcomes = []
    for task in TASKS:
        out = Outcome(task, server)
        request = ask(task, p)
        if request is None:
            out.reason = "no tool for it"
            outcomes.append(out)
            continue
        if task == "undo":  # an edit to undo first (counted as a call of the task)
            edit = ask("insert", p)
            assert edit is not None
            out.calls.append(await session.call(edit))
        started = time.perf_counter()
        call = await session.call(request)
        out.calls.append(call)
        out.verdict, out.reason = _judge(task, server, call, root, p, base, body, sites)
        if task in ("rename", "move", "insert", "undo"):
            out.restored = restore(root, base)
        log(f"  [{server}] {p.name} {task}: {out.verdict} ({time.perf_counter() - started:.2f}s) {out.reason[:160]}")
        outcomes.append(out)
    return outcomes


def _judge(task: str, server: str, call: Call, root: Path, p: LanguageProject, base: dict[str, bytes], body: str,
           sites: set[tuple[str, int]]) -> tuple[str, str]:
    if refused(server, call):
        return "wrong", f"refused: {call.headline()}"
    if task == "read":
        got = answer_body(server, call)
        return ("right", "the whole function") if body.strip() in got else ("wrong", f"body not in the answer: {call.headline()}")
    if task == "references":
        missing = sites - answer_lines(server, call)
        return ("right", f"all {len(sites)} call sites") if not missing else ("wrong", f"missing {sorted(missing)}")
    if task == "undo":
        now = digest(root)
        if now == base:
            return "right", "every file byte-identical to the commit"
        changed = sorted(path for path in set(now) | set(base) if now.get(path) != base.get(path))
        return "wrong", f"differs from the commit: {', '.join(changed[:5])}"
    broken = judge_project(root, p)
    if broken:
        return "wrong", broken
    if task == "rename":
        left = code_mentions(root, p, p.function)
        if left or not code_mentions(root, p, p.new_name):
            return "wrong", f"old name left in code at {', '.join(left[:5])}" if left else "new name nowhere"
        return "right", f"{len(code_mentions(root, p, p.new_name))} code lines renamed; judges pass"
    if task == "move":
        declared = re.compile(rf"^(?:export )?(?:func|function) {re.escape(p.move_function)}\(", re.MULTILINE)
        source = (root / p.module).read_text() if (root / p.module).exists() else ""
        target = (root / p.move_to).read_text() if (root / p.move_to).exists() else ""
        if declared.search(source) or not declared.search(target):
            return "wrong", f"{p.move_function} not moved from {p.module} to {p.move_to}"
        return "right", f"in {p.move_to}; judges pass"
    if task == "insert":
        text = (root / p.module).read_text()
        if text.count(p.inserted.strip()) != 1:
            return "wrong", f"the inserted function is in {p.module} {text.count(p.inserted.strip())} times"
        if text.index(p.inserted.strip()) < text.index(function_text(root, p)):
            return "wrong", "inserted before the function"
        return "right", "after the function; judges pass"
    raise ValueError(task)


def broken(outcome: Outcome) -> bool:
    """Whether the project's judge failed after the task's edit."""
    return outcome.reason.startswith("`")

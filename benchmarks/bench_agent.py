"""An agent's task list over MCP, on a real project: codegraft (``graft mcp``) and, where it is
installed, Serena, each over stdio through the official ``mcp`` client, each on its own copy of
the same project with the same language server (basedpyright).

Run: ``.venv/bin/python benchmarks/bench_agent.py [--project NAME] [--skip-serena] [--serena PATH] [--keep]``

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
import ast
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks import agent_targets as truth
from benchmarks.agent_targets import Targets
from benchmarks.bench_real_projects import DATA, unpacked

VENV_BIN = Path(sys.executable).parent
CALL_TIMEOUT = 300.0
GIT_IDENTITY = ["-c", "user.name=bench-agent", "-c", "user.email=bench-agent@localhost", "-c", "commit.gpgsign=false"]

Request = tuple[str, dict[str, Any]]
"""A tool call: the tool's name and its arguments."""
Location = tuple[str, int]
"""(file relative to the project, 1-based line)."""


# -- one call, one task --------------------------------------------------------------------


@dataclass
class Call:
    """One tool call as the client saw it."""

    tool: str
    arguments: dict[str, Any]
    seconds: float
    text: str
    structured: Any
    is_error: bool

    @property
    def chars(self) -> int:
        """The answer's size: its text content plus the JSON of its structured content."""
        extra = json.dumps(self.structured, ensure_ascii=False) if self.structured is not None else ""
        return len(self.text) + len(extra)

    def headline(self, limit: int = 160) -> str:
        first = " ".join(self.text.split())
        return first[:limit] + ("…" if len(first) > limit else "")


@dataclass
class Outcome:
    task: str
    server: str
    calls: list[Call] = field(default_factory=list)
    verdict: str = "n/a"
    """'right', 'wrong' or 'n/a' (the server has no tool for it)."""
    reason: str = ""
    restored: int = 0
    """Files put back to the commit after the task."""


class Session:
    """An MCP client session with timing around each call."""

    def __init__(self, client: Client, timeout: float) -> None:
        self.client = client
        self.timeout = timeout

    async def call(self, request: Request) -> Call:
        tool, arguments = request
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(self.client.call_tool(tool, arguments), self.timeout)
        except Exception as error:  # noqa: BLE001  (a transport error or a timeout is an answer too: a wrong one)
            return Call(tool, arguments, time.perf_counter() - started, f"client error: {type(error).__name__}: {error}", None, True)
        seconds = time.perf_counter() - started
        text = "".join(getattr(item, "text", None) or json.dumps(item.model_dump(mode="json")) for item in result.content)
        return Call(tool, arguments, seconds, text, result.structured_content, bool(result.is_error))


# -- the servers: how each phrases a task, and how to read its answers ---------------------


class Adapter(Protocol):
    """Each task phrased in one server's tools; None when it has no tool for it. The parsers turn
    an answer into plain values (names, locations, text) for the judges."""

    name: str

    def refused(self, call: Call) -> bool: ...
    def outline(self, t: Targets) -> Request: ...
    def project_overview(self, t: Targets) -> Request | None: ...
    def find_symbol(self, t: Targets) -> Request: ...
    def references(self, t: Targets) -> Request: ...
    def references_at(self, t: Targets) -> Request | None: ...
    def read_body(self, t: Targets) -> Request: ...
    def definition_at(self, t: Targets) -> Request: ...
    def rename(self, t: Targets, old: str, new: str) -> Request: ...
    def replace(self, t: Targets, name: str, text: str) -> Request: ...
    def insert_after(self, t: Targets, name: str, text: str) -> Request: ...
    def top_names(self, call: Call) -> set[str]: ...
    def symbol_locations(self, call: Call) -> list[Location]: ...
    def reference_lines(self, call: Call) -> set[Location]: ...
    def body(self, call: Call) -> str: ...
    def definition_locations(self, call: Call) -> list[Location]: ...


class Codegraft:
    """``graft mcp``: name paths as ``FILE:Class/method`` or ``FILE:LINE:COL``, structured answers,
    edits as dry runs unless ``apply`` is true."""

    name = "codegraft"

    def refused(self, call: Call) -> bool:
        return call.is_error

    def outline(self, t: Targets) -> Request:
        return "file_outline", {"path": t.module}

    def project_overview(self, t: Targets) -> Request | None:
        return "project_overview", {}

    def find_symbol(self, t: Targets) -> Request:
        return "workspace_symbols", {"query": t.method_path}

    def references(self, t: Targets) -> Request:
        return "find_references", {"address": f"{t.module}:{t.function}"}

    def references_at(self, t: Targets) -> Request | None:
        return "find_references", {"address": f"{t.call_file}:{t.call_line}:{t.call_column}"}

    def read_body(self, t: Targets) -> Request:
        return "read_symbol", {"address": f"{t.module}:{t.function}"}

    def definition_at(self, t: Targets) -> Request:
        return "get_definition", {"position": f"{t.call_file}:{t.call_line}:{t.call_column}"}

    def rename(self, t: Targets, old: str, new: str) -> Request:
        return "rename_symbol", {"address": f"{t.module}:{old}", "new_name": new, "apply": True}

    def replace(self, t: Targets, name: str, text: str) -> Request:
        return "replace_symbol_body", {"address": f"{t.module}:{name}", "text": text, "apply": True}

    def insert_after(self, t: Targets, name: str, text: str) -> Request:
        return "insert_after_symbol", {"address": f"{t.module}:{name}", "text": text, "apply": True}

    # The answers' shape: structured content with the lists (symbols, locations) in older
    # versions; a short structured summary with the lists in the text in newer ones. Both read.
    _LOCATION = re.compile(r"^\s*([^\s:]+\.pyi?):(\d+)(?::\d+)?(?=\s|$)", re.MULTILINE)
    """``file.py:LINE[:COL]`` at the start of a line of text (references, definitions)."""
    _SYMBOL = re.compile(r"^\s*([^\s:]+\.pyi?):\S+\s+\w+\s+line (\d+)", re.MULTILINE)
    """``file.py:Name/path  kind  line N`` (workspace_symbols' text)."""

    @staticmethod
    def _structured(call: Call) -> dict[str, Any]:
        return call.structured if isinstance(call.structured, dict) else {}

    def top_names(self, call: Call) -> set[str]:
        symbols = self._structured(call).get("symbols")
        if isinstance(symbols, list):
            return {s.get("name", "") for s in symbols}
        return set(re.findall(r"[A-Za-z_]\w*", call.text))  # the outline as text: every name it mentions

    def symbol_locations(self, call: Call) -> list[Location]:
        symbols = self._structured(call).get("symbols")
        if isinstance(symbols, list):
            return [(s["file"], s["line"]) for s in symbols]
        return [(m.group(1), int(m.group(2))) for m in self._SYMBOL.finditer(call.text)]

    def _locations(self, call: Call) -> list[Location]:
        locations = self._structured(call).get("locations")
        if isinstance(locations, list):
            return [(loc["file"], loc["line"]) for loc in locations]
        return [(m.group(1), int(m.group(2))) for m in self._LOCATION.finditer(call.text)]

    def reference_lines(self, call: Call) -> set[Location]:
        return set(self._locations(call))

    def body(self, call: Call) -> str:
        return str(self._structured(call).get("text", ""))

    def definition_locations(self, call: Call) -> list[Location]:
        return self._locations(call)


class Serena:
    """Serena's tools: a name path plus a relative_path; answers are JSON text with 0-based lines."""

    name = "serena"

    def refused(self, call: Call) -> bool:
        return call.is_error or call.text.lstrip().lower().startswith("error")

    def outline(self, t: Targets) -> Request:
        return "get_symbols_overview", {"relative_path": t.module}

    def project_overview(self, t: Targets) -> Request | None:
        return None  # get_symbols_overview refuses a directory ("Expected a file path")

    def find_symbol(self, t: Targets) -> Request:
        return "find_symbol", {"name_path_pattern": t.method_path}

    def references(self, t: Targets) -> Request:
        return "find_referencing_symbols", {"name_path": t.function, "relative_path": t.module}

    def references_at(self, t: Targets) -> Request | None:
        return None  # symbols are addressed by name path only

    def read_body(self, t: Targets) -> Request:
        return "find_symbol", {"name_path_pattern": t.function, "relative_path": t.module, "include_body": True}

    def definition_at(self, t: Targets) -> Request:
        # find_declaration takes a regex whose one group is the name: the call-site line around it.
        column = t.call_column - 1
        before = t.call_text[:column].lstrip()
        after = t.call_text[column + len(t.function):].rstrip()
        return "find_declaration", {"relative_path": t.call_file,
                                    "regex": re.escape(before) + f"({t.function})" + re.escape(after)}

    def rename(self, t: Targets, old: str, new: str) -> Request:
        return "rename_symbol", {"name_path": old, "relative_path": t.module, "new_name": new}

    def replace(self, t: Targets, name: str, text: str) -> Request:
        return "replace_symbol_body", {"name_path": name, "relative_path": t.module, "body": text}

    def insert_after(self, t: Targets, name: str, text: str) -> Request:
        return "insert_after_symbol", {"name_path": name, "relative_path": t.module, "body": text}

    @staticmethod
    def _json(call: Call) -> Any:
        try:
            return json.loads(call.text)
        except ValueError:
            return None

    def top_names(self, call: Call) -> set[str]:
        found = self._json(call)
        names: set[str] = set()
        if isinstance(found, dict):
            for group in found.values():
                for item in group if isinstance(group, list) else []:
                    # depth 0 gives bare names; deeper, {name: children}
                    names.add(item if isinstance(item, str) else str(next(iter(item), "")) if isinstance(item, dict) else "")
        return names

    def symbol_locations(self, call: Call) -> list[Location]:
        found = self._json(call)
        items = found if isinstance(found, list) else [found] if isinstance(found, dict) else []
        return [(s["relative_path"], s["body_location"]["start_line"] + 1) for s in items
                if isinstance(s, dict) and "relative_path" in s and "body_location" in s]

    def reference_lines(self, call: Call) -> set[Location]:
        # {file: {kind: [{name_path, body_location, content_around_reference: "...\n  > 261: code\n..."}]}}
        found = self._json(call)
        lines: set[Location] = set()
        if isinstance(found, dict):
            for file, kinds in found.items():
                for entries in kinds.values() if isinstance(kinds, dict) else []:
                    for entry in entries:
                        for match in re.finditer(r"^\s*>\s*(\d+):", entry.get("content_around_reference", ""), re.MULTILINE):
                            lines.add((file, int(match.group(1)) + 1))
        return lines

    def body(self, call: Call) -> str:
        found = self._json(call)
        items = found if isinstance(found, list) else []
        return "\n".join(str(s.get("body", "")) for s in items if isinstance(s, dict))

    def definition_locations(self, call: Call) -> list[Location]:
        return self.symbol_locations(call)


@dataclass
class ServerSpec:
    adapter: Adapter
    params: StdioServerParameters
    version: str
    language_server: str


# -- the tasks -----------------------------------------------------------------------------


@dataclass
class Context:
    session: Session
    adapter: Adapter
    targets: Targets
    root: Path
    base: dict[str, bytes]
    """The committed content of every file, to check and to restore the copy."""
    base_digest: dict[str, str]


def _where(locations: set[Location] | frozenset[Location] | list[Location], limit: int = 3) -> str:
    shown = sorted(locations)[:limit]
    more = len(locations) - len(shown)
    return ", ".join(f"{f}:{line}" for f, line in shown) + (f" (+{more})" if more > 0 else "")


def _source_note(call: Call) -> str:
    source = call.structured.get("source") if isinstance(call.structured, dict) else None
    return f" [{source}]" if source else ""


async def _twice(ctx: Context, request: Request) -> list[Call]:
    """A read task's two calls: the same request, cold then warm."""
    return [await ctx.session.call(request), await ctx.session.call(request)]


def _judge_each(ctx: Context, calls: list[Call], judge: Callable[[Call], str | None]) -> tuple[str, str]:
    """Right when every call's answer is right; the reason names the first wrong one."""
    for index, call in enumerate(calls):
        if ctx.adapter.refused(call):
            return "wrong", f"call {index + 1} refused: {call.headline()}"
        problem = judge(call)
        if problem:
            return "wrong", f"call {index + 1}: {problem}"
    return "right", _source_note(calls[0]).strip()


async def task_outline(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("overview of a module", ctx.adapter.name)
    out.calls = await _twice(ctx, ctx.adapter.outline(t))

    def judge(call: Call) -> str | None:
        missing = set(t.top_level) - ctx.adapter.top_names(call)
        return f"missing {', '.join(sorted(missing))}" if missing else None

    out.verdict, out.reason = _judge_each(ctx, out.calls, judge)
    if out.verdict == "right":
        out.reason = f"all {len(t.top_level)} top-level functions and classes {out.reason}".strip()
    return out


async def task_project_overview(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("overview of the project", ctx.adapter.name)
    request = ctx.adapter.project_overview(t)
    if request is None:
        out.reason = "no tool for it (get_symbols_overview takes one file, not a folder)"
        return out
    out.calls = await _twice(ctx, request)

    def judge(call: Call) -> str | None:
        # A module is listed when its path is in the answer, or its file name (a tree of folders).
        answer = call.text + json.dumps(call.structured)
        missing = [m for m in t.package_modules if m not in answer
                   and not re.search(rf"(?<![\w.]){re.escape(m.rsplit('/', 1)[-1])}\b", answer)]
        return f"{len(missing)} of {len(t.package_modules)} package modules missing, e.g. {missing[0]}" if missing else None

    out.verdict, out.reason = _judge_each(ctx, out.calls, judge)
    if out.verdict == "right":
        out.reason = f"lists all {len(t.package_modules)} package modules"
    return out


async def task_find_symbol(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("find symbol by name path", ctx.adapter.name)
    out.calls = await _twice(ctx, ctx.adapter.find_symbol(t))
    expected = (t.method_file, t.method_line)

    def judge(call: Call) -> str | None:
        found = ctx.adapter.symbol_locations(call)
        if found == [expected]:
            return None
        return f"expected only {expected[0]}:{expected[1]}, got {_where(found) or 'nothing'}"

    out.verdict, out.reason = _judge_each(ctx, out.calls, judge)
    if out.verdict == "right":
        out.reason = f"{t.method_path} at {expected[0]}:{expected[1]} {out.reason}".strip()
    return out


def _references_problem(ctx: Context, found: set[Location]) -> str | None:
    t = ctx.targets
    found = found - {(t.module, t.function_line)}  # the definition itself may or may not be listed
    missing, extra = t.references - found, found - t.references
    if not missing and not extra:
        return None
    parts = []
    if missing:
        parts.append(f"{len(missing)} of {len(t.references)} missing ({_where(missing)})")
    if extra:
        parts.append(f"{len(extra)} extra ({_where(extra)})")
    if (t.call_file, t.enclosing_line) in found or (extra and not (t.references & found)):
        parts.append(f"looks like the references of the enclosing {t.enclosing or 'module'}")
    return "; ".join(parts)


async def task_references(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("references of a function", ctx.adapter.name)
    out.calls = await _twice(ctx, ctx.adapter.references(t))
    out.verdict, out.reason = _judge_each(ctx, out.calls, lambda call: _references_problem(ctx, ctx.adapter.reference_lines(call)))
    if out.verdict == "right":
        out.reason = f"{len(t.references)} lines, as a grep of name tokens {out.reason}".strip()
    return out


async def task_references_at(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("references from FILE:LINE:COL", ctx.adapter.name)
    request = ctx.adapter.references_at(t)
    if request is None:
        out.reason = "no tool for it (find_referencing_symbols takes a name path, not a position)"
        return out
    out.calls = await _twice(ctx, request)
    out.verdict, out.reason = _judge_each(ctx, out.calls, lambda call: _references_problem(ctx, ctx.adapter.reference_lines(call)))
    if out.verdict == "right":
        out.reason = f"the references of {t.function}, not of the enclosing {t.enclosing or 'module'} {out.reason}".strip()
    return out


async def task_read_body(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("read a symbol's body", ctx.adapter.name)
    out.calls = await _twice(ctx, ctx.adapter.read_body(t))
    source = t.function_source.rstrip()

    def judge(call: Call) -> str | None:
        if source in ctx.adapter.body(call):
            return None
        answer = call.text + json.dumps(call.structured)
        lost = [line for line in source.splitlines() if line.strip() and line.strip() not in answer]
        return f"{len(lost)} source lines not in the answer, e.g. `{lost[0].strip()}`" if lost else None

    out.verdict, out.reason = _judge_each(ctx, out.calls, judge)
    if out.verdict == "right":
        out.reason = f"{t.function}'s {len(source.splitlines())} lines {out.reason}".strip()
    return out


async def task_definition(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("definition at a call site", ctx.adapter.name)
    out.calls = await _twice(ctx, ctx.adapter.definition_at(t))
    expected = (t.module, t.function_line)

    def judge(call: Call) -> str | None:
        found = ctx.adapter.definition_locations(call)
        if found == [expected]:
            return None
        note = f" (the enclosing {t.enclosing})" if (t.call_file, t.enclosing_line) in found else ""
        return f"expected {expected[0]}:{expected[1]}, got {_where(found) or 'nothing'}{note}"

    out.verdict, out.reason = _judge_each(ctx, out.calls, judge)
    if out.verdict == "right":
        out.reason = f"{t.function} at {expected[0]}:{expected[1]} {out.reason}".strip()
    return out


# -- edit tasks: judged on disk, the copy restored afterwards ------------------------------


def _changed(ctx: Context) -> list[str]:
    now = truth.digest(ctx.root)
    return sorted(p for p in set(now) | set(ctx.base_digest) if now.get(p) != ctx.base_digest.get(p))


def _restore(ctx: Context) -> int:
    """Put every changed file back to its committed content; remove files the task added."""
    changed = _changed(ctx)
    for path in changed:
        target = ctx.root / path
        if path in ctx.base:
            target.write_bytes(ctx.base[path])
        else:
            target.unlink()
    return len(changed)


def _base_tree(ctx: Context) -> ast.Module:
    return ast.parse(ctx.base[ctx.targets.module].decode("utf-8"))


async def task_rename(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("rename, then rename back", ctx.adapter.name)
    before = truth.token_lines(ctx.root, t.function)
    first = await ctx.session.call(ctx.adapter.rename(t, t.function, t.new_name))
    out.calls.append(first)
    problems: list[str] = []
    if ctx.adapter.refused(first):
        problems.append(f"rename refused: {first.headline()}")
    else:
        left = truth.token_lines(ctx.root, t.function)
        renamed = truth.token_lines(ctx.root, t.new_name)
        if left:
            problems.append(f"{len(left)} lines still say {t.function} ({_where(left)})")
        if renamed != before:
            problems.append(f"{t.new_name} on {len(renamed)} lines, {t.function} was on {len(before)} "
                            f"(missed {_where(before - renamed) or 'none'})")
        error = truth.import_error(ctx.root, t)
        if error:
            problems.append(f"after the rename the module does not import: {error}")
    if _changed(ctx):
        second = await ctx.session.call(ctx.adapter.rename(t, t.new_name, t.function))
        out.calls.append(second)
        if ctx.adapter.refused(second):
            problems.append(f"rename back refused: {second.headline()}")
        differ = _changed(ctx)
        if differ:
            problems.append(f"not byte-identical after the rename back: {len(differ)} files differ ({', '.join(differ[:3])})")
    out.verdict = "wrong" if problems else "right"
    out.reason = "; ".join(problems) or f"{len(before)} lines renamed and back, project byte-identical{_source_note(first)}"
    out.restored = _restore(ctx)
    return out


def _marked_problem(ctx: Context, name: str, marker: str) -> str | None:
    """None when function ``name`` is its old code with ``marker`` inside it."""
    node, text, syntax = truth.top_function(ctx.root, ctx.targets.module, name)
    if node is None:
        return f"{ctx.targets.module} no longer parses: {syntax}" if syntax else f"{name} not found in {ctx.targets.module}"
    original = next(n for n in _base_tree(ctx).body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = text.splitlines()[node.lineno - 1:node.end_lineno]
    if not any(line.strip() == marker for line in lines):
        return f"{name} has no `{marker}`: the edit did not land"
    if not truth.same_code(node, original):
        return f"{name}'s code changed beyond the marker"
    return None


async def task_two_edits(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("two edits to one file", ctx.adapter.name)
    problems: list[str] = []
    for index, (name, text) in enumerate(zip(t.edited, t.edit_texts)):
        call = await ctx.session.call(ctx.adapter.replace(t, name, text))
        out.calls.append(call)
        if ctx.adapter.refused(call):
            problems.append(f"edit {index + 1} ({name}) refused: {call.headline()}")
    for name, marker in zip(t.edited, truth.MARKERS):
        problem = _marked_problem(ctx, name, marker)
        if problem and not any(f"({name}) refused" in p for p in problems):
            problems.append(problem)
    if not problems:
        rest, base_body = truth.module_body((ctx.root / t.module).read_text(encoding="utf-8")), _base_tree(ctx).body
        if len(rest) != len(base_body) or not all(truth.same_code(a, b) for a, b in zip(rest, base_body)):
            problems.append("other code of the module changed")
        error = truth.import_error(ctx.root, t)
        if error:
            problems.append(f"the module does not import: {error}")
    out.verdict = "wrong" if problems else "right"
    out.reason = "; ".join(problems) or f"both landed ({t.edited[0]}, {t.edited[1]}), module imports"
    out.restored = _restore(ctx)
    return out


async def _bad_replace(ctx: Context, task: str, name: str, text: str) -> Outcome:
    """Send a broken declaration twice. Right: refused with nothing written, or written as code
    that imports and is what was meant (the original function)."""
    t = ctx.targets
    out = Outcome(task, ctx.adapter.name)
    for _ in range(2):
        out.calls.append(await ctx.session.call(ctx.adapter.replace(t, name, text)))
    refusals = [ctx.adapter.refused(c) for c in out.calls]
    changed = _changed(ctx)
    if not changed:
        if all(refusals):
            out.verdict, out.reason = "right", f"refused, nothing written: {out.calls[0].headline(110)}"
        else:
            out.verdict, out.reason = "wrong", f"answered as a success but wrote nothing: {out.calls[refusals.index(False)].headline(110)}"
    else:
        current = (ctx.root / t.module).read_text(encoding="utf-8")
        try:
            same = len(truth.module_body(current)) == len(_base_tree(ctx).body) and all(
                truth.same_code(a, b) for a, b in zip(truth.module_body(current), _base_tree(ctx).body))
            syntax = ""
        except SyntaxError as bad:
            same, syntax = False, f"{type(bad).__name__}: {bad.msg} (line {bad.lineno})"
        failure = syntax or truth.import_error(ctx.root, t)
        if failure:
            out.verdict, out.reason = "wrong", f"written, and {t.module} no longer imports: {failure}"
        elif same and changed == [t.module]:
            out.verdict, out.reason = "right", "written re-indented: the intended code, module imports"
        else:
            out.verdict, out.reason = "wrong", f"written, imports, but the code is not what was meant ({', '.join(changed[:3])})"
    out.restored = _restore(ctx)
    return out


async def task_bad_indent(ctx: Context) -> Outcome:
    return await _bad_replace(ctx, "replace, unexpected indent", ctx.targets.bad_indent_target, ctx.targets.bad_indent_text)


async def task_unclosed_paren(ctx: Context) -> Outcome:
    return await _bad_replace(ctx, "replace, unclosed paren", ctx.targets.paren_target, ctx.targets.paren_text)


async def task_insert_after(ctx: Context) -> Outcome:
    t = ctx.targets
    out = Outcome("insert after a symbol (x2)", ctx.adapter.name)
    anchors = (t.insert_anchor, truth.INSERTED[0][0])
    problems: list[str] = []
    for anchor, text in zip(anchors, t.insert_texts):
        call = await ctx.session.call(ctx.adapter.insert_after(t, anchor, text))
        out.calls.append(call)
        if ctx.adapter.refused(call):
            problems.append(f"insert after {anchor} refused: {call.headline()}")
    current = (ctx.root / t.module).read_text(encoding="utf-8")
    try:
        body = truth.module_body(current)
    except SyntaxError as bad:
        problems.append(f"{t.module} no longer parses: {bad.msg} (line {bad.lineno})")
        body = []
    if body:
        names = [getattr(n, "name", None) for n in body]
        inserted = [fn for fn, _value in truth.INSERTED]
        if t.insert_anchor in names:
            at = names.index(t.insert_anchor)
            following = names[at + 1:at + 3]
            if following != inserted:
                landed = [fn for fn in inserted if fn in names]
                problems.append(f"after {t.insert_anchor} come {following}, expected {inserted}"
                                + (f" ({', '.join(landed)} landed elsewhere)" if landed and following != landed else ""))
        kept = [n for n in body if getattr(n, "name", None) not in inserted]
        base_body = _base_tree(ctx).body
        if len(kept) != len(base_body) or not all(truth.same_code(a, b) for a, b in zip(kept, base_body)):
            problems.append("other code of the module changed")
        calls = " and ".join(f"m.{fn}() == {value}" for fn, value in truth.INSERTED if fn in names)
        error = truth.import_error(ctx.root, t, f"assert {calls}" if calls else "")
        if error:
            problems.append(f"import/call fails: {error}")
    out.verdict = "wrong" if problems else "right"
    out.reason = "; ".join(dict.fromkeys(problems)) or f"both inserted in order after {t.insert_anchor}, module imports, both callable"
    out.restored = _restore(ctx)
    return out


TASKS: list[Callable[[Context], Awaitable[Outcome]]] = [
    task_outline, task_project_overview, task_find_symbol, task_references, task_references_at, task_read_body,
    task_definition, task_rename, task_two_edits, task_bad_indent, task_unclosed_paren, task_insert_after,
]


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
                     answers: Path | None = None) -> ServerRun:
    run = ServerRun(spec.adapter.name, spec.version, spec.language_server, log=str(log_path))
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
            ctx = Context(Session(client, timeout), spec.adapter, targets, root, base, ctx_base_digest)
            for task in TASKS:
                outcome = await task(ctx)
                print(f"  [{run.name}] {outcome.task}: {outcome.verdict} "
                      f"({', '.join(f'{c.seconds:.2f}s' for c in outcome.calls) or 'no call'})", file=sys.stderr, flush=True)
                run.outcomes.append(outcome)
    if answers is not None:  # every call in full, one JSON object a line, for a closer look
        with answers.open("a") as out:
            for outcome in run.outcomes:
                for call in outcome.calls:
                    out.write(json.dumps({"server": run.name, "task": outcome.task, "tool": call.tool, "arguments": call.arguments,
                                          "seconds": call.seconds, "is_error": call.is_error, "text": call.text,
                                          "structured": call.structured}, default=str) + "\n")
    return run


def _innermost(error: BaseException) -> str:
    """The first leaf of an exception group (the SDK's task groups wrap the real error)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}"


def codegraft_spec(root: Path) -> ServerSpec:
    from importlib.metadata import version

    graft = VENV_BIN / "graft"
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True).stdout.strip()
    return ServerSpec(Codegraft(), StdioServerParameters(command=str(graft), args=["mcp", "--root", str(root)]),
                      f"codegraft {version('codegraft')} (work tree of {commit or '?'})", _basedpyright_version())


def _basedpyright_version() -> str:
    exe = shutil.which("basedpyright", path=str(VENV_BIN)) or shutil.which("basedpyright")
    if not exe:
        return "basedpyright not found"
    done = subprocess.run([exe, "--version"], check=False, capture_output=True, text=True, timeout=60)
    return " ".join(done.stdout.split()[:2]) or "basedpyright (version unknown)"


def find_serena(explicit: str | None) -> tuple[str | None, str]:
    """The serena executable, or None and why not: --serena when given, else $SERENA_BIN, PATH,
    then $TMPDIR/serena-venv/bin/serena."""
    default = str(Path(tempfile.gettempdir()) / "serena-venv" / "bin" / "serena")
    candidates = [explicit] if explicit else [os.environ.get("SERENA_BIN"), shutil.which("serena"), default]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate, ""
    if explicit:
        return None, f"--serena {explicit}: no such executable"
    return None, (f"`serena` not found ($SERENA_BIN, PATH, {default}); to install it in a throwaway venv: "
                  "python3.11 -m venv /tmp/serena-venv && /tmp/serena-venv/bin/pip install serena-agent")


def serena_spec(executable: str, root: Path, scratch: Path) -> tuple[ServerSpec | None, str]:
    """Serena on ``root`` with basedpyright, its home and project settings in ``scratch``."""
    done = subprocess.run([executable, "--version"], check=False, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return None, f"`{executable} --version` failed (exit {done.returncode}): {' '.join((done.stderr or done.stdout).split())[-300:]}"
    version = done.stdout.strip() or "serena (version unknown)"
    langserver = shutil.which("basedpyright-langserver", path=str(VENV_BIN)) or shutil.which("basedpyright-langserver")
    if not langserver:
        return None, "basedpyright-langserver not found: Serena would download its own through uvx, which this machine cannot"
    home = scratch / "serena-home"
    meta = scratch / "serena-meta"
    (meta / root.name).mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    # The global configuration: no dashboard or GUI, one tool per operation, basedpyright from
    # this virtualenv, and each project's .serena folder outside the project (the copy stays as
    # committed).
    (home / "serena_config.yml").write_text(
        "language_backend: LSP\nagent_interface: tools\ngui_log_window: False\nweb_dashboard: False\n"
        "web_dashboard_open_on_launch: False\nlog_level: 20\ntrace_lsp_communication: False\n"
        f"ls_specific_settings:\n  python_basedpyright:\n    ls_path: {json.dumps(langserver)}\n"
        f"project_serena_folder_location: {json.dumps(str(meta) + '/$projectFolderName')}\nprojects: []\n")
    (meta / root.name / "project.yml").write_text(
        f"project_name: {json.dumps(root.name)}\nlanguage_servers: [\"python_basedpyright\"]\nencoding: \"utf-8\"\n"
        "ignore_all_files_in_gitignore: true\nread_only: false\n")
    env = {"SERENA_HOME": str(home), "SERENA_USAGE_REPORTING": "false"}
    args = ["start-mcp-server", "--project", str(root), "--context", "agent", "--agent-interface", "tools",
            "--enable-web-dashboard", "False", "--open-web-dashboard", "False", "--enable-gui-log-window", "False"]
    ls_version = subprocess.run([langserver.replace("-langserver", ""), "--version"], check=False, capture_output=True, text=True).stdout.split()
    return ServerSpec(Serena(), StdioServerParameters(command=executable, args=args, env=env), version,
                      f"python_basedpyright via {langserver} ({' '.join(ls_version[:2])})"), ""


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


def load_project(name: str) -> tuple[dict[str, Any], Path]:
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    project = next((p for p in data["project"] if p["name"] == name), None)
    if project is None:
        raise SystemExit(f"no project {name!r} in {DATA}; known: {', '.join(p['name'] for p in data['project'])}")
    # The LF sdist as published (bench_real_projects.py makes CRLF twins of some; not wanted here).
    return project, unpacked({**project, "crlf": []})


async def main_async(args: argparse.Namespace) -> None:
    project, source = load_project(args.project)
    targets = truth.pick_targets(source, str(project.get("pythonpath", "")).strip("./"))
    error = truth.import_error(source, targets)
    if error:
        raise SystemExit(f"{targets.module_name} does not import in the pristine sdist: {error}")
    scratch = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    runs: list[ServerRun] = []
    try:
        root = make_copy(source, scratch, "codegraft")
        print(f"codegraft on {root} ...", file=sys.stderr, flush=True)
        answers = scratch / "answers.jsonl" if args.keep else None
        runs.append(await run_server(codegraft_spec(root), root, targets, scratch / "codegraft.stderr.log", args.call_timeout, answers))
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
                runs.append(await run_server(spec, root, targets, scratch / "serena.stderr.log", args.call_timeout, answers))
                if runs[-1].skipped:
                    tail = Path(runs[-1].log).read_text(errors="replace").strip().splitlines()[-5:]
                    runs[-1].skipped += "; log tail: " + " | ".join(tail)
        report(runs, targets, f"{project['name']} {project['version']} (sdist from benchmarks/.corpus, one git-committed copy per server)", args.keep)
    finally:
        if args.keep:
            print(f"\nscratch kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", default="sqlparse", help="a project of benchmarks/real_projects.toml (default: sqlparse)")
    parser.add_argument("--skip-serena", action="store_true", help="run codegraft only")
    parser.add_argument("--serena", help="the serena executable (default: $SERENA_BIN, PATH, then $TMPDIR/serena-venv/bin/serena)")
    parser.add_argument("--call-timeout", type=float, default=CALL_TIMEOUT, help="seconds one tool call may take (default: 300)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch copies, server logs and every answer (answers.jsonl)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()

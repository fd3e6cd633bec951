"""bench_agent.py's tasks: each sends its calls through a server's adapter and judges the answers
against the code itself (agent_targets.py knows the answers)."""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks import agent_targets as truth
from benchmarks.agent_suite import Suite
from benchmarks.agent_targets import Targets
from benchmarks.agent_servers import Adapter, Call, Location, Outcome, Request, Session  # noqa: E402

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
    suite: Suite | None = None
    """The project's own tests, run in each state an edit leaves (agent_suite.py), where set up."""


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


def _suite_problems(ctx: Context, out: Outcome) -> list[str]:
    """Run the project's suite in the state the edit left (when it left one): the tests it broke."""
    if ctx.suite is None or not _changed(ctx):
        return []
    broken = ctx.suite.broken(ctx.root)
    out.broken = (out.broken or 0) + len(broken)
    return [f"{len(broken)} test(s) of the project's suite broken: {', '.join(broken[:3])}"] if broken else []


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
        problems += _suite_problems(ctx, out)
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
    problems += _suite_problems(ctx, out)
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
        broken = _suite_problems(ctx, out)
        if broken:
            out.verdict, out.reason = "wrong", f"{out.reason}; {broken[0]}"
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
    problems += _suite_problems(ctx, out)
    out.verdict = "wrong" if problems else "right"
    out.reason = "; ".join(dict.fromkeys(problems)) or f"both inserted in order after {t.insert_anchor}, module imports, both callable"
    out.restored = _restore(ctx)
    return out


TASKS: list[Callable[[Context], Awaitable[Outcome]]] = [
    task_outline, task_project_overview, task_find_symbol, task_references, task_references_at, task_read_body,
    task_definition, task_rename, task_two_edits, task_bad_indent, task_unclosed_paren, task_insert_after,
]

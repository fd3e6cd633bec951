"""Picks the cases of benchmarks/extract_corpus.toml from a project's own code, by syntax only
(never by asking codegraft or rope), with a seeded random choice among the candidates, so the
corpus is not tuned to either tool. Its output is pasted into the TOML once and frozen there.

Run: ``.venv/bin/python benchmarks/extract_corpus_pick.py PROJECT [--seed N] [--each N]``

The candidates, per kind, in the project's package (not its tests):

* extract-function: two or three consecutive simple statements of a function's block, none of
  them a return, yield, break, continue, global or nonlocal, and the block going on after them;
* extract-variable: a call or an arithmetic operation that is an argument or operand of the value
  of a function's ``return`` or assignment, the first such in its statement;
* inline (a variable): a function's local bound once by ``name = value`` on its own line and read
  once, after it;
* inline-call (a function at one call): a module-level, undecorated function of plain parameters,
  called by name in its module, at a call that is a whole statement (``x = f()``/``return f()``);
* inline-function (at every call): such a function that no other file of the project names;
* introduce-parameter: a number or a one-line string (not a docstring, nor in an f-string) in a
  module-level function's body, the parameter taking it as its default;
* extract-function-expression (an expression into a function that returns it): a call, an
  arithmetic or boolean operation, a comparison or a conditional expression that is the value of
  a function's ``return`` or assignment, or an argument or operand within it (added in session
  25; the kind is sampled last, so the earlier kinds' picks are unchanged).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.bench_real_projects import unpacked  # noqa: E402
from benchmarks.bench_extract_corpus import project_of  # noqa: E402

_JUMPS = (cst.Return, cst.Yield, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.Await)


class Module:
    def __init__(self, root: Path, path: Path) -> None:
        self.relative = path.relative_to(root).as_posix()
        self.text = path.read_text(encoding="utf-8")
        wrapper = MetadataWrapper(cst.parse_module(self.text))
        self.module = wrapper.module
        self.positions = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)
        self.scopes = wrapper.resolve(ScopeProvider)

    def span(self, node: cst.CSTNode) -> str:
        found = self.positions[node]
        return f"{self.relative}:{found.start.line}:{found.start.column + 1}-{found.end.line}:{found.end.column + 1}"

    def at(self, node: cst.CSTNode) -> str:
        found = self.positions[node]
        return f"{self.relative}:{found.start.line}:{found.start.column + 1}"

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while node in self.parents:
            node = self.parents[node]
            yield node


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from walk(child)


def functions(module: Module) -> Iterator[cst.FunctionDef]:
    for node in walk(module.module):
        if isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock):
            yield node


def extract_function(module: Module) -> Iterator[dict[str, object]]:
    for function in functions(module):
        for block in walk(function.body):
            if not isinstance(block, cst.IndentedBlock) or _inner_function(module, block) is not function:
                continue
            body = list(block.body)
            for size in (2, 3):
                for start in range(len(body) - size):  # statements follow the run
                    run = body[start:start + size]
                    if all(isinstance(s, cst.SimpleStatementLine) and not _has(s, _JUMPS) and not _docstring(s) for s in run):
                        first, last = module.positions[run[0]], module.positions[run[-1]]
                        yield {"op": "extract-function", "address": f"{module.relative}:{first.start.line}:{first.start.column + 1}-"
                               f"{last.end.line}:{last.end.column + 1}", "new_name": "_graft_extracted"}


def extract_variable(module: Module) -> Iterator[dict[str, object]]:
    for value in _statement_values(module):
        for node in walk(value):
            if node is value or not isinstance(node, (cst.Call, cst.BinaryOperation)):
                continue
            parent = module.parents.get(node)
            if isinstance(parent, (cst.Arg, cst.BinaryOperation)) and not any(
                    isinstance(a, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.IfExp,
                                   cst.BooleanOperation, cst.FormattedString)) for a in module.ancestors(node)):
                yield {"op": "extract-variable", "address": module.span(node), "new_name": "graft_value"}
                break


def _statement_values(module: Module) -> Iterator[cst.BaseExpression]:
    """The value of each one-statement line (``return v``, ``x = v``) directly in a function's body."""
    for function in functions(module):
        for statement in walk(function.body):
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                continue
            small = statement.body[0]
            value = small.value if isinstance(small, (cst.Return, cst.Assign)) else None
            if value is not None and _inner_function(module, statement) is function:
                yield value


def inline_variable(module: Module) -> Iterator[dict[str, object]]:
    for function in functions(module):
        scope = module.scopes.get(function.body.body[0]) if function.body.body else None
        if scope is None:
            continue
        for assignment in scope.assignments:
            target = getattr(assignment, "node", None)
            if not isinstance(target, cst.Name):
                continue
            holder = module.parents.get(target)
            node = module.parents.get(holder) if holder is not None else None
            if not isinstance(node, cst.Assign) or len(node.targets) != 1 or node.targets[0].target is not target:
                continue
            name = target.value
            if len(scope.assignments[name]) != 1 or len(assignment.references) != 1 or name in ("self", "cls"):
                continue
            line = module.parents.get(node)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                yield {"op": "inline", "address": module.at(target)}


def inlinable_functions(module: Module) -> Iterator[tuple[cst.FunctionDef, list[cst.Call]]]:
    scope = module.scopes.get(module.module.body[0]) if module.module.body else None
    for function in module.module.body:
        if not isinstance(function, cst.FunctionDef) or function.decorators or function.asynchronous:
            continue
        params = function.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params or params.posonly_params:
            continue
        if _has(function.body, (cst.Yield, cst.Global, cst.Nonlocal)) or scope is None:
            continue
        bindings = list(scope.assignments[function.name.value])
        if len(bindings) != 1:
            continue
        # LibCST's references are a set: in the order of the file, so that the seed picks the same call.
        uses = sorted(bindings[0].references, key=lambda access: (module.positions[access.node].start.line,
                                                                  module.positions[access.node].start.column))
        calls = [module.parents.get(access.node) for access in uses]
        if calls and all(isinstance(call, cst.Call) for call in calls):
            yield function, [call for call in calls if isinstance(call, cst.Call)]


def inline_call(module: Module) -> Iterator[dict[str, object]]:
    for function, calls in inlinable_functions(module):
        for call in calls:
            parent = module.parents.get(call)
            if isinstance(parent, (cst.Assign, cst.Return)) and not any(a is function for a in module.ancestors(call)):
                yield {"op": "inline", "address": module.span(call)}
                break


def inline_function(module: Module, others: str) -> Iterator[dict[str, object]]:
    for function, _ in inlinable_functions(module):
        if not re.search(rf"\b{re.escape(function.name.value)}\b", others):
            yield {"op": "inline", "address": f"{module.relative}:{function.name.value}"}


def introduce_parameter(module: Module) -> Iterator[dict[str, object]]:
    for function in module.module.body:
        if not isinstance(function, cst.FunctionDef) or not isinstance(function.body, cst.IndentedBlock):
            continue
        for node in walk(function.body):
            if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)) and not any(
                    isinstance(a, (cst.FormattedString, cst.Expr, cst.Param, cst.Subscript, cst.Decorator, cst.Lambda))
                    for a in module.ancestors(node)):
                if isinstance(node, cst.SimpleString) and "\n" in node.value:
                    continue
                yield {"op": "introduce-parameter", "address": module.span(node), "new_name": "graft_param"}
                break


_EXPRESSIONS = (cst.Call, cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.IfExp)


def extract_expression(module: Module) -> Iterator[dict[str, object]]:
    for value in _statement_values(module):
        for node in walk(value):
            parent = module.parents.get(node)
            if isinstance(node, _EXPRESSIONS) and (node is value or isinstance(parent, (cst.Arg, cst.BinaryOperation))) \
                    and not _has(node, (cst.Yield, cst.Await, cst.NamedExpr)):
                yield {"op": "extract-function", "address": module.span(node), "new_name": "_graft_extracted"}


def _inner_function(module: Module, node: cst.CSTNode) -> cst.CSTNode | None:
    return next((a for a in module.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef))), None)


def _has(node: cst.CSTNode, kinds: tuple[type, ...]) -> bool:
    return any(isinstance(part, kinds) for part in walk(node))


def _docstring(statement: cst.SimpleStatementLine) -> bool:
    return isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString)


def pick(root: Path, package: str, seed: int, each: int) -> list[dict[str, object]]:
    paths = sorted(p for p in (root / package).rglob("*.py") if "test" not in p.relative_to(root).as_posix())
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}
    candidates: dict[str, list[dict[str, object]]] = {}
    for path in paths:
        module = Module(root, path)
        others = "\n".join(text for other, text in texts.items() if other != path)
        for kind, found in (("extract-function", extract_function(module)), ("extract-variable", extract_variable(module)),
                            ("inline-variable", inline_variable(module)), ("inline-call", inline_call(module)),
                            ("inline-function", inline_function(module, others)),
                            ("introduce-parameter", introduce_parameter(module)),
                            ("extract-function-expression", extract_expression(module))):
            candidates.setdefault(kind, []).extend(found)
    chosen = []
    generator = random.Random(seed)
    for kind, listed in candidates.items():
        for case in generator.sample(listed, min(each, len(listed))):
            chosen.append({**case, "kind": kind})
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--each", type=int, default=2)
    options = parser.parse_args()
    project = project_of(options.project)
    root = unpacked(project)
    for case in pick(root, str(project.get("package", project["name"])), options.seed, options.each):
        print("\n[[project.case]]")
        for key, value in case.items():
            print(f"{key} = {value!r}".replace("'", '"'))


if __name__ == "__main__":
    main()

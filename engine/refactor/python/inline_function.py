"""Inline a Python function whose body is one ``return EXPRESSION`` (after its docstring, if
any): each call in its module becomes the expression with the call's arguments in place of the
parameters, and the definition goes.

A first step, and refused where it could not be faithful: a function that is a method, is
decorated, async, a generator, takes ``*args``/``**kwargs`` or keyword-only parameters, or has
more than a single return (``not_inlinable``); one that calls itself (``recursive``); one that
other files name, whose imports the inlined code would need (``used_elsewhere``); one its module
uses other than by calling it (``not_only_called``); a call with ``*``/``**`` arguments
(``not_inlinable``); an argument that reads state or runs code and that the expression would
evaluate not exactly once, or out of the call's order (``evaluation_order_changes``, unless
``allow_reordering``); a name the expression reads that the call's scope binds otherwise
(``name_clash``).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, FunctionScope, GlobalScope

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import line_edits
from engine.errors import Refused
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.cst_edits import all_names
from engine.refactor.python.extract_variable import NameClash
from engine.refactor.python.inline_variable import bare_value, shareable, stands_alone
from engine.refactor.python.span_nodes import EvaluationOrderChanges, PythonTree, nodes_within, observes_state, read_names
from engine.symbols import Confidence, Source


class NotInlinable(Refused):
    code = "not_inlinable"


class Recursive(Refused):
    code = "recursive"


class UsedElsewhere(Refused):
    code = "used_elsewhere"


class NotOnlyCalled(Refused):
    code = "not_only_called"


def function_at(tree: PythonTree, line: int, column: int) -> cst.FunctionDef | None:
    """The function whose name starts at the 0-based ``line`` and ``column``."""
    for node in nodes_within(tree.module):
        if isinstance(node, cst.FunctionDef):
            start = tree.span(node.name).start
            if (start.line, start.column) == (line, column):
                return node
    return None


def plan_inline_function(tree: PythonTree, function: cst.FunctionDef, other_files: list[str], *,
                         allow_reordering: bool) -> RefactorPlan:
    name = function.name.value
    expression = _returned(tree, function)
    if other_files:
        raise UsedElsewhere(f"{name} is named in {len(other_files)} other file(s) ({', '.join(other_files[:5])}); inlining "
                            "there would need the imports its code reads, which is not done yet; nothing was changed")
    scope = tree.scopes.get(function)
    binding = [a for a in scope[name] if isinstance(a, Assignment) and a.node is function] if scope is not None else []
    if scope is None or not binding or len(scope[name]) != 1:
        raise NotInlinable(f"{name} is bound more than once in its scope; only a function defined once is inlined")
    calls: list[cst.Call] = []
    for access in binding[0].references:
        call = tree.parents.get(access.node)
        if not isinstance(call, cst.Call) or call.func is not access.node:
            line = tree.span(access.node).start.line + 1
            raise NotOnlyCalled(f"{name} is used on line {line} other than by a call; inlining would leave it dangling")
        if any(ancestor is function for ancestor in tree.ancestors(call)):
            raise Recursive(f"{name} calls itself; a recursive function cannot be inlined")
        calls.append(call)
    if not calls:
        raise NotOnlyCalled(f"nothing calls {name}; delete it instead")
    if name in (all_names(tree.module) or []):
        raise NotOnlyCalled(f"{name} is exported by the module's __all__; inlining would delete a name it promises")
    parameters = [param.name.value for param in function.params.params]
    defaults = {param.name.value: param.default for param in function.params.params if param.default is not None}
    text = tree.source.text
    replacements: list[tuple[int, int, str]] = []
    for call in calls:
        arguments = _arguments(tree, call, parameters, defaults, name)
        _check_names_mean_the_same(tree, expression, call, name)
        code = _substituted(tree, expression, arguments, allow_reordering, name, call)
        span = tree.span(call)
        # A bare parameter name takes its argument's shape: only stand-alone places skip the parentheses then.
        wrapped = code if stands_alone(tree, call) or bare_value(expression) and not isinstance(expression, cst.Name) \
            else f"({code})"
        replacements.append((tree.offset(span.start), tree.offset(span.end), wrapped))
    first, last = _definition_lines(tree, function)
    starts = tree.source.line_starts
    begin = starts[first]
    finish = starts[last + 1] if last + 1 < len(starts) else len(text)
    # The blank lines after the definition go with it (those before keep what is above apart from what follows).
    while finish < len(text) and text[finish] in "\r\n":
        finish += 1
    if finish >= len(text):  # the last definition of the file: the blank lines above it go instead
        while begin > 0 and text[begin - 1] in "\r\n" and begin >= 2 and text[begin - 2] in "\r\n":
            begin -= 1
    after = text
    for start, end, replacement in sorted([*replacements, (begin, finish, "")], reverse=True):
        after = after[:start] + replacement + after[end:]
    change = FileChange(tree.source.path, line_edits(text, after), tree.source.sha256)
    warnings = [] if name.startswith("_") else [
        f"{name} was a public name of {tree.source.path}: code outside this workspace that imports it will break"]
    return RefactorPlan("inline", WorkspaceEdit((change,)), Source.AST, Confidence.HIGH, warnings)


def _returned(tree: PythonTree, function: cst.FunctionDef) -> cst.BaseExpression:
    name = function.name.value
    if function.decorators or function.asynchronous is not None:
        raise NotInlinable(f"{name} is decorated or async; only a plain function is inlined")
    if not isinstance(tree.parents.get(function), cst.Module):
        raise NotInlinable(f"{name} is not a module-level function (a method or a nested function); only those are inlined")
    params = function.params
    if isinstance(params.star_arg, (cst.Param, cst.ParamStar)) or params.star_kwarg is not None or params.kwonly_params \
            or params.posonly_params:
        raise NotInlinable(f"{name} takes *args, **kwargs, keyword-only or positional-only parameters; not inlined yet")
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    statements = [s for s in body if not _is_docstring(s)]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine) or len(statements[0].body) != 1 \
            or not isinstance(statements[0].body[0], cst.Return) or statements[0].body[0].value is None:
        raise NotInlinable(f"{name}'s body is not a single `return EXPRESSION`; a function with statements or several "
                           "returns cannot be inlined into an expression faithfully")
    expression = statements[0].body[0].value
    if any(isinstance(node, (cst.Yield, cst.Await, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
                             cst.NamedExpr)) for node in nodes_within(expression)):
        raise NotInlinable(f"{name}'s expression holds a yield, await, lambda, comprehension or walrus; not inlined yet")
    return expression


def _is_docstring(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
        statement.body[0], cst.Expr) and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _arguments(tree: PythonTree, call: cst.Call, parameters: list[str], defaults: dict[str, cst.BaseExpression],
               name: str) -> dict[str, tuple[cst.BaseExpression, int]]:
    """Parameter → (the expression that gives its value, its place in the call's evaluation order)."""
    given: dict[str, tuple[cst.BaseExpression, int]] = {}
    for index, argument in enumerate(call.args):
        if argument.star:
            raise NotInlinable(f"a call of {name} on line {tree.span(call).start.line + 1} passes *args or **kwargs")
        if argument.keyword is None:
            if index >= len(parameters):
                raise NotInlinable(f"a call of {name} on line {tree.span(call).start.line + 1} passes too many arguments")
            given[parameters[index]] = (argument.value, index)
        else:
            if argument.keyword.value not in parameters or argument.keyword.value in given:
                raise NotInlinable(f"a call of {name} on line {tree.span(call).start.line + 1} names an unknown or repeated "
                                   f"parameter {argument.keyword.value}")
            given[argument.keyword.value] = (argument.value, index)
    for parameter in parameters:
        if parameter not in given:
            default = defaults.get(parameter)
            if default is None:
                raise NotInlinable(f"a call of {name} on line {tree.span(call).start.line + 1} leaves {parameter} out")
            if observes_state(default) or read_names(tree, default):
                raise NotInlinable(f"{name}'s default for {parameter} is evaluated once, at definition; inlining would "
                                   "evaluate it at each call")
            given[parameter] = (default, len(call.args) + len(given))
    return given


def _check_names_mean_the_same(tree: PythonTree, expression: cst.BaseExpression, call: cst.Call, name: str) -> None:
    scope = tree.scopes.get(call)
    if scope is None:
        return
    for read in read_names(tree, expression):
        own = tree.scopes.get(read)
        if own is None or any(isinstance(a, Assignment) and a.scope is own for a in own[read.value]):
            continue  # a parameter of the function: replaced by its argument
        if not isinstance(scope, GlobalScope) and any(
                isinstance(a, Assignment) and a.scope is not scope.globals and not isinstance(a.scope, GlobalScope)
                for a in scope[read.value]):
            raise NameClash(f"{name}'s expression reads {read.value}, which the call on line {tree.span(call).start.line + 1} "
                            "sees as a local; inlined, it would read that instead")
        if isinstance(scope, FunctionScope) and read.value in {p.name.value for p in _params_of(tree, call)}:
            raise NameClash(f"{name}'s expression reads {read.value}, a parameter at the call on line "
                            f"{tree.span(call).start.line + 1}")


def _params_of(tree: PythonTree, node: cst.CSTNode) -> list[cst.Param]:
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return list(ancestor.params.params)
    return []


def _substituted(tree: PythonTree, expression: cst.BaseExpression, arguments: dict[str, tuple[cst.BaseExpression, int]],
                 allow: bool, name: str, call: cst.Call) -> str:
    uses: dict[str, list[cst.Name]] = {parameter: [] for parameter in arguments}
    for read in read_names(tree, expression):
        own = tree.scopes.get(read)
        if read.value in uses and own is not None and not isinstance(own, GlobalScope) and any(
                isinstance(a, Assignment) and a.scope is own for a in own[read.value]):
            uses[read.value].append(read)
    order = sorted((tree.span(found[0]).start, arguments[parameter][1]) for parameter, found in uses.items()
                   if found and observes_state(arguments[parameter][0]))
    for parameter, found in uses.items():
        value = arguments[parameter][0]
        if (observes_state(value) or len(found) > 1 and not shareable(value)) and len(found) != 1 and not allow:
            raise EvaluationOrderChanges(
                f"the argument for {parameter} at the call on line {tree.span(call).start.line + 1} runs code or reads state, "
                f"and {name} reads it {len(found)} times: inlined, it would be evaluated {len(found)} times; nothing was changed",
                option="allow_reordering")
    if [place for _, place in order] != sorted(place for _, place in order) and not allow:
        raise EvaluationOrderChanges(f"the call on line {tree.span(call).start.line + 1} evaluates its arguments in another order "
                                     f"than {name}'s expression reads them; nothing was changed", option="allow_reordering")
    base = tree.offset(tree.span(expression).start)
    code = tree.source.text[base:tree.offset(tree.span(expression).end)]
    edits = sorted(((tree.offset(tree.span(node).start) - base, tree.offset(tree.span(node).end) - base, parameter)
                    for parameter, found in uses.items() for node in found), reverse=True)
    for start, end, parameter in edits:
        value = arguments[parameter][0]
        value_code = tree.module.code_for_node(value)
        node = next(n for n in uses[parameter] if tree.offset(tree.span(n).start) - base == start)
        replacement = value_code if bare_value(value) or stands_alone(tree, node) else f"({value_code})"
        code = code[:start] + replacement + code[end:]
    return code


def _definition_lines(tree: PythonTree, function: cst.FunctionDef) -> tuple[int, int]:
    span = tree.span(function)
    first = span.start.line
    for decorator in function.decorators:
        first = min(first, tree.span(decorator).start.line)
    return first, span.end.line

"""What inlining a Python function asks of the function and of each call, and the call of a
function whose body is one ``return EXPRESSION`` (after its docstring, if any): the expression
with the call's arguments in place of the parameters (engine.refactor.python.inline_calls plans
one call or all of them; inline_body takes a body of statements).

Refused where it could not be faithful: a function that is a method, is decorated, async, takes
``*args``/``**kwargs`` or keyword-only parameters (``not_inlinable``); a call with ``*``/``**``
arguments, or leaving out a parameter (``not_inlinable``); an argument that reads state or runs
code and that the expression would evaluate not exactly once, or out of the call's order
(``evaluation_order_changes``, unless ``allow_reordering``); a name the expression reads that
the call's scope binds otherwise (``name_clash``).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, BuiltinScope, FunctionScope, GlobalScope

from engine.errors import Refused
from engine.refactor.python.extract_variable import NameClash
from engine.refactor.python.inline_variable import bare_value, shareable, stands_alone
from engine.refactor.python.span_nodes import (
    EvaluationOrderChanges, PythonTree, binding_scope, nodes_within, observes_state, read_names,
)


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
    for node in tree.all_nodes:
        if isinstance(node, cst.FunctionDef):
            start = tree.span(node.name).start
            if (start.line, start.column) == (line, column):
                return node
    return None


def inlinable_body(tree: PythonTree, function: cst.FunctionDef) -> cst.BaseExpression | list[cst.BaseStatement]:
    """The expression of a body that is one ``return EXPRESSION``; else its statements (its
    docstring left out), which only a call that is a whole statement can take (engine.refactor.python.inline_body)."""
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
        return statements
    expression = statements[0].body[0].value
    if any(isinstance(node, (cst.Yield, cst.Await, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
                             cst.NamedExpr)) for node in nodes_within(expression)):
        raise NotInlinable(f"{name}'s expression holds a yield, await, lambda, comprehension or walrus; not inlined yet")
    return expression


def expression_for_call(fn_tree: PythonTree, function: cst.FunctionDef, expression: cst.BaseExpression,
                        call_tree: PythonTree, call: cst.Call, allow_reordering: bool) -> tuple[int, int, str]:
    """The edit that puts ``expression``, its parameters replaced by ``call``'s arguments, in place of the call."""
    name = function.name.value
    parameters = [param.name.value for param in function.params.params]
    defaults = {param.name.value: param.default for param in function.params.params if param.default is not None}
    arguments = call_arguments(call_tree, call, parameters, defaults, name)
    check_reads_mean_the_same(fn_tree, expression, call_tree, call, name)
    code = _substituted(fn_tree, expression, arguments, allow_reordering, name, call_tree, call)
    span = call_tree.span(call)
    # A bare parameter name takes its argument's shape: only stand-alone places skip the parentheses then.
    wrapped = code if stands_alone(call_tree, call) or bare_value(expression) and not isinstance(expression, cst.Name) \
        else f"({code})"
    return call_tree.offset(span.start), call_tree.offset(span.end), wrapped


def _is_docstring(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(
        statement.body[0], cst.Expr) and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def call_arguments(tree: PythonTree, call: cst.Call, parameters: list[str], defaults: dict[str, cst.BaseExpression],
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


def check_reads_mean_the_same(fn_tree: PythonTree, code: cst.CSTNode, call_tree: PythonTree, call: cst.Call, name: str) -> None:
    """The names ``code`` (of ``fn_tree``'s function) reads that are not the function's own must
    mean at the call what they mean in the function's module: the call's scope must not bind them
    (in another file, engine.refactor.python.inline_calls imports the module's names it needs)."""
    scope = call_tree.scopes.get(call)
    if scope is None:
        return
    line = call_tree.span(call).start.line + 1
    for read in read_names(fn_tree, code):
        meant = binding_scope(fn_tree, read)
        if meant is not None and not isinstance(meant, (GlobalScope, BuiltinScope)):
            continue  # the function's own (a parameter, a local)
        if not isinstance(scope, GlobalScope) and any(
                isinstance(a, Assignment) and a.scope is not scope.globals and not isinstance(a.scope, GlobalScope)
                for a in scope[read.value]):
            raise NameClash(f"{name}'s code reads {read.value}, which the call on line {line} sees as a local; inlined, it "
                            "would read that instead")
        if isinstance(scope, FunctionScope) and read.value in {p.name.value for p in _params_of(call_tree, call)}:
            raise NameClash(f"{name}'s code reads {read.value}, a parameter at the call on line {line}")


def _params_of(tree: PythonTree, node: cst.CSTNode) -> list[cst.Param]:
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return list(ancestor.params.params)
    return []


def _substituted(tree: PythonTree, expression: cst.BaseExpression, arguments: dict[str, tuple[cst.BaseExpression, int]],
                 allow: bool, name: str, call_tree: PythonTree, call: cst.Call) -> str:
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
                f"the argument for {parameter} at the call on line {call_tree.span(call).start.line + 1} runs code or reads state, "
                f"and {name} reads it {len(found)} times: inlined, it would be evaluated {len(found)} times; nothing was changed",
                option="allow_reordering")
    if [place for _, place in order] != sorted(place for _, place in order) and not allow:
        raise EvaluationOrderChanges(f"the call on line {call_tree.span(call).start.line + 1} evaluates its arguments in another order "
                                     f"than {name}'s expression reads them; nothing was changed", option="allow_reordering")
    base = tree.offset(tree.span(expression).start)
    code = tree.source.text[base:tree.offset(tree.span(expression).end)]
    edits = sorted(((tree.offset(tree.span(node).start) - base, tree.offset(tree.span(node).end) - base, parameter)
                    for parameter, found in uses.items() for node in found), reverse=True)
    for start, end, parameter in edits:
        value = arguments[parameter][0]
        value_code = call_tree.module.code_for_node(value)
        node = next(n for n in uses[parameter] if tree.offset(tree.span(n).start) - base == start)
        replacement = value_code if bare_value(value) or stands_alone(tree, node) else f"({value_code})"
        code = code[:start] + replacement + code[end:]
    return code


def definition_lines(tree: PythonTree, function: cst.FunctionDef) -> tuple[int, int]:
    span = tree.span(function)
    first = span.start.line
    for decorator in function.decorators:
        first = min(first, tree.span(decorator).start.line)
    return first, span.end.line

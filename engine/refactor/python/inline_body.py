"""Inline a Python function whose body is several statements at a call that is a whole statement
of a function: ``x = f(a)``, ``return f(a)`` or ``f(a)``. The parameters are bound to the
arguments first (in the call's order, as the call evaluates them), the body's lines follow,
re-indented with their comments, and its final ``return e`` becomes ``x = e``, ``return e`` or
``e`` (no final return: ``x = None``).

What refuses: a ``return`` anywhere but as the body's last statement (``early_return``); a
``yield`` (``generator``); a call of itself (``recursive``); a call inside an expression, at
module level, or a body with ``global``/``nonlocal`` or a string over several lines
(``not_inlinable``); a name the body binds that the calling function already uses
(``name_clash``).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ExpressionContext

from engine.errors import Refused
from engine.refactor.python.extract_variable import NameClash
from engine.refactor.python.inline_function import NotInlinable, Recursive, call_arguments, check_reads_mean_the_same
from engine.refactor.python.span_nodes import PythonTree, first_line, has_effects, name_in_use, nodes_within

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


class EarlyReturn(Refused):
    code = "early_return"


class Generator(Refused):
    code = "generator"


def statements_for_call(fn_tree: PythonTree, function: cst.FunctionDef, statements: list[cst.BaseStatement],
                        call_tree: PythonTree, call: cst.Call) -> tuple[int, int, str]:
    """The edit that puts the body's statements in place of the statement ``call`` is."""
    name = function.name.value
    final = _check_body(fn_tree, function, statements)
    small, caller = _call_statement(call_tree, call, name)
    if caller is function:
        raise Recursive(f"{name} calls itself; a recursive function cannot be inlined")
    parameters = [param.name.value for param in function.params.params]
    defaults = {param.name.value: param.default for param in function.params.params if param.default is not None}
    arguments = call_arguments(call_tree, call, parameters, defaults, name)
    for statement in statements:
        check_reads_mean_the_same(fn_tree, statement, call_tree, call, name)
    bindings = []
    kept = set()
    for parameter, (value, _) in sorted(arguments.items(), key=lambda item: item[1][1]):
        if isinstance(value, cst.Name) and value.value == parameter and not _rebinds(fn_tree, statements, parameter):
            kept.add(parameter)  # f(x) for f(x): the caller's variable is already the value
            continue
        code = call_tree.module.code_for_node(value)
        bindings.append(f"{parameter} = {f'({code})' if chr(10) in code else code}")
    target = small.targets[0].target if isinstance(small, cst.Assign) else None
    if isinstance(target, cst.Name):
        kept.add(target.value)  # x = f(...) whose body binds x: the caller's x is bound by the call's statement anyway
    _check_locals_free(fn_tree, statements, parameters, kept, call_tree, caller, name)
    indent = _indent_of(call_tree, small)
    body = _reindented(fn_tree, statements[:-1] if final is not None else statements, indent)
    last = _final_line(fn_tree, small, final)
    lines = [indent + line for line in bindings] + body + ([indent + last] if last else [])
    if not lines:
        lines = [indent + "pass"]
    span = call_tree.span(small)
    text = "\n".join(lines)[len(indent):]
    return call_tree.offset(span.start), call_tree.offset(span.end), text.replace("\n", call_tree.source.newline)


def _check_body(tree: PythonTree, function: cst.FunctionDef, statements: list[cst.BaseStatement]) -> cst.Return | None:
    """The body's final ``return`` (None: it ends without one), after refusing what cannot move."""
    name = function.name.value
    final: cst.Return | None = None
    if statements and isinstance(statements[-1], cst.SimpleStatementLine) and len(statements[-1].body) == 1 \
            and isinstance(statements[-1].body[0], cst.Return):
        final = statements[-1].body[0]
    for statement in statements:
        for node in _own_nodes(statement):
            line = tree.span(node).start.line + 1 if node in tree.positions else "?"
            if isinstance(node, cst.Return) and node is not final:
                raise EarlyReturn(f"{name} returns on line {line}, before its end; inlined, that return would leave the "
                                  "caller instead; nothing was changed")
            if isinstance(node, (cst.Yield, cst.Await)):
                raise Generator(f"{name} yields or awaits on line {line}; its body cannot run inside the caller")
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                raise NotInlinable(f"{name} declares a {type(node).__name__.lower()} name on line {line}; inlined it would "
                                   "change the caller's scope")
            if isinstance(node, cst.Name) and node.value == name and not isinstance(tree.parents.get(node), cst.Attribute):
                raise Recursive(f"{name} names itself on line {line}; a recursive function cannot be inlined")
            if isinstance(node, (cst.SimpleString, cst.FormattedString)) and node in tree.positions \
                    and tree.span(node).start.line != tree.span(node).end.line:
                raise NotInlinable(f"line {line} of {name} starts a string over several lines, whose text re-indenting would change")
    return final


def _own_nodes(root: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``root`` outside the functions, classes and lambdas it defines (their returns are theirs)."""
    found = []
    for child in root.children:
        if isinstance(root, _NESTED) and child is root.body:
            continue  # a def among the body's statements: only its header runs here
        found.append(child)
        if not isinstance(child, _NESTED):
            found.extend(_own_nodes(child))
    return found


def _call_statement(tree: PythonTree, call: cst.Call, name: str) -> tuple[cst.BaseSmallStatement, cst.FunctionDef]:
    parent = tree.parents.get(call)
    line = tree.span(call).start.line + 1
    whole = isinstance(parent, cst.Expr) or isinstance(parent, cst.Return) and parent.value is call or isinstance(
        parent, cst.Assign) and parent.value is call and len(parent.targets) == 1
    statement = tree.parents.get(parent) if parent is not None else None
    if not whole or not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        raise NotInlinable(f"the call of {name} on line {line} is part of an expression; {name}'s body is statements, which "
                           "can replace only a call that is a whole statement (`x = f(...)`, `return f(...)`, `f(...)`)")
    caller = next((a for a in tree.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
    if caller is None or not isinstance(tree.parents.get(statement), cst.IndentedBlock):
        raise NotInlinable(f"the call of {name} on line {line} is not in a function's block; its locals would become module names")
    if not isinstance(parent, (cst.Expr, cst.Return, cst.Assign)):
        raise TypeError("a whole-statement call is an expression, return or assignment")
    return parent, caller


def _rebinds(tree: PythonTree, statements: list[cst.BaseStatement], name: str) -> bool:
    return any(isinstance(node, cst.Name) and node.value == name and tree.contexts.get(node) in (
        ExpressionContext.STORE, ExpressionContext.DEL) for statement in statements for node in nodes_within(statement))


def _check_locals_free(fn_tree: PythonTree, statements: list[cst.BaseStatement], parameters: list[str], kept: set[str],
                       call_tree: PythonTree, caller: cst.FunctionDef, name: str) -> None:
    scope = fn_tree.scopes.get(statements[0]) if statements else None
    own = set(parameters) | ({assignment.name for assignment in scope.assignments} if scope is not None else set())
    for local in sorted(own - kept):
        if name_in_use(call_tree, local, caller):
            raise NameClash(f"{name} binds {local}, which {caller.name.value} already uses; inlined, the two would be one "
                            "variable; rename one first")


def _indent_of(tree: PythonTree, small: cst.CSTNode) -> str:
    line = tree.span(small).start.line
    text = tree.source.text[tree.source.line_starts[line]:].split("\n", 1)[0]
    return text[: len(text) - len(text.lstrip())]


def _reindented(tree: PythonTree, statements: list[cst.BaseStatement], indent: str) -> list[str]:
    if not statements:
        return []
    first = first_line(tree, statements[0])
    last = tree.span(statements[-1]).end.line
    lines = tree.source.text.replace("\r\n", "\n").split("\n")[first:last + 1]
    body_indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    if any(line.strip() and not line.startswith(body_indent) for line in lines):
        raise NotInlinable("a line of the body is indented less than its first statement; not inlined")
    return [indent + line[len(body_indent):] if line.strip() else "" for line in lines]


def _final_line(fn_tree: PythonTree, small: cst.BaseSmallStatement, final: cst.Return | None) -> str:
    value = "None"
    if final is not None and final.value is not None:
        span = fn_tree.span(final.value)
        value = fn_tree.source.text[fn_tree.offset(span.start):fn_tree.offset(span.end)]
        if "\n" in value:
            value = f"({value})"
    if isinstance(small, cst.Return):
        return f"return {value}" if value != "None" else "return"
    if isinstance(small, cst.Assign):
        target = _target_code(small)
        return "" if target == value else f"{target} = {value}"
    # A bare call: its value was thrown away; the final expression runs only when it may do something.
    return value if final is not None and final.value is not None and has_effects(final.value) else ""


def _target_code(small: cst.Assign) -> str:
    return cst.Module(body=[]).code_for_node(small.targets[0].target)

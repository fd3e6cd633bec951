"""Whether a leftover use of a renamed name in a Python file can only be a builtin's or a
standard-library module's.

A rename reports the old name's uses in code that it left as "check them": one may be a missed
reference. Renaming a parameter called ``html`` or a function called ``format`` leaves hundreds of
uses of the ``html`` module and the builtin ``format``, and the one line a user must act on drowns
among them. A file that binds the name no other way than ``import html`` (a standard-library
module) or not at all (a builtin) cannot refer to the renamed symbol by it: the binding is read
in the file as it was before the rename, so a missed use in the renamed symbol's own file (whose
``def`` the rename changed) is still code. A star import, a parameter, an assignment, a ``def``,
a ``class`` or an import of a project module's name counts as a binding.
"""

from __future__ import annotations

import ast
import builtins
import sys

from engine.refactor.python.pytrees import parse_python

_BUILTINS = frozenset(dir(builtins))


def builtin_lines(text_before: str, name: str, lines: set[int]) -> set[int]:
    """Those of ``lines`` (1-based) where ``name`` can only mean a builtin or a standard-library
    module imported by that name, in this file as it was before the rename: none when the file
    binds the name at module level (or does not parse); a function that binds it (a parameter,
    an assignment) keeps its own lines."""
    stdlib = name in sys.stdlib_module_names
    if name not in _BUILTINS and not stdlib:
        return set()
    tree = parse_python(text_before)
    if tree is None:
        return set()
    imported_module = False
    local: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if _binds_inside(node, name):
                local.append((node.lineno, node.end_lineno or node.lineno))
            continue
        if isinstance(node, ast.ImportFrom):
            if any(alias.name == "*" or (alias.asname or alias.name) == name for alias in node.names):
                return set()
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == name or (alias.asname is None and alias.name.split(".")[0] == name and not stdlib):
                    return set()
                imported_module = imported_module or (alias.asname is None and alias.name.split(".")[0] == name)
        elif isinstance(node, ast.ClassDef) and node.name == name:
            return set()
        elif isinstance(node, ast.Global) and name in node.names:
            return set()
    if _binds_at_module_level(tree, name):
        return set()
    if name not in _BUILTINS and not imported_module:
        return set()
    return {line for line in lines if not any(first <= line <= last for first, last in local)}


def _binds_at_module_level(tree: ast.Module, name: str) -> bool:
    """A ``def``, an assignment, a loop or ``with`` target or an ``except ... as`` of the name
    outside every function (class bodies included)."""
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name == name:
                return True
            pending += node.decorator_list
            continue
        if isinstance(node, ast.Lambda):
            continue
        if (isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)) or (
                isinstance(node, ast.ExceptHandler) and node.name == name):
            return True
        pending += ast.iter_child_nodes(node)
    return False


def _binds_inside(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> bool:
    """Whether a function (or anything nested in it) binds the name: then its lines are code."""
    for node in ast.walk(function):
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name and node is not function:
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == name or a.name == "*" for a in node.names):
            return True
    return False

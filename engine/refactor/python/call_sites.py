"""Every call of a module-level Python function, in its own module and in the other files that
import it (``from mod import f [as g]``, ``import mod [as m]`` then ``m.f(...)``), for the
operations that change each call (introduce-parameter passing a value, inline at every call).

A use that is not a call (passed as a value, named in ``__all__``, reached through a name this
cannot follow) is listed, never skipped: the caller refuses, since a call it cannot see would be
left behind unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

import libcst as cst
from libcst.metadata import Assignment, GlobalScope

from engine.refactor.python.cst_edits import all_names, dotted
from engine.refactor.python.span_nodes import PythonTree
from engine.workspace import SourceFile


@dataclass
class FileCalls:
    """The calls of the function in one file, and the import aliases there that bind it."""

    tree: PythonTree
    calls: list[cst.Call] = field(default_factory=list)
    from_imports: list[cst.ImportAlias] = field(default_factory=list)
    """``from mod import f`` aliases binding the function (inline removes them once unused)."""


@dataclass(frozen=True)
class OtherUse:
    """A use of the function that is not a call this can change."""

    path: str
    line: int
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.why}"


@dataclass
class CallSites:
    files: list[FileCalls]
    other_uses: list[OtherUse]


def module_level_binding(tree: PythonTree, function: cst.FunctionDef) -> Assignment | None:
    """The function's own binding in its module's scope, when it is the only binding of its name."""
    scope = tree.scopes.get(function)
    name = function.name.value
    if not isinstance(scope, GlobalScope) or len(scope.assignments[name]) != 1:
        return None
    found = [a for a in scope.assignments[name] if isinstance(a, Assignment) and a.node is function]
    return found[0] if found else None


def find_call_sites(tree: PythonTree, function: cst.FunctionDef, others: list[SourceFile]) -> CallSites:
    """The calls of the module-level ``function`` in its file and in ``others`` (the other Python
    files whose text names it)."""
    from engine.refactor.python.span_nodes import read_tree

    name = function.name.value
    other_uses: list[OtherUse] = []
    own = FileCalls(tree)
    binding = module_level_binding(tree, function)
    if binding is None:
        other_uses.append(OtherUse(tree.source.path, tree.span(function.name).start.line + 1, f"{name} is bound more than once in its module"))
        return CallSites([own], other_uses)
    # In source order: LibCST's references are a set, so the first call judged (and the refusal
    # said) changed from run to run.
    uses: list[cst.CSTNode] = sorted((access.node for access in binding.references), key=lambda node: _start(tree, node))
    _collect_calls(tree, uses, own, other_uses)
    if name in (all_names(tree.module) or []):
        other_uses.append(OtherUse(tree.source.path, 0, f"{name} is listed in __all__ (a star import may call it unseen)"))
    files = [own]
    for source in others:
        other = read_tree(source)
        found = FileCalls(other)
        _calls_in_importer(other, tree.source.path, name, found, other_uses)
        if found.calls or found.from_imports:
            files.append(found)
    return CallSites(files, other_uses)


def _start(tree: PythonTree, node: cst.CSTNode) -> tuple[int, int]:
    if node not in tree.positions:
        return (-1, -1)
    start = tree.span(node).start
    return (start.line, start.column)


def _collect_calls(tree: PythonTree, uses: list[cst.CSTNode], into: FileCalls, other_uses: list[OtherUse]) -> None:
    for use in uses:
        call = tree.parents.get(use)
        if isinstance(call, cst.Call) and call.func is use:
            into.calls.append(call)
        else:
            line = tree.span(use).start.line + 1 if use in tree.positions else 0
            other_uses.append(OtherUse(tree.source.path, line, "used other than by a call"))


def _calls_in_importer(tree: PythonTree, defining: str, name: str, into: FileCalls, other_uses: list[OtherUse]) -> None:
    """The calls of ``name`` from ``defining`` in an importing file; every mention of the word
    that is neither one of them nor an import of another module's name is an unresolved use."""
    accounted: set[cst.CSTNode] = set()
    for statement in tree.all_nodes:
        if isinstance(statement, cst.ImportFrom) and _names_module(tree, statement, defining) \
                and not isinstance(statement.names, cst.ImportStar):
            for alias in statement.names:
                if isinstance(alias.name, cst.Name) and alias.name.value == name:
                    accounted.add(alias.name)
                    into.from_imports.append(alias)
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    accounted.update(_uses_of_binding(tree, alias, bound, into, other_uses))
        elif isinstance(statement, cst.ImportFrom) and _names_module(tree, statement, defining):
            other_uses.append(OtherUse(tree.source.path, tree.span(statement).start.line + 1, "a star import of its module"))
        elif isinstance(statement, cst.Import):
            for alias in statement.names:
                if dotted(alias.name) in _module_names(defining):
                    accounted.update(_attribute_uses(tree, alias, name, into, other_uses))
    for node in tree.all_nodes:
        if isinstance(node, cst.Name) and node.value == name and node not in accounted and _is_reference(tree, node):
            line = tree.span(node).start.line + 1 if node in tree.positions else 0
            other_uses.append(OtherUse(tree.source.path, line, f"names {name} in a way not followed to its definition"))


def _is_reference(tree: PythonTree, node: cst.Name) -> bool:
    """Whether a ``name`` word could mean the function: not a keyword argument's name, nor an
    attribute of something else than a module alias (those are accounted for)."""
    parent = tree.parents.get(node)
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return False
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param)) and getattr(parent, "name", None) is node:
        return False
    if isinstance(parent, cst.ImportAlias) and parent.name is node:
        return isinstance(tree.parents.get(parent), cst.Import)  # another module's name of the same word
    return True


def _uses_of_binding(tree: PythonTree, alias: cst.ImportAlias, bound: cst.BaseExpression, into: FileCalls,
                     other_uses: list[OtherUse]) -> set[cst.CSTNode]:
    scope = tree.scopes.get(alias)
    if scope is None or not isinstance(bound, cst.Name):
        return set()
    uses: list[cst.CSTNode] = []
    for assignment in scope.assignments[bound.value]:
        if isinstance(assignment, Assignment) and assignment.node in (alias, tree.parents.get(alias)):
            uses.extend(access.node for access in assignment.references)
    _collect_calls(tree, uses, into, other_uses)
    return {*uses, bound}


def _attribute_uses(tree: PythonTree, alias: cst.ImportAlias, name: str, into: FileCalls,
                    other_uses: list[OtherUse]) -> set[cst.CSTNode]:
    """``m.f`` after ``import mod as m`` (or ``mod.f`` after ``import mod``)."""
    module = dotted(alias.name) or ""
    bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else module
    found: set[cst.CSTNode] = set()
    uses: list[cst.CSTNode] = []
    for node in tree.all_nodes:
        if isinstance(node, cst.Attribute) and node.attr.value == name and dotted(node.value) == bound:
            uses.append(node)
            found.add(node.attr)
    _collect_calls(tree, uses, into, other_uses)
    return found


def _names_module(tree: PythonTree, statement: cst.ImportFrom, defining: str) -> bool:
    level = len(statement.relative)
    module = dotted(statement.module) if statement.module is not None else ""
    if level == 0:
        return module in _module_names(defining)
    package = PurePosixPath(tree.source.path).parent
    for _ in range(level - 1):
        package = package.parent
    target = package.joinpath(*module.split(".")) if module else package
    wanted = PurePosixPath(defining)
    return wanted.with_suffix("") == target or wanted == target / "__init__.py"


def _module_names(path: str) -> set[str]:
    """The dotted names a file may be imported by: from the workspace root and from each folder
    below it (a ``src/`` layout, a tests folder on the path)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return {".".join(parts[index:]) for index in range(len(parts))}

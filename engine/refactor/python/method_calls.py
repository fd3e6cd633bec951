"""Every call of a Python method, for introduce-parameter passing a value at each one: a method
is called as ``obj.meth(...)``, and which ``obj`` holds its class takes types, so the calls are
the references a language service found (basedpyright, else the project graph), each checked here
to be a call this can change.

The references are then checked against the text: every ``.meth`` attribute in the files that name
the method must be one of them (a receiver no tool could type is listed, never skipped), and so
must every other use; another class defining a method of that name (an override, or a base, which
calls through the other class may reach) and a string naming it (``getattr``) are listed too. The
caller refuses while any is listed, since a call left without the new argument would fail.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from engine.positions import Position
from engine.refactor.python.call_sites import CallSites, FileCalls, OtherUse
from engine.refactor.python.span_nodes import PythonTree, nodes_within, read_tree
from engine.workspace import SourceFile


@dataclass(frozen=True)
class MethodReferences:
    """Where a references search found the method's name (its definition among them, or not)."""

    places: frozenset[tuple[str, Position]]
    found_by: str
    """Which service answered (``lsp``, or ``ast`` for the project graph), for the plan's note."""


def method_call_sites(tree: PythonTree, method: cst.FunctionDef, references: MethodReferences,
                      others: list[SourceFile]) -> CallSites:
    """The calls of ``method`` (a def in a class body of ``tree``) in its file and in ``others``
    (the other Python files whose text names it), and every use that is not one of them."""
    name = method.name.value
    trees = [tree, *(read_tree(source) for source in others)]
    other_uses: list[OtherUse] = []
    files = []
    for each in trees:
        calls = FileCalls(each)
        other_uses.extend(_other_definitions(each, method, name))
        other_uses.extend(_strings_naming(each, name))
        for node in nodes_within(each.module):
            if isinstance(node, cst.Name) and node.value == name and node is not method.name and _is_use(each, node):
                _sort_use(each, node, references, calls, other_uses)
        if each is tree or calls.calls:  # the method's own file changes even when it holds no call
            files.append(calls)
    seen = {each.source.path for each in trees}
    for path, at in sorted(references.places):
        if path not in seen:
            other_uses.append(OtherUse(path, at.line + 1, f"a reference to {name} in a file that does not name it as a word"))
    return CallSites(files, other_uses)


def _is_use(tree: PythonTree, node: cst.Name) -> bool:
    """A name that reads something (not a def's, a parameter's or a keyword argument's own name)."""
    parent = tree.parents.get(node)
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and parent.name is node:
        return False
    if isinstance(parent, cst.Param) or isinstance(parent, cst.Arg) and parent.keyword is node:
        return False
    return not isinstance(parent, (cst.ImportAlias, cst.AsName))


def _sort_use(tree: PythonTree, node: cst.Name, references: MethodReferences, calls: FileCalls,
              other_uses: list[OtherUse]) -> None:
    """A call of the method, or a use listed in ``other_uses`` with why it cannot be changed."""
    at = tree.span(node).start
    line = at.line + 1
    parent = tree.parents.get(node)
    if (tree.source.path, at) not in references.places:
        why = "a receiver the references search did not resolve to this method" if isinstance(parent, cst.Attribute) \
            else "a name the references search did not resolve to this method"
        other_uses.append(OtherUse(tree.source.path, line, why))
        return
    call = tree.parents.get(parent) if isinstance(parent, cst.Attribute) and parent.attr is node else None
    if isinstance(call, cst.Call) and call.func is parent:
        calls.calls.append(call)
    else:
        other_uses.append(OtherUse(tree.source.path, line, "used other than by a call"))


def _other_definitions(tree: PythonTree, method: cst.FunctionDef, name: str) -> list[OtherUse]:
    found = []
    for node in nodes_within(tree.module):
        if isinstance(node, cst.FunctionDef) and node is not method and node.name.value == name:
            owner = next((a for a in tree.ancestors(node) if isinstance(a, (cst.ClassDef, cst.FunctionDef))), None)
            if isinstance(owner, cst.ClassDef):
                found.append(OtherUse(tree.source.path, tree.span(node.name).start.line + 1,
                                      f"{owner.name.value}.{name} is defined too: a call through a base or a subclass may reach "
                                      "either"))
    return found


def _strings_naming(tree: PythonTree, name: str) -> list[OtherUse]:
    found = []
    for node in nodes_within(tree.module):
        if isinstance(node, cst.SimpleString) and node.raw_value == name:
            found.append(OtherUse(tree.source.path, tree.span(node).start.line + 1,
                                  f"a string names {name} (getattr or a table of handlers may call it)"))
    return found

"""Inline a module-level Python function: at one call (the definition stays), or at every call
in the workspace, in its module and in the files that import it (their ``from mod import f``
goes once nothing else uses it), then delete the definition.

A body that is one ``return EXPRESSION`` replaces any call (engine.refactor.python.inline_function);
a body of statements replaces a call that is a whole statement (engine.refactor.python.inline_body).
At every call, what refuses: a use of the function that is not a call (``not_only_called`` in its
module, ``used_elsewhere`` in another file: passed as a value, listed in ``__all__``, named in a
way not followed), a call of itself (``recursive``), and whatever one call refuses.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, GlobalScope, Scope

from engine.edits.model import WorkspaceEdit
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.call_sites import FileCalls, find_call_sites
from engine.refactor.python.cst_edits import bound_name, spliced, without_aliases
from engine.refactor.python.inline_body import statements_for_call
from engine.refactor.python.inline_function import (
    NotInlinable, NotOnlyCalled, Recursive, UsedElsewhere, definition_lines, expression_for_call, inlinable_body,
)
from engine.refactor.python.extract_variable import NameClash
from engine.refactor.python.span_nodes import PythonTree, binding_scope, nodes_within, read_names
from engine.symbols import Confidence, Source
from engine.workspace import SourceFile


def plan_inline_call(tree: PythonTree, call: cst.Call, *, allow_reordering: bool) -> RefactorPlan:
    """Inline the function ``call`` calls at that call only; the definition stays."""
    function = called_function(tree, call)
    edit = _inlined(tree, function, tree, call, allow_reordering)
    return RefactorPlan("inline", WorkspaceEdit((spliced(tree.source, [edit]),)), Source.AST, Confidence.HIGH, [])


def called_function(tree: PythonTree, call: cst.Call) -> cst.FunctionDef:
    """The module-level def of this file that ``call`` calls by its name."""
    line = tree.span(call).start.line + 1
    if not isinstance(call.func, cst.Name):
        raise NotInlinable(f"the call on line {line} calls {tree.module.code_for_node(call.func)}, not a function of this "
                           "module by its name; only those are inlined")
    scope = binding_scope(tree, call.func)
    bindings = list(scope.assignments[call.func.value]) if isinstance(scope, GlobalScope) else []
    found = bindings[0].node if len(bindings) == 1 and isinstance(bindings[0], Assignment) else None
    if not isinstance(found, cst.FunctionDef):
        raise NotInlinable(f"{call.func.value} on line {line} is not a function defined once in this module (imported, "
                           "bound otherwise, or a builtin); inline it where it is defined")
    return found


def plan_inline_function(tree: PythonTree, function: cst.FunctionDef, others: list[SourceFile], *,
                         allow_reordering: bool) -> RefactorPlan:
    """Inline ``function`` at every call (``others``: the other Python files whose text names it), then delete it."""
    name = function.name.value
    inlinable_body(tree, function)  # what the function itself refuses comes first
    found = find_call_sites(tree, function, others)
    for use in found.other_uses:
        if use.path == tree.source.path:
            raise NotOnlyCalled(f"{name} is used other than by a call this can inline ({use}); inlining would leave it dangling")
        raise UsedElsewhere(f"{name} is used other than by a call in {use}; inlining would leave it dangling; nothing was changed")
    if not any(calls.calls for calls in found.files):
        raise NotOnlyCalled(f"nothing calls {name}; delete it instead")
    changes = []
    for calls in found.files:
        edits = []
        for call in calls.calls:
            around = set(calls.tree.ancestors(call))
            if function in around:
                raise Recursive(f"{name} calls itself; a recursive function cannot be inlined")
            if any(other in around for other in calls.calls):
                raise NotInlinable(f"{calls.tree.source.path}:{calls.tree.span(call).start.line + 1}: a call of {name} is an "
                                   "argument of another; inline at the inner call first (give its span)")
            edits.append(_inlined(tree, function, calls.tree, call, allow_reordering))
        if calls.tree is tree:
            edits.append(_definition_removal(tree, function))
        else:
            added = _imports_added(tree, function, calls)
            edits.extend(_import_removals(calls, above_code=not added))
            edits.extend(added)
        changes.append(spliced(calls.tree.source, edits))
    warnings = [] if name.startswith("_") else [
        f"{name} was a public name of {tree.source.path}: code outside this workspace that imports it will break"]
    return RefactorPlan("inline", WorkspaceEdit(tuple(changes)), Source.AST, Confidence.HIGH, warnings)


def _inlined(fn_tree: PythonTree, function: cst.FunctionDef, call_tree: PythonTree, call: cst.Call,
             allow_reordering: bool) -> tuple[int, int, str]:
    body = inlinable_body(fn_tree, function)
    if isinstance(body, list):
        return statements_for_call(fn_tree, function, body, call_tree, call)
    return expression_for_call(fn_tree, function, body, call_tree, call, allow_reordering)


def _definition_removal(tree: PythonTree, function: cst.FunctionDef) -> tuple[int, int, str]:
    text = tree.source.text
    first, last = definition_lines(tree, function)
    starts = tree.source.line_starts
    begin = starts[first]
    finish = starts[last + 1] if last + 1 < len(starts) else len(text)
    # The blank lines after the definition go with it (those before keep what is above apart from what follows).
    while finish < len(text) and text[finish] in "\r\n":
        finish += 1
    if finish >= len(text):  # the last definition of the file: the blank lines above it go instead
        while begin > 0 and text[begin - 1] in "\r\n" and begin >= 2 and text[begin - 2] in "\r\n":
            begin -= 1
    return begin, finish, ""


def _import_removals(calls: FileCalls, *, above_code: bool) -> list[tuple[int, int, str]]:
    """Each ``from mod import f`` of an importer without ``f`` (every use of it was a call, now inlined).
    ``above_code``: nothing is added in its place, so its blank lines go with it from a file's first line."""
    tree = calls.tree
    edits = []
    for alias in calls.from_imports:
        statement = tree.parents.get(alias)
        if not isinstance(statement, cst.ImportFrom):
            continue
        bound = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else \
            alias.name.value if isinstance(alias.name, cst.Name) else ""
        kept = without_aliases(statement, {bound})
        line = tree.parents.get(statement)
        if isinstance(kept, cst.RemovalSentinel) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
            span = tree.span(line)
            starts = tree.source.line_starts
            text = tree.source.text
            end = starts[span.end.line + 1] if span.end.line + 1 < len(starts) else len(text)
            if span.start.line == 0 and above_code:  # the file's first line: the blank lines below it would start the file
                while end < len(text) and text[end] in "\r\n":
                    end += 1
            edits.append((starts[span.start.line], end, ""))
        elif not isinstance(kept, cst.RemovalSentinel):
            span = tree.span(statement)
            edits.append((tree.offset(span.start), tree.offset(span.end), tree.module.code_for_node(kept)))
        else:
            raise NotInlinable(f"{tree.source.path}:{tree.span(statement).start.line + 1}: the import of the function shares "
                               "its line with other statements; not inlined")
    return edits




def _imports_added(fn_tree: PythonTree, function: cst.FunctionDef, calls: FileCalls) -> list[tuple[int, int, str]]:
    """The imports an importer needs for the names of the function's module its inlined code
    reads, placed above its import of the function: the module's own import of a name
    when it has one (``import math``), else the name from the module (``from geo import SCALE``)."""
    needed = module_names_read(fn_tree, function.body)
    if not needed or not calls.calls:
        return []
    tree = calls.tree
    anchor = next((tree.parents.get(alias) for alias in calls.from_imports), None)
    if not isinstance(anchor, cst.ImportFrom):
        raise UsedElsewhere(f"{function.name.value} reads {', '.join(needed)} of {fn_tree.source.path}, and "
                            f"{tree.source.path} reaches it as a module attribute; import the function by name there first")
    module = "." * len(anchor.relative) + (tree.module.code_for_node(anchor.module) if anchor.module is not None else "")
    lines = []
    scope = fn_tree.scopes.get(function)
    for name in needed:
        line = _import_line(fn_tree, scope, name, module) if scope is not None else f"from {module} import {name}"
        already = _module_level_imports(tree, name)
        if already is not None:
            if not {line, f"from {module} import {name}"} & already:
                raise NameClash(f"{function.name.value} reads {name} of {fn_tree.source.path}, and {tree.source.path} binds "
                                f"{name} otherwise; nothing was changed")
            continue
        lines.append(line + tree.source.newline)
    statement = tree.parents.get(anchor)
    at = tree.source.line_starts[tree.span(statement if statement is not None else anchor).start.line]
    return [(at, at, "".join(lines))] if lines else []


def module_names_read(tree: PythonTree, root: cst.CSTNode) -> list[str]:
    """The module-level names the code in ``root`` reads: by name, and inside its string
    annotations (``x: "Optional[Box]"``), which LibCST parses and records as reads of the string."""
    names = {read.value for read in read_names(tree, root) if isinstance(binding_scope(tree, read), GlobalScope)}
    scope = tree.scopes.get(tree.module.body[0]) if tree.module.body else None
    if scope is not None:
        strings = {id(node) for node in nodes_within(root) if isinstance(node, cst.SimpleString)}
        names |= {assignment.name for assignment in scope.globals.assignments
                  if any(id(access.node) in strings for access in assignment.references)}
    return sorted(names)


def _import_line(fn_tree: PythonTree, scope: Scope, name: str, module: str) -> str:
    for assignment in scope.assignments[name]:
        found = _import_of(fn_tree, getattr(assignment, "node", None), name)
        if found is not None and not found.startswith("from ."):
            return found
    return f"from {module} import {name}"


def _import_of(tree: PythonTree, node: object, name: str) -> str | None:
    """``import X [as name]`` or ``from M import X [as name]``: the import statement ``node`` binds ``name`` by."""
    if not isinstance(node, (cst.Import, cst.ImportFrom)) or isinstance(node.names, cst.ImportStar):
        return None
    aliases = [a for a in node.names if bound_name(a) == name]
    if not aliases:
        return None
    alias = tree.module.code_for_node(aliases[0].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    if isinstance(node, cst.Import):
        return f"import {alias}"
    module = "." * len(node.relative) + (tree.module.code_for_node(node.module) if node.module is not None else "")
    return f"from {module} import {alias}"


def _module_level_imports(tree: PythonTree, name: str) -> set[str] | None:
    """How an importer binds ``name`` at module level (its import lines; an empty set when by
    something else than an import), or None when it does not."""
    scope = tree.scopes.get(tree.module.body[0]) if tree.module.body else None
    if scope is None or not scope.globals.assignments[name]:
        return None
    found = set()
    for assignment in scope.globals.assignments[name]:
        line = _import_of(tree, getattr(assignment, "node", None), name)
        if line is not None:
            found.add(line)
    return found

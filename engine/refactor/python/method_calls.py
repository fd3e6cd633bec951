"""Every call of a Python method, for introduce-parameter passing a value at each one: a method
is called as ``obj.meth(...)``, and which ``obj`` holds its class takes types, so the calls are
the references a language service found (basedpyright, else the project graph), each checked here
to be a call this can change.

The references are then checked against the text: every ``.meth`` attribute in the files that name
the method must be one of them (a receiver no tool could type is listed, never skipped), and so
must every other use; another class defining a method of that name (an override, or a base, which
calls through the other class may reach) and a string naming it (``getattr``) are listed too, and
so is a ``getattr`` whose name is computed and may be the method's (``getattr(self, "parse_" +
name)``), in those files or in the files that name the class or its bases. The caller refuses
while any is listed, since a call left without the new argument would fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment

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
    hierarchy: list[SourceFile] = field(default_factory=list)
    """The other files that name the class or its bases (for computed ``getattr`` lookups)."""
    family: tuple[tuple[str, str], ...] = ()
    """``(file, Class/method)`` of the other methods of its family (overrides and overridden
    methods in the workspace), whose calls are the method's calls too."""


def method_call_sites(tree: PythonTree, method: cst.FunctionDef, references: MethodReferences,
                      others: list[SourceFile], hierarchy: list[SourceFile]) -> CallSites:
    """The calls of ``method`` (a def in a class body of ``tree``) and of the other members of its
    family in its file and in ``others`` (the other Python files whose text names it), and every
    use that is not one of them; ``hierarchy``: the further files that name its class or the
    class's bases, where only a computed ``getattr`` is looked for."""
    name = method.name.value
    members = {(tree.source.path, class_path(tree, method)), *references.family}
    trees = [tree, *(read_tree(source) for source in others)]
    other_uses: list[OtherUse] = []
    for source in hierarchy:
        other_uses.extend(_computed_lookups(read_tree(source), name))
    files = []
    for each in trees:
        calls = FileCalls(each)
        other_uses.extend(_other_definitions(each, members, name))
        other_uses.extend(_strings_naming(each, name))
        other_uses.extend(_computed_lookups(each, name))
        for node in nodes_within(each.module):
            if isinstance(node, cst.Name) and node.value == name and _is_use(each, node):
                _sort_use(each, node, references, calls, other_uses)
        if each is tree or calls.calls or any(path == each.source.path for path, _ in members):  # members change too
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


def _other_definitions(tree: PythonTree, members: set[tuple[str, str | None]], name: str) -> list[OtherUse]:
    """Same-named methods of classes outside the family, and the name bound in a class body by an
    assignment (``total = helper``), which a call through a base may reach too."""
    found = []
    for node in nodes_within(tree.module):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign)) and isinstance(node.target, cst.Name) \
                and node.target.value == name and _in_class_body(tree, node):
            found.append(OtherUse(tree.source.path, tree.span(node).start.line + 1,
                                  f"{name} is assigned in a class body: a call through a base or a subclass may reach it"))
        if isinstance(node, cst.FunctionDef) and (tree.source.path, class_path(tree, node)) not in members \
                and node.name.value == name:
            owner = next((a for a in tree.ancestors(node) if isinstance(a, (cst.ClassDef, cst.FunctionDef))), None)
            if isinstance(owner, cst.ClassDef):
                found.append(OtherUse(tree.source.path, tree.span(node.name).start.line + 1,
                                      f"{owner.name.value}.{name} is defined too: a call through a base or a subclass may reach "
                                      "either"))
    return found


def _in_class_body(tree: PythonTree, node: cst.CSTNode) -> bool:
    statement = tree.parents.get(node)
    if isinstance(node, cst.AssignTarget) and statement is not None:
        statement = tree.parents.get(statement)  # the line, around the Assign
    block = tree.parents.get(statement) if statement is not None else None
    return isinstance(block, cst.IndentedBlock) and isinstance(tree.parents.get(block), cst.ClassDef)


def class_path(tree: PythonTree, function: cst.FunctionDef) -> str | None:
    """``Class/method`` (outer classes first) when ``function`` is defined directly in a class body
    of classes only, up to the module; None otherwise."""
    parts = [function.name.value]
    node: cst.CSTNode = function
    while not isinstance(block := tree.parents.get(node), cst.Module):
        holder = tree.parents.get(block) if block is not None else None
        if not isinstance(block, cst.IndentedBlock) or not isinstance(holder, cst.ClassDef):
            return None
        parts.insert(0, holder.name.value)
        node = holder
    return "/".join(parts) if len(parts) > 1 else None


def _strings_naming(tree: PythonTree, name: str) -> list[OtherUse]:
    found = []
    for node in nodes_within(tree.module):
        if isinstance(node, cst.SimpleString) and node.raw_value == name:
            found.append(OtherUse(tree.source.path, tree.span(node).start.line + 1,
                                  f"a string names {name} (getattr or a table of handlers may call it)"))
    return found


def _computed_lookups(tree: PythonTree, name: str) -> list[OtherUse]:
    """``getattr(obj, NAME)`` calls whose NAME is computed and may spell ``name``: its literal
    prefix and suffix fit (``"parse_" + kind``, ``f"parse_{kind}"``), or nothing of it is literal
    and the object is ``self`` or ``cls``."""
    found = []
    for node in nodes_within(tree.module):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr"
                and len(node.args) >= 2) or isinstance(node.args[1].value, cst.SimpleString):
            continue
        fixed = _literal_ends(_followed(tree, node.args[1].value))
        receiver = node.args[0].value
        on_self = isinstance(receiver, cst.Name) and receiver.value in ("self", "cls")
        if fixed is not None and name.startswith(fixed[0]) and name.endswith(fixed[1]) and fixed != ("", "") or fixed == ("", "") and on_self:
            found.append(OtherUse(tree.source.path, tree.span(node).start.line + 1,
                                  f"getattr with a computed name may call {name} (its calls there are unseen)"))
    return found


def _followed(tree: PythonTree, value: cst.BaseExpression) -> cst.BaseExpression:
    """The value a computed name comes from: a local bound once (``func_name = '_process_{}'.format(...)``),
    through ``.lower()`` (method names are lower case, so the literal ends stand)."""
    if isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute) and value.func.attr.value == "lower":
        value = value.func.value
    scope = tree.scopes.get(value)
    if isinstance(value, cst.Name) and scope is not None and value.value in scope:
        bound = list(scope.assignments[value.value])
        target = bound[0].node if len(bound) == 1 and isinstance(bound[0], Assignment) else None
        line = tree.parents.get(target) if isinstance(target, cst.Name) else None  # the AssignTarget
        holder = tree.parents.get(line) if line is not None else None
        if isinstance(holder, cst.Assign) and len(holder.targets) == 1 and holder.targets[0].target is target:
            return holder.value
    return value


def _literal_ends(value: cst.BaseExpression) -> tuple[str, str] | None:
    """The literal prefix and suffix of a computed attribute name (empty when unknown); None when
    it cannot be a string."""
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary)):
        return None
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
        left, right = _literal_ends(value.left), _literal_ends(value.right)
        prefix = value.left.evaluated_value if isinstance(value.left, cst.SimpleString) else (left or ("", ""))[0]
        suffix = value.right.evaluated_value if isinstance(value.right, cst.SimpleString) else (right or ("", ""))[1]
        return str(prefix), str(suffix)
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Modulo) and isinstance(value.left, cst.SimpleString):
        text = str(value.left.evaluated_value)  # '_token_led_%s' % kind
        return text.split("%", 1)[0], ""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "format" \
            and isinstance(value.func.value, cst.SimpleString):
        return str(value.func.value.evaluated_value).split("{", 1)[0], ""  # 'parse_{}'.format(kind)
    if isinstance(value, cst.FormattedString):
        parts = value.parts
        prefix = parts[0].value if parts and isinstance(parts[0], cst.FormattedStringText) else ""
        suffix = parts[-1].value if len(parts) > 1 and isinstance(parts[-1], cst.FormattedStringText) else ""
        return prefix, suffix
    return "", ""

"""Introduce a parameter to a Python function: an expression of its body becomes a new
parameter, with that expression as its default, or (``pass_at_calls``) passed by keyword at
every call of the function in the workspace.

A default is evaluated once, when the ``def`` runs, in the scope around the function; the
expression was evaluated at every call, inside it. So what refuses: an expression that reads a
name the function (or a function around it) binds (``reads_local``); as a default, one that
builds a list, dict or set (``mutable_default``: one object would be shared by every call), or
that calls code or reads state that may change (``evaluation_order_changes``, unless
``allow_reordering``), or that reads a module name bound after the function (``not_constant``);
a name the ``def``'s scope sees otherwise (``name_clash``). Passed at the calls: a nested
function, a method without a references search's answer (or a dunder, which Python calls itself),
or a use that is not a call this can change (``unresolved_callers``; a method's calls are the
references found, engine.refactor.python.method_calls);
a call that forwards ``*args``/``**kwargs`` (``forwarded_arguments``); a call in another file when
the expression reads names that file would have to import (``used_elsewhere``).

A method's value passed at the calls goes to its family too (``MethodReferences.family``: the
overrides and overridden methods the caller found): each member takes the parameter, the calls of
every member pass the value, and ``super().meth(...)`` inside a member passes the member's own
parameter on. What refuses there: a member that is no plain def of a class body, or a property
(``family_member_unchangeable``); a member that already uses the name (``name_clash``); a value
that reads state or calls code (``evaluation_order_changes``: the calls of the other members
would evaluate it although their bodies never did).
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, BuiltinScope, ClassScope, ExpressionContext, GlobalScope, Scope

from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import Refused
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.call_sites import CallSites, find_call_sites
from engine.refactor.python.cst_edits import spliced
from engine.refactor.python.extract_variable import NameClash, NotAnExpression, NotConstant, check_identifier
from engine.refactor.python.inline_function import UsedElsewhere
from engine.refactor.python.method_calls import MethodReferences, class_path, method_call_sites
from engine.refactor.python.span_nodes import (
    EFFECTS, OBSERVERS, EvaluationOrderChanges, PythonTree, binding_scope, expression_at, name_in_use, nodes_within, read_names,
    read_tree, trimmed,
)
from engine.refactor.selection import Selection
from engine.symbols import Confidence, Source
from engine.workspace import SourceFile

_MUTABLE = (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp)


class NotInFunction(Refused):
    code = "not_in_function"


class ReadsLocal(Refused):
    code = "reads_local"


class MutableDefault(Refused):
    code = "mutable_default"


class UnresolvedCallers(Refused):
    code = "unresolved_callers"


class ForwardedArguments(Refused):
    code = "forwarded_arguments"


class FamilyMemberUnchangeable(Refused):
    code = "family_member_unchangeable"


def plan_introduce_parameter(selection: Selection, name: str, *, pass_at_calls: bool, allow_reordering: bool,
                             other_files: list[SourceFile], method_references: MethodReferences | None = None) -> RefactorPlan:
    """``other_files``: the workspace's other Python files whose text names the function (read
    only when the value is passed at the calls); ``method_references``: where a references search
    found a method's name (only for a method whose value is passed at the calls)."""
    check_identifier(name)
    tree = read_tree(selection.source)
    node, function = _expression_in_function(tree, selection)
    where = selection.describe()
    _check_reads(tree, node, function, where, as_default=not pass_at_calls)
    if name_in_use(tree, name, function):
        raise NameClash(f"{name} is already a name in {function.name.value} (a parameter, a local or a read); choose another name")
    code = tree.source.text[tree.offset(tree.span(node).start):tree.offset(tree.span(node).end)]
    if "\n" in code:
        code = f"({code})"
    warnings: list[str] = []
    if pass_at_calls:
        _check_evaluated_first(tree, node, function, where, allow_reordering, warnings)
        changes = _pass_at_calls(tree, node, function, name, code, other_files, method_references)
        if method_references is not None:
            warnings.append(f"the calls of {function.name.value} are the references {method_references.found_by} found, "
                            "each checked against every .{0} in the files that name it".format(function.name.value))
        if not function.name.value.startswith("_"):
            warnings.append(f"{function.name.value} is a public name of {tree.source.path}: calls outside this workspace "
                            f"do not pass {name} and will fail")
    else:
        _check_default(tree, node, where, allow_reordering, warnings)
        changes = [spliced(tree.source, [_replacement(tree, node, name), _parameter(tree, function, f"{name}={code}", keyword=False)])]
    # A method's calls are the server's answer when one gave the references.
    source = Source.LSP if method_references is not None and method_references.found_by == Source.LSP.value else Source.AST
    return RefactorPlan("introduce-parameter", WorkspaceEdit(tuple(changes)), source, Confidence.HIGH, warnings)


def _expression_in_function(tree: PythonTree, selection: Selection) -> tuple[cst.BaseExpression, cst.FunctionDef]:
    span = trimmed(tree, selection.range)
    node = expression_at(tree, span)
    where = selection.describe()
    if node is None:
        raise NotAnExpression(f"{where} is not one whole expression; select exactly an expression, or give --match with its text")
    parent = tree.parents.get(node)
    if tree.contexts.get(node) in (ExpressionContext.STORE, ExpressionContext.DEL) or isinstance(
            parent, (cst.AssignTarget, cst.Param)) or isinstance(parent, cst.Arg) and parent.keyword is node:
        raise NotAnExpression(f"{where} is assigned to or names an argument here, not a value; select a value")
    child: cst.CSTNode = node
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            if child is not ancestor.body:
                break  # in its decorators, defaults or annotations: evaluated outside its calls
            return node, ancestor
        if isinstance(ancestor, cst.Lambda):
            raise NotInFunction(f"{where} is inside a lambda; introduce the parameter to a def")
        child = ancestor
    raise NotInFunction(f"{where} is not in the body of a function; a parameter is introduced to the def around it")


def _check_reads(tree: PythonTree, node: cst.BaseExpression, function: cst.FunctionDef, where: str, *, as_default: bool) -> None:
    outside = tree.scopes.get(function)  # the scope the def statement runs in
    for read in read_names(tree, node):
        scope = binding_scope(tree, read)
        if scope is not None and not isinstance(scope, (GlobalScope, BuiltinScope)):
            raise ReadsLocal(f"{where} reads {read.value}, which {function.name.value} (or a scope around it) binds; a "
                             "parameter's value comes from outside the function: pass that name in instead")
        if as_default and outside is not None and _seen_from(outside, read.value) is not scope:
            raise NameClash(f"{where} reads {read.value}, which means something else where {function.name.value} is "
                            "defined (a class attribute or an enclosing function's local); as a default it would read that")


def _seen_from(scope: Scope, name: str) -> Scope | None:
    found: Scope | None = scope
    first = True
    while found is not None:
        if (first or not isinstance(found, ClassScope)) and found.assignments[name]:
            return found
        first = False
        parent = found.parent
        found = parent if parent is not found else None
    return None


def _check_default(tree: PythonTree, node: cst.BaseExpression, where: str, allow: bool, warnings: list[str]) -> None:
    if any(isinstance(part, _MUTABLE) for part in nodes_within(node)):
        raise MutableDefault(f"{where} builds a new list, dict or set at every call; as a default one object would be shared "
                             "by every call (pass it at the calls instead: pass_at_calls)")
    why = _changing(tree, node)
    if why is None:
        return
    message = f"{where} {why}: as a default it would be evaluated once, when the function is defined, not at every call"
    if not allow:
        raise EvaluationOrderChanges(message + "; nothing was changed", option="allow_reordering")
    warnings.append(message + " (allowed)")
    return


def _changing(tree: PythonTree, node: cst.BaseExpression) -> str | None:
    """Why the expression's value may differ from one call to the next, or None."""
    for part in nodes_within(node):
        if isinstance(part, EFFECTS):
            return "calls code"
        if isinstance(part, cst.Subscript):
            return "reads an item of a container"
        if isinstance(part, cst.Attribute) and not _module_attribute(tree, part):
            return f"reads the attribute {part.attr.value} of an object"
    line = tree.span(node).start.line
    for read in read_names(tree, node):
        scope = binding_scope(tree, read)
        if isinstance(scope, GlobalScope):
            bindings = list(scope.assignments[read.value])
            if len(bindings) > 1:
                return f"reads {read.value}, which its module binds {len(bindings)} times"
            if bindings and isinstance(bindings[0], Assignment) and bindings[0].node in tree.positions \
                    and tree.span(bindings[0].node).start.line > line:
                raise NotConstant(f"{read.value} is bound below the function; a default cannot read it")
    return None


def _module_attribute(tree: PythonTree, node: cst.Attribute) -> bool:
    """Whether ``node`` is ``mod.NAME`` (or ``pkg.mod.NAME``) after ``import mod``: a module's constant."""
    root: cst.BaseExpression = node
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return False
    scope = binding_scope(tree, root)
    bindings = list(scope.assignments[root.value]) if scope is not None else []
    return bool(bindings) and all(isinstance(b, Assignment) and isinstance(b.node, (cst.Import, cst.ImportFrom)) for b in bindings)


def _check_evaluated_first(tree: PythonTree, node: cst.BaseExpression, function: cst.FunctionDef, where: str, allow: bool,
                           warnings: list[str]) -> None:
    """Passed at the calls, the expression runs before the body: refused when it reads state and
    code of the body may run before it now, or when the body evaluates it only sometimes."""
    if not any(isinstance(part, (*EFFECTS, cst.Attribute, cst.Subscript)) for part in nodes_within(node)):
        return
    start = tree.span(node).start
    around = set(tree.ancestors(node))
    earlier = [part for part in nodes_within(function.body) if isinstance(part, EFFECTS) and part not in around
               and part in tree.positions and tree.span(part).start < start]
    conditional = any(isinstance(a, (cst.If, cst.IfExp, cst.BooleanOperation, cst.For, cst.While, cst.Try, cst.With))
                      for a in around if a is not function and function in set(tree.ancestors(a)))
    if not earlier and not conditional:
        return
    message = f"{where} reads state or calls code, and the body {'runs code before it' if earlier else 'evaluates it only sometimes'}"
    if not allow:
        raise EvaluationOrderChanges(message + "; passed at the calls it would run first; nothing was changed",
                                     option="allow_reordering")
    warnings.append(message + " (allowed)")


def _pass_at_calls(tree: PythonTree, node: cst.BaseExpression, function: cst.FunctionDef, name: str, code: str,
                   other_files: list[SourceFile], method_references: MethodReferences | None) -> list[FileChange]:
    found = _call_sites(tree, function, other_files, method_references)
    members = [(tree, function)]
    if method_references is not None and method_references.family:
        members += _family_members(found, method_references.family)
        _check_family(tree, node, members, name)
    if found.other_uses:
        raise UnresolvedCallers(f"{function.name.value} is used where a call cannot be changed: "
                                + "; ".join(str(use) for use in found.other_uses[:5]) + "; nothing was changed")
    reads = [read.value for read in read_names(tree, node) if isinstance(binding_scope(tree, read), GlobalScope)]
    changes = []
    for calls in found.files:
        own = [member for each, member in members if each is calls.tree]
        edits = [_parameter(calls.tree, member, name, keyword=True) for member in own]
        if calls.tree is tree:
            edits.append(_replacement(tree, node, name))
        for call in calls.calls:
            through = _passes_through(calls.tree, call, own)
            if reads and calls.tree is not tree and not through:
                raise UsedElsewhere(f"{calls.tree.source.path} calls {function.name.value}, and the value reads {', '.join(reads)}, "
                                    "which that file would have to import; introduce the parameter with a default instead")
            _check_call(calls.tree, call, function.name.value, [] if through else reads, tree is calls.tree,
                        forwards_own=through and _forwards_own_arguments(calls.tree, call))
            edits.append(_argument(calls.tree, call, f"{name}={name if through else code}"))
        if edits:
            changes.append(spliced(calls.tree.source, edits))
    return changes


def _family_members(found: CallSites, family: tuple[tuple[str, str], ...]) -> list[tuple[PythonTree, cst.FunctionDef]]:
    """The defs of the family's other members, in the trees the calls were found in."""
    members = []
    for path, name_path in family:
        tree = next((calls.tree for calls in found.files if calls.tree.source.path == path), None)
        member = None if tree is None else next(
            (each for each in nodes_within(tree.module) if isinstance(each, cst.FunctionDef)
             and each.name.value == name_path.rsplit("/", 1)[-1] and class_path(tree, each) == name_path), None)
        if tree is None or member is None:
            raise FamilyMemberUnchangeable(f"{path}: {name_path.replace('/', '.')} overrides the method or is overridden by it, "
                                           "and is not a def directly in its class body that the parameter can be added to; "
                                           "nothing was changed")
        members.append((tree, member))
    return members


def _check_family(tree: PythonTree, node: cst.BaseExpression, members: list[tuple[PythonTree, cst.FunctionDef]], name: str) -> None:
    """Every member takes the parameter; the calls of each pass the value, so it must be one that
    evaluating where the body never did changes nothing."""
    for each, member in members:
        line = each.span(member.name).start.line + 1
        if any(isinstance(decorator.decorator, (cst.Name, cst.Attribute)) and _decorator_name(decorator.decorator)
               in ("property", "cached_property", "setter", "getter") for decorator in member.decorators):
            raise FamilyMemberUnchangeable(f"{each.source.path}:{line}: {member.name.value} is a property there, read "
                                           "without a call; nothing was changed")
        if each is not tree or member is not members[0][1]:
            if name_in_use(each, name, member):
                raise NameClash(f"{each.source.path}:{line}: {name} is already a name in that {member.name.value} "
                                "(an override or a base); choose another name")
    if any(isinstance(part, OBSERVERS) for part in nodes_within(node)):
        where = f"{tree.source.path}:{tree.span(node).start.line + 1}"
        raise EvaluationOrderChanges(f"the value at {where} reads state or calls code, and {len(members) - 1} other methods of "
                                     "its family (overrides or overridden) take the parameter too: their calls would "
                                     "evaluate it although their bodies never did; nothing was changed")


def _forwards_own_arguments(tree: PythonTree, call: cst.Call) -> bool:
    """Whether every ``*``/``**`` argument of a pass-through ``super()`` call is the member's own
    ``*args``/``**kwargs``: the member takes the new parameter by name, so neither can hold it."""
    member = next((a for a in tree.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
    if member is None:
        return False
    own = {"*": member.params.star_arg, "**": member.params.star_kwarg}
    for argument in call.args:
        if argument.star:
            param = own[argument.star]
            if not (isinstance(param, cst.Param) and isinstance(argument.value, cst.Name) and argument.value.value == param.name.value):
                return False
    return True


def _decorator_name(decorator: cst.BaseExpression) -> str:
    return decorator.value if isinstance(decorator, cst.Name) else decorator.attr.value if isinstance(decorator, cst.Attribute) else ""


def _passes_through(tree: PythonTree, call: cst.Call, members: list[cst.FunctionDef]) -> bool:
    """``super().meth(...)`` in the body of a member of this file: it passes its own parameter on."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name)
            and func.value.func.value == "super"):
        return False
    enclosing = next((a for a in tree.ancestors(call) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
    return any(enclosing is member for member in members)


def _call_sites(tree: PythonTree, function: cst.FunctionDef, other_files: list[SourceFile],
                method_references: MethodReferences | None) -> CallSites:
    named = function.name.value
    if isinstance(tree.parents.get(function), cst.Module):
        return find_call_sites(tree, function, other_files)
    if class_path(tree, function) is None:
        raise UnresolvedCallers(f"{named} is a nested function: its calls cannot all be found; introduce the parameter "
                                "with a default instead")
    if named.startswith("__") and named.endswith("__"):
        raise UnresolvedCallers(f"{named} is a special method, which Python calls itself (without the new argument); "
                                "introduce the parameter with a default instead")
    if method_references is None:
        raise UnresolvedCallers(f"{named} is a method: its calls (obj.{named}(...)) take types to find, and no references "
                                "search answered; introduce the parameter with a default instead")
    return method_call_sites(tree, function, method_references, other_files, method_references.hierarchy)


def _check_call(tree: PythonTree, call: cst.Call, function: str, reads: list[str], own_module: bool, *,
                forwards_own: bool = False) -> None:
    line = tree.span(call).start.line + 1
    if any(argument.star for argument in call.args) and not forwards_own:
        raise ForwardedArguments(f"{tree.source.path}:{line} calls {function} with *args or **kwargs, which may already "
                                 "carry the new argument; nothing was changed")
    if own_module:
        for read in reads:
            if _seen_from(tree.scopes[call], read) is not _global(tree):  # type: ignore[arg-type]
                raise NameClash(f"{tree.source.path}:{line}: the value reads {read}, which means another variable at this call")


def _global(tree: PythonTree) -> Scope | None:
    scope = tree.scopes.get(tree.module)
    return scope.globals if scope is not None else None


def _replacement(tree: PythonTree, node: cst.BaseExpression, name: str) -> tuple[int, int, str]:
    span = tree.span(node)
    return tree.offset(span.start), tree.offset(span.end), name


def _parameter(tree: PythonTree, function: cst.FunctionDef, text: str, *, keyword: bool) -> tuple[int, int, str]:
    """Where the new parameter goes: after the positional ones, or (after ``*args``, or when it has
    no default and a positional one has) among the keyword-only ones."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    star = params.star_arg
    keyword_only = isinstance(star, cst.Param) or keyword and any(p.default is not None for p in positional)
    if keyword_only:
        after: list[cst.CSTNode] = [*params.kwonly_params] or ([star] if isinstance(star, cst.Param) else [])
        if not after:
            text = f"*, {text}"
            after = list(positional)
    else:
        after = list(params.params)
        if not after and params.posonly_params:  # after the slash, so that it can be passed by keyword
            after = [params.posonly_ind] if isinstance(params.posonly_ind, cst.ParamSlash) else list(params.posonly_params)
    if not after:
        at = tree.offset(tree.span(params).start)
        tail = ", " if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg else ""
        return at, at, text + tail
    end = _param_end(tree, after[-1])
    return end, end, f", {text}"


def _param_end(tree: PythonTree, param: cst.CSTNode) -> int:
    parts = [param]
    if isinstance(param, cst.Param):
        parts = [p for p in (param.name, param.annotation, param.default) if p is not None]
    return max(tree.offset(tree.span(part).end) for part in parts)


def _argument(tree: PythonTree, call: cst.Call, text: str) -> tuple[int, int, str]:
    if call.args:
        end = tree.offset(tree.span(call.args[-1]).end)
        return end, end, f", {text}"
    end = tree.offset(tree.span(call).end) - 1  # the closing parenthesis
    return end, end, text




def enclosing_function_name(selection: Selection) -> str:
    """The name of the function whose body holds the selected expression (refused as the plan
    would be when there is none)."""
    return _expression_in_function(read_tree(selection.source), selection)[1].name.value


def enclosing_method_path(selection: Selection) -> str | None:
    """``Class/method`` when the function whose body holds the selected expression is a method."""
    tree = read_tree(selection.source)
    return class_path(tree, _expression_in_function(tree, selection)[1])


def class_and_base_names(selection: Selection) -> list[str]:
    """The names of the class whose method holds the selection and of its bases (as written:
    ``Base`` or ``mod.Base`` gives ``Base``)."""
    tree = read_tree(selection.source)
    function = _expression_in_function(tree, selection)[1]
    owner = next((a for a in tree.ancestors(function) if isinstance(a, cst.ClassDef)), None)
    if owner is None:
        return []
    bases = [base.value.value if isinstance(base.value, cst.Name) else base.value.attr.value
             for base in owner.bases if isinstance(base.value, (cst.Name, cst.Attribute))]
    return [owner.name.value, *bases]

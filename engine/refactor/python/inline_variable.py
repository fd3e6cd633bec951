"""Inline a Python local variable: its value replaces each use, and its assignment goes.

What refuses: a name with more than one binding (``reassigned``); a binding that is not one
``name = value`` statement of its own line (``unsupported_definition``); a module or class
variable, which other code may read by attribute (``not_local``); a use in a nested function,
lambda or comprehension (``used_in_nested_scope``); a value that reads a name rebound or deleted between
the assignment and a use (``value_changes``); a value with effects or that reads state, used
more than once or after other code with effects ran (``evaluation_order_changes``, which
``allow_reordering`` lets pass); a variable nothing reads (``not_used``).

A provably pure value (engine.refactor.python.pure_values: literals, locals of a known immutable
type, builtins and methods of ``str``/``bytes``/``tuple``/``re.Match``) is inlined anywhere, into a
loop and at several uses too, when it cannot raise and is immutable; one that may raise still may
not move past code with effects (though past pure calls: which of two failing pure computations
reports first may then change). A pure call between the assignment and a use is no effect.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import Assignment, ExpressionContext, FunctionScope

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import line_edits
from engine.errors import Refused
from engine.positions import Position
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.pure_values import judge
from engine.refactor.python.span_nodes import (
    EFFECTS, EvaluationOrderChanges, PythonTree, has_effects, nodes_within, observes_state, read_names, read_tree,
    names_meaning, reads_locals_dynamically, trimmed,
)
from engine.refactor.selection import Selection
from engine.symbols import Confidence, Source

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BaseNumber, cst.BaseString, cst.List, cst.Tuple, cst.Dict,
          cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Ellipsis)
_LOOPS = (cst.For, cst.While)


class NotAVariable(Refused):
    code = "not_a_variable"


class Reassigned(Refused):
    code = "reassigned"


class UnsupportedDefinition(Refused):
    code = "unsupported_definition"


class NotLocal(Refused):
    code = "not_local"


class UsedInNestedScope(Refused):
    code = "used_in_nested_scope"


class ValueChanges(Refused):
    code = "value_changes"


class NotUsed(Refused):
    code = "not_used"


def plan_inline_variable(selection: Selection, *, allow_reordering: bool) -> RefactorPlan:
    tree = read_tree(selection.source)
    name = _name_at(tree, selection)
    where = selection.describe()
    scope = tree.scopes.get(name)
    bindings = [b for b in scope[name.value] if isinstance(b, Assignment)] if scope is not None else []
    if not bindings:
        raise NotAVariable(f"{where}: {name.value} is not a variable bound in this file; point at a local variable's name")
    if len(bindings) > 1:
        lines = ", ".join(str(tree.span(b.node).start.line + 1) for b in bindings if b.node in tree.positions)
        raise Reassigned(f"{name.value} is bound {len(bindings)} times (lines {lines}); inline only a variable assigned once")
    binding = bindings[0]
    if not isinstance(binding.scope, FunctionScope):
        raise NotLocal(f"{name.value} is a {'module' if binding.scope is binding.scope.globals else 'class'} variable, which other "
                       "code may read as an attribute; only function locals are inlined")
    statement, assign = _assignment(tree, binding, name.value)
    owner = next((a for a in tree.ancestors(statement) if isinstance(a, cst.FunctionDef)), None)
    dynamic = reads_locals_dynamically(owner) if owner is not None else None
    if dynamic is not None:
        raise UnsupportedDefinition(f"the function calls {dynamic}, which reads its local variables by name; "
                                    f"{name.value} would be missing from it")
    value = assign.value
    if value is None:
        raise UnsupportedDefinition(f"{name.value} is only annotated, never given a value; nothing to inline")
    around: cst.CSTNode = next((a for a in tree.ancestors(binding.node) if isinstance(a, cst.FunctionDef)), tree.module)
    uses: list[cst.CSTNode] = list(names_meaning(tree, binding.scope, name.value, around))
    if not uses:
        raise NotUsed(f"nothing reads {name.value}; delete the assignment instead (its value is evaluated for nothing)")
    for use in uses:
        if tree.span(use).start < tree.span(statement).end:
            raise ValueChanges(f"{name.value} is read on line {tree.span(use).start.line + 1}, above its assignment (by a loop's "
                               "next pass); inlining would read the value early; nothing was changed")
        if tree.contexts.get(use) is not ExpressionContext.LOAD:
            raise UnsupportedDefinition(f"{name.value} is deleted or bound again on line {tree.span(use).start.line + 1}; "
                                        "only a variable that is only read is inlined")
        if tree.scopes.get(use) is not binding.scope:
            line = tree.span(use).start.line + 1
            raise UsedInNestedScope(f"{name.value} is read on line {line} inside a nested function, lambda or comprehension, "
                                    "which may run later or many times; nothing was changed")
    _check_value_stays(tree, statement, value, uses, name.value)
    _check_formatted_strings(tree, value, uses, name.value)
    _check_order(tree, statement, value, uses, name.value, allow_reordering)
    return _edit(tree, statement, value, uses)


def _name_at(tree: PythonTree, selection: Selection) -> cst.Name:
    span = trimmed(tree, selection.range) if selection.range.start != selection.range.end else selection.range
    for node in tree.nodes_on_lines(span.start.line, span.start.line):  # a name is on one line
        if isinstance(node, cst.Name) and node in tree.positions:
            found = tree.span(node)
            if found.start == span.start or (span.start == span.end and found.start <= span.start <= found.end):
                parent = tree.parents.get(node)
                if isinstance(parent, cst.Attribute) and parent.attr is node:
                    continue
                return node
    raise NotAVariable(f"{selection.describe()} is not on a variable's name; point at the name (FILE:LINE:COL, or --match NAME)")


def _assignment(tree: PythonTree, binding: Assignment, name: str) -> tuple[cst.SimpleStatementLine, cst.Assign | cst.AnnAssign]:
    node = binding.node
    parent = tree.parents.get(node)
    target = tree.parents.get(parent) if isinstance(parent, cst.AssignTarget) else parent
    statement = tree.parents.get(target) if target is not None else None
    if isinstance(target, cst.Assign) and len(target.targets) == 1 and isinstance(statement, cst.SimpleStatementLine):
        assign: cst.Assign | cst.AnnAssign = target
    elif isinstance(target, cst.AnnAssign) and target.target is node and isinstance(statement, cst.SimpleStatementLine):
        assign = target
    else:
        raise UnsupportedDefinition(f"{name} is bound by {type(target or node).__name__}, not a `{name} = value` statement; "
                                    "only such a variable is inlined")
    if len(statement.body) != 1 or not isinstance(tree.parents.get(statement), cst.IndentedBlock):
        raise UnsupportedDefinition(f"{name}'s assignment shares its line with other statements; put it on its own line first")
    return statement, assign


def _check_value_stays(tree: PythonTree, statement: cst.CSTNode, value: cst.BaseExpression, uses: list[cst.CSTNode],
                       name: str) -> None:
    """Every name the value reads must be bound to the same thing at each use: no binding of it may
    lie between the assignment and a use, nor anywhere in a loop that holds the use but not the assignment."""
    defined = tree.span(statement).end
    reads = read_names(tree, value)
    deleted = _deletions(tree, {read.value for read in reads})
    for read in reads:
        scope = tree.scopes.get(read)
        if scope is None:
            continue
        bound = [tree.span(o.node).start for o in scope[read.value] if isinstance(o, Assignment) and o.node in tree.positions]
        for at in bound + [tree.span(d).start for d in deleted if d.value == read.value and tree.scopes.get(d) is scope]:
            for use in uses:
                if defined <= at < tree.span(use).start or _in_loop_around(tree, use, statement, at):
                    raise ValueChanges(f"{name}'s value reads {read.value}, which is bound again or deleted on line "
                                       f"{at.line + 1}, before the use on line {tree.span(use).start.line + 1}; inlining would "
                                       "read the new value, or none")


def _deletions(tree: PythonTree, names: set[str]) -> list[cst.Name]:
    """The ``del NAME`` targets of these names in the file (a deleted name is unbound, not rebound)."""
    return [node for node in tree.all_nodes
            if isinstance(node, cst.Name) and node.value in names and tree.contexts.get(node) is ExpressionContext.DEL]


def _check_formatted_strings(tree: PythonTree, value: cst.BaseExpression, uses: list[cst.CSTNode], name: str) -> None:
    """Before Python 3.12 an f-string's replacement field may hold no quote, backslash or line break."""
    code = tree.module.code_for_node(value)
    if not any(char in code for char in "'\"\\\n"):
        return
    for use in uses:
        if any(isinstance(ancestor, cst.FormattedString) for ancestor in tree.ancestors(use)):
            raise UnsupportedDefinition(f"{name} is read inside an f-string on line {tree.span(use).start.line + 1}, and its "
                                        "value holds quotes, backslashes or line breaks, which an f-string's field cannot "
                                        "hold before Python 3.12")


def _in_loop_around(tree: PythonTree, use: cst.CSTNode, statement: cst.CSTNode, at: Position) -> bool:
    around_statement = set(tree.ancestors(statement))
    for ancestor in tree.ancestors(use):
        if isinstance(ancestor, _LOOPS) and ancestor not in around_statement:
            loop = tree.span(ancestor)
            if loop.start <= at < loop.end:
                return True
    return False


def shareable(value: cst.BaseExpression) -> bool:
    """Whether evaluating ``value`` again gives the same object (a name, a number, a string, a
    constant): a list, a call or an operator's result would be a new object each time."""
    if isinstance(value, (cst.Name, cst.BaseNumber, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return isinstance(value.expression, cst.BaseNumber)
    return isinstance(value, cst.Attribute) and shareable(value.value)


def _check_order(tree: PythonTree, statement: cst.CSTNode, value: cst.BaseExpression, uses: list[cst.CSTNode], name: str,
                 allow: bool) -> None:
    pure = judge(tree, value)
    if pure is not None and pure.immutable and not pure.may_raise:
        return  # the same value wherever and however often it is evaluated (engine.refactor.python.pure_values)
    if not observes_state(value) and (len(uses) == 1 or shareable(value)):
        return
    reason: str | None
    looped = [use for use in uses if _in_loop_around(tree, use, statement, tree.span(use).start)]
    if len(uses) > 1 and not shareable(value) and not (pure is not None and pure.immutable):
        reason = (f"{name}'s value makes a new object each time it is evaluated, and it is read {len(uses)} times: inlined, "
                  "each use would get its own")
    elif len(uses) > 1 and has_effects(value) and pure is None:
        reason = f"{name}'s value runs code, and it is read {len(uses)} times: inlined, it would run {len(uses)} times"
    elif looped:
        reason = (f"{name}'s value runs code, reads state or may raise, and the use on line "
                  f"{tree.span(looped[0]).start.line + 1} is in a loop the assignment is not in: inlined, it would be "
                  "evaluated on every pass")
    else:
        # A pure call that may raise can move before a value that only reads or computes; not before one with effects.
        reason = _effects_between(tree, statement, uses, name, raising_moves=pure is not None or not has_effects(value))
    if reason is not None and not allow:
        raise EvaluationOrderChanges(reason + "; nothing was changed", option="allow_reordering")


def _effects_between(tree: PythonTree, statement: cst.CSTNode, uses: list[cst.CSTNode], name: str, *,
                     raising_moves: bool) -> str | None:
    """Why code between the assignment and the last use may change the value or see it evaluated late,
    or None. A pure call there (engine.refactor.python.pure_values) changes nothing; ``raising_moves``:
    even one that may raise may run first."""
    defined = tree.span(statement).end
    last_use = max(tree.span(use).start for use in uses)
    around_uses = {ancestor for use in uses for ancestor in tree.ancestors(use)}
    for block in tree.ancestors(statement):
        if isinstance(block, (cst.With, cst.Try)) and block not in around_uses:
            return (f"{name}'s value reads state or runs code, and leaving the {type(block).__name__.lower()} block on line "
                    f"{tree.span(block).start.line + 1} runs code before a use; inlined, the value would be evaluated after it")
    for node in tree.nodes_on_lines(defined.line, last_use.line):
        if node not in tree.positions or node in around_uses:
            continue
        at = tree.span(node).start
        if defined <= at < last_use and (isinstance(node, EFFECTS) and not _pure_call(tree, node, raising_moves)
                                         or _stores_state(node)):
            return (f"{name}'s value reads state, runs code or may raise, and line {at.line + 1} runs code before a use; inlined, the value "
                    "would be evaluated after it")
    return None


def _pure_call(tree: PythonTree, node: cst.CSTNode, raising_moves: bool) -> bool:
    found = judge(tree, node) if isinstance(node, cst.Call) else None
    return found is not None and (raising_moves or not found.may_raise)


def _stores_state(node: cst.CSTNode) -> bool:
    """An assignment or ``del`` of an attribute or item: it changes what a value may read."""
    targets: list[cst.CSTNode] = []
    if isinstance(node, cst.Assign):
        targets = [target.target for target in node.targets]
    elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
        targets = [node.target]
    elif isinstance(node, cst.Del):
        targets = [node.target]
    return any(isinstance(part, (cst.Attribute, cst.Subscript)) for target in targets for part in nodes_within(target))


def _edit(tree: PythonTree, statement: cst.SimpleStatementLine, value: cst.BaseExpression, uses: list[cst.CSTNode]) -> RefactorPlan:
    text = tree.source.text
    code = tree.module.code_for_node(value)
    wrapped = code if bare_value(value) else f"({code})"
    replacements = sorted(((tree.offset(tree.span(use).start), tree.offset(tree.span(use).end),
                            code if stands_alone(tree, use) and not isinstance(value, cst.Tuple) else wrapped) for use in uses),
                          reverse=True)
    block = tree.parents[statement]
    removal = _removal(tree, statement, block)
    after = text
    for start, end, replacement in replacements:
        after = after[:start] + replacement + after[end:]
    first, last, filler = removal
    after = after[:first] + filler + after[last:]
    change = FileChange(tree.source.path, line_edits(text, after), tree.source.sha256)
    return RefactorPlan("inline", WorkspaceEdit((change,)), Source.AST, Confidence.HIGH, [])


def bare_value(value: cst.BaseExpression) -> bool:
    """Whether a value's code can stand anywhere an operand can without parentheses."""
    return bool(value.lpar) or isinstance(value, _ATOMS) and not isinstance(value, cst.Tuple)


def stands_alone(tree: PythonTree, use: cst.CSTNode) -> bool:
    """Whether a use is a whole argument, element, value or statement, where no operator binds
    tighter than its value's (so the value needs no parentheses there)."""
    parent = tree.parents.get(use)
    if isinstance(parent, (cst.Arg, cst.Element, cst.Index, cst.Expr)):
        return True
    return isinstance(parent, (cst.Return, cst.Assign, cst.AnnAssign, cst.AugAssign)) and getattr(parent, "value", None) is use


def _removal(tree: PythonTree, statement: cst.SimpleStatementLine, block: cst.CSTNode) -> tuple[int, int, str]:
    """The assignment's whole lines (its comment too), or ``pass`` when it is all its block holds."""
    span = tree.span(statement)
    starts = tree.source.line_starts
    first = starts[span.start.line]
    last = starts[span.end.line + 1] if span.end.line + 1 < len(starts) else len(tree.source.text)
    if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
        line = tree.source.text[first:last]
        indent = line[: len(line) - len(line.lstrip())]
        return first, last, f"{indent}pass{tree.source.newline}"
    return first, last, ""

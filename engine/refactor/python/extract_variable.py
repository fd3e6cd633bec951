"""Extract a Python expression into a variable (just above its statement) or a module-level
constant (just above the top-level statement that holds it).

What refuses: a span that is not one whole expression, or one being assigned to
(``not_an_expression``); an expression evaluated per item or per loop (inside a lambda, a
comprehension, a ``while`` test) or in a one-line block (``cannot_extract_here``); an
expression evaluated only sometimes (after ``and``/``or``, in a conditional expression, an
``elif`` test) or one that reads state after code with effects in its statement ran
(``evaluation_order_changes``: ``allow_reordering`` lets both pass); a constant that reads
local names (``not_constant``); a name already in use (``name_clash``).
"""

from __future__ import annotations

import keyword

import libcst as cst
from libcst.metadata import Assignment, BuiltinScope, ExpressionContext, GlobalScope

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import line_edits
from engine.errors import InvalidName, Refused
from engine.positions import Range
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.span_nodes import (
    CannotExtractHere, EvaluationOrderChanges, PythonTree, effects_before, expression_at, first_line,
    has_effects, name_in_use, observes_state, read_names, read_tree, statement_of, trimmed,
)
from engine.refactor.selection import Selection
from engine.symbols import Confidence, Source

_PER_ITEM = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class NotAnExpression(Refused):
    code = "not_an_expression"


class NotConstant(Refused):
    code = "not_constant"


class NameClash(Refused):
    code = "name_clash"


def plan_extract_variable(selection: Selection, name: str, *, constant: bool, allow_reordering: bool) -> RefactorPlan:
    check_identifier(name)
    tree = read_tree(selection.source)
    span = trimmed(tree, selection.range)
    node = expression_at(tree, span)
    where = selection.describe()
    if node is None:
        raise NotAnExpression(f"{where} is not one whole expression ({_quoted(tree, span)}); select exactly an expression, "
                              "or give --match with its text")
    if tree.contexts.get(node) in (ExpressionContext.STORE, ExpressionContext.DEL) or _is_target(tree, node):
        raise NotAnExpression(f"{where}: {_quoted(tree, span)} is assigned to here, not read; select a value")
    if any(isinstance(ancestor, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)) for ancestor in tree.ancestors(node)):
        raise NotAnExpression(f"{where}: {_quoted(tree, span)} is a module or name of an import or global statement, not a value")
    statement = statement_of(tree, node)
    _check_evaluated_once(tree, node, statement, where)
    warnings: list[str] = []
    if constant:
        statement = _top_level_statement(tree, node)
        _check_constant(tree, node, statement, where, allow_reordering)
    else:
        _check_order(tree, node, statement, where, allow_reordering, warnings)
    _check_free(tree, node, name, constant)
    text = tree.source.text
    code = text[tree.offset(span.start):tree.offset(span.end)]
    if "\n" in code and not _parses(f"{name} = {code}"):
        code = f"({code})"
    newline = tree.source.newline
    line = first_line(tree, statement)
    line_text = text[tree.source.line_starts[line]:].split("\n", 1)[0]
    indent = line_text[: len(line_text) - len(line_text.lstrip())]
    binding = f"{indent}{name} = {code}{newline}"
    if constant and isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        # A constant goes above the comments that describe the definition, two blank lines apart.
        lines = text.split("\n")
        while line > 0 and lines[line - 1].lstrip().startswith("#"):
            line -= 1
        binding += newline * 2
    line_start = tree.source.line_starts[line]
    start, end = tree.offset(selection.range.start), tree.offset(selection.range.end)
    replaced = text[:start] + name + text[end:]
    after = replaced[:line_start] + binding + replaced[line_start:]
    change = FileChange(tree.source.path, line_edits(text, after), tree.source.sha256)
    return RefactorPlan("extract-variable", WorkspaceEdit((change,)), Source.AST, Confidence.HIGH, warnings)


def check_identifier(name: str) -> None:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise InvalidName(f"{name!r} is not a Python identifier (or is a keyword); choose another name")


def _quoted(tree: PythonTree, span: Range) -> str:
    text = tree.source.text[tree.offset(span.start):tree.offset(span.end)]
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _is_target(tree: PythonTree, node: cst.CSTNode) -> bool:
    parent = tree.parents.get(node)
    return isinstance(parent, (cst.AssignTarget, cst.AsName, cst.Param)) or (
        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node) or (
        isinstance(parent, cst.Arg) and parent.keyword is node)


def _check_evaluated_once(tree: PythonTree, node: cst.CSTNode, statement: cst.BaseStatement, where: str) -> None:
    child = node
    for ancestor in tree.ancestors(node):
        if ancestor is statement:
            break
        if isinstance(ancestor, _PER_ITEM):
            raise CannotExtractHere(f"{where} is evaluated once per item or call of the {type(ancestor).__name__.lower()} "
                                    "around it; moving it out would evaluate it once; select the whole expression around it")
        if isinstance(ancestor, cst.While) and child is ancestor.test:
            raise CannotExtractHere(f"{where} is a loop test, evaluated before every iteration; extracting it would evaluate it once")
        if isinstance(ancestor, cst.SimpleStatementSuite):
            raise CannotExtractHere(f"{where} is in a one-line block (`if x: ...`); put the block on its own lines first")
        child = ancestor


def _conditional(tree: PythonTree, node: cst.CSTNode, statement: cst.BaseStatement) -> str | None:
    """Why ``node`` is evaluated only sometimes, or None when its statement always evaluates it."""
    child = node
    for ancestor in tree.ancestors(node):
        if ancestor is statement:
            return None
        if isinstance(ancestor, cst.IfExp) and child is not ancestor.test:
            return "it is a branch of a conditional expression"
        if isinstance(ancestor, cst.BooleanOperation) and child is ancestor.right:
            return f"it follows `{ancestor.operator.__class__.__name__.lower()}`, which may skip it"
        if isinstance(ancestor, cst.If) and isinstance(tree.parents.get(ancestor), cst.If):
            return "it is an elif test, evaluated only when the tests above it fail"
        if isinstance(ancestor, cst.Assert) and child is ancestor.msg:
            return "it is an assert's message, evaluated only when the assertion fails"
        child = ancestor
    return None


def _check_order(tree: PythonTree, node: cst.CSTNode, statement: cst.BaseStatement, where: str, allow: bool,
                 warnings: list[str]) -> None:
    reason = _conditional(tree, node, statement)
    if reason is not None:
        message = f"{where}: {reason}; as a variable it would always be evaluated"
        if not allow:
            raise EvaluationOrderChanges(message + ", before the statement; nothing was changed", option="allow_reordering")
        warnings.append(message + " (allowed)")
    before = effects_before(tree, statement, node)
    if before and observes_state(node):
        first = tree.span(before[0]).start
        message = (f"{where} would run before code its statement evaluates first (line {first.line + 1}, column "
                   f"{first.column + 1}), which may change what it reads or sees its effects")
        if not allow:
            raise EvaluationOrderChanges(message + "; nothing was changed", option="allow_reordering")
        warnings.append(message + " (allowed)")


def _top_level_statement(tree: PythonTree, node: cst.CSTNode) -> cst.BaseStatement:
    found: cst.BaseStatement | None = None
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.BaseStatement) and isinstance(tree.parents.get(ancestor), cst.Module):
            found = ancestor
    if found is None:
        raise CannotExtractHere("the selection is not inside a top-level statement")
    return found


def _check_constant(tree: PythonTree, node: cst.CSTNode, statement: cst.BaseStatement, where: str, allow: bool) -> None:
    line = first_line(tree, statement)
    for name in read_names(tree, node):
        scope = tree.scopes.get(name)
        assignments = list(scope[name.value]) if scope is not None else []
        if any(not isinstance(assignment.scope, (GlobalScope, BuiltinScope)) for assignment in assignments):
            raise NotConstant(f"{where} reads {name.value}, which is not a module-level name; a constant can read only "
                              "module-level names and builtins (extract a variable instead)")
        module_level = [a for a in assignments if isinstance(a, Assignment) and isinstance(a.scope, GlobalScope)]
        if module_level and not any(_line_of(tree, a.node) < line for a in module_level):
            raise NotConstant(f"{where} reads {name.value}, which is first bound below line {line + 1}, where the constant would go")
    if has_effects(node) and not allow:
        raise EvaluationOrderChanges(f"{where} calls code: as a constant it would run once, when the module is imported, not "
                                     "where it is now; nothing was changed", option="allow_reordering")


def _line_of(tree: PythonTree, node: cst.CSTNode) -> int:
    return tree.span(node).start.line if node in tree.positions else -1


def _check_free(tree: PythonTree, node: cst.CSTNode, name: str, constant: bool) -> None:
    scope = tree.scopes.get(node)
    if scope is None:
        return
    if constant:
        scope = scope.globals
    if constant:
        around: cst.CSTNode = tree.module
    else:
        around = next((a for a in tree.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda))), tree.module)
    if name in scope or scope.accesses[name] or name_in_use(tree, name, around):
        raise NameClash(f"{name} is already a name where the {'constant' if constant else 'variable'} would be bound (or "
                        "is read there); choose another name")


def _parses(code: str) -> bool:
    try:
        compile(code, "<extract>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True

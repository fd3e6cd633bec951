"""Extract whole Python statements into a function (after the top-level definition that holds
them), or a method (after the method that holds them, when they use ``self`` or ``cls``).

The parameters are the names read in the span and bound outside it; the return values are the
names bound in the span and read after it (or anywhere in a loop around it). The span's lines
move as they are (comments and formatting kept), re-indented. ``await`` makes the function
``async`` and its call awaited.

At module level the function goes above the code (it runs as the module is imported) and every
name the span binds comes back (importers may read it). One expression, rather than statements,
is engine.refactor.python.extract_expression's, which reuses this module's checks.

What refuses: a span that is not whole statements of one block (``not_whole_statements``); a
``return`` (``contains_return``), ``yield`` (``contains_yield``), ``break`` or ``continue`` of a
loop outside the span (``contains_loop_jump``), or a ``global``/``nonlocal`` (``cannot_extract_here``)
in it, none of which a call can carry out; a multi-line string whose text the re-indenting
would change (``cannot_extract_here``); a name already in use (``name_clash``).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import Assignment, ClassScope, ExpressionContext, FunctionScope, GlobalScope, Scope

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import line_edits
from engine.errors import Refused
from engine.positions import Position, Range
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.closure_bindings import check_closure_bindings
from engine.refactor.python.cst_edits import bound_name
from engine.refactor.python.extract_variable import NameClash
from engine.refactor.python.guarded_reads import check_guarded_reads
from engine.refactor.python.span_nodes import (
    CannotExtractHere, PythonTree, binding_scope, name_in_use, names_meaning, nodes_within, reads_locals_dynamically,
)
from engine.symbols import Confidence, Source

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)


class NotWholeStatements(Refused):
    code = "not_whole_statements"


class ContainsReturn(Refused):
    code = "contains_return"


class ContainsYield(Refused):
    code = "contains_yield"


class ContainsLoopJump(Refused):
    code = "contains_loop_jump"


def plan_extract_statements(tree: PythonTree, span: Range, name: str, where: str) -> RefactorPlan:
    """The plan for the whole statements ``span`` (trimmed) covers; the entry point, which also takes
    one expression, is engine.refactor.python.extract_expression.plan_extract_function."""
    first, last = span.start.line, span.end.line
    statements = _statements(tree, first, last, where)
    block = tree.parents[statements[0]]
    owner = _owner_function(tree, block)
    _check_moveable(tree, statements)
    dynamic = reads_locals_dynamically(owner) if owner is not None else None
    dynamic = dynamic or next((found for s in statements if (found := reads_locals_dynamically(s)) is not None), None)
    if dynamic is not None:
        raise CannotExtractHere(f"the code around the selection calls {dynamic}, which reads local variables by name; "
                                "moving some into a new function would change what it sees")
    inside = Range(Position(first, 0), Position(last + 1, 0))
    scope = tree.scopes.get(statements[0])
    parameters, results = _flow(tree, statements, inside, scope, owner)
    check_guarded_reads(tree, statements, parameters, where)
    check_closure_bindings(tree, statements, owner, results, where)
    is_async = any(awaits(node) for statement in statements for node in own_nodes(statement))
    method = method_kind(tree, owner, receiver_for_super(owner, statements, parameters))
    if method is not None:
        parameters = [p for p in parameters if p != method[1]]
    else:
        check_class_bound(tree, statements)
    check_name_free(tree, name, owner, method is not None)
    return _edit(tree, name, statements, first, last, owner, parameters, results, is_async, method)


def _statements(tree: PythonTree, first: int, last: int, where: str) -> list[cst.BaseStatement]:
    """The statements of one block that lines ``first``..``last`` hold, refused unless whole."""
    chosen: list[cst.BaseStatement] = []
    # A statement that reaches these lines is in a top-level statement that does: the others' positions are not asked.
    for node in tree.nodes_on_lines(first, last):
        if not isinstance(node, cst.BaseStatement) or not isinstance(tree.parents.get(node), (cst.IndentedBlock, cst.Module)):
            continue
        lines = lines_of(tree, node)
        if lines[1] < first or lines[0] > last:
            continue
        if first <= lines[0] and lines[1] <= last:
            if not any(chosen_one in tree.ancestors(node) for chosen_one in chosen):
                chosen.append(node)
        elif not (lines[0] <= first and last <= lines[1] and _inside_body(tree, node, first)):
            raise NotWholeStatements(f"{where} cuts the statement on lines {lines[0] + 1}-{lines[1] + 1}; select whole statements "
                                         "or exactly one expression")
    if not chosen:
        raise NotWholeStatements(f"{where} holds no whole statement; select whole statements (or --lines FIRST-LAST)")
    block = tree.parents[chosen[0]]
    body: Sequence[cst.CSTNode] = getattr(block, "body", ())
    positions = [index for index, statement in enumerate(body) if any(statement is c for c in chosen)]
    if len(positions) != len(chosen) or positions != list(range(positions[0], positions[0] + len(positions))):
        raise NotWholeStatements(f"{where} spans statements of different blocks; select statements of one block")
    return chosen


def lines_of(tree: PythonTree, statement: cst.CSTNode) -> tuple[int, int]:
    span = tree.span(statement)
    start = span.start.line
    for decorator in getattr(statement, "decorators", ()):
        start = min(start, tree.span(decorator).start.line)
    return start, span.end.line


def _inside_body(tree: PythonTree, statement: cst.CSTNode, line: int) -> bool:
    """Whether ``line`` lies inside a block of ``statement`` (past its header)."""
    body = getattr(statement, "body", None)
    return isinstance(body, cst.IndentedBlock) and body in tree.positions and tree.span(body).start.line <= line or any(
        isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally, cst.If)) for child in statement.children)


def _owner_function(tree: PythonTree, block: cst.CSTNode) -> cst.FunctionDef | None:
    for ancestor in [block, *tree.ancestors(block)]:
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
        if isinstance(ancestor, cst.ClassDef):
            raise CannotExtractHere(f"lines in the body of class {ancestor.name.value} define its attributes; extract from a method")
    return None


def own_nodes(root: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``root`` outside the functions, classes and lambdas it defines."""
    found = [root]
    for child in root.children:
        if isinstance(root, _NESTED) and child is root.body:
            continue  # a def among the selected statements: only its header runs here
        if not isinstance(child, _NESTED):
            found.extend(own_nodes(child))
    return found


def awaits(node: cst.CSTNode) -> bool:
    """``await``, ``async for``, ``async with`` or an async comprehension: only an ``async def`` can run it."""
    if isinstance(node, cst.Await):
        return True
    if isinstance(node, (cst.For, cst.With, cst.CompFor)):
        return node.asynchronous is not None
    return False


def check_class_bound(tree: PythonTree, statements: Sequence[cst.CSTNode]) -> None:
    """Code that only works inside its class's body: zero-argument ``super()`` and ``__name``
    attributes (mangled with the class's name) would break in a module-level function."""
    for statement in statements:
        for node in own_nodes(statement):
            line = tree.span(node).start.line + 1 if node in tree.positions else "?"
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super" and not node.args:
                raise CannotExtractHere(f"line {line} calls super() without arguments, which works only in a method of the class; "
                                        "the extracted code would be a function")
            if isinstance(node, cst.Attribute) and node.attr.value.startswith("__") and not node.attr.value.endswith("__"):
                raise CannotExtractHere(f"line {line} reads {node.attr.value}, which Python mangles with the class's name inside "
                                        "its body only; the extracted code would be a function")


def _check_moveable(tree: PythonTree, statements: list[cst.BaseStatement]) -> None:
    for statement in statements:
        for node in own_nodes(statement):
            line = tree.span(node).start.line + 1 if node in tree.positions else "?"
            if isinstance(node, cst.Return):
                raise ContainsReturn(f"line {line} returns from the function; a call cannot return for its caller. Extract "
                                     "the lines before it, or make the return the caller's")
            if isinstance(node, cst.Yield):
                raise ContainsYield(f"line {line} yields; the extracted function would be a generator the caller never runs")
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                raise CannotExtractHere(f"line {line} declares a {type(node).__name__.lower()} name; it would bind it in the "
                                        "new function instead")
            if isinstance(node, (cst.Break, cst.Continue)) and not _loop_between(tree, node, statements):
                raise ContainsLoopJump(f"line {line} jumps out of a loop around the selection; a call cannot")
            if isinstance(node, (cst.SimpleString, cst.FormattedString)) and tree.span(node).start.line != tree.span(node).end.line:
                raise CannotExtractHere(f"line {line} starts a string over several lines, whose text re-indenting would change")


def _loop_between(tree: PythonTree, node: cst.CSTNode, statements: list[cst.BaseStatement]) -> bool:
    for ancestor in tree.ancestors(node):
        if any(ancestor is statement for statement in statements):
            return isinstance(ancestor, _LOOPS)
        if isinstance(ancestor, _LOOPS):
            return True
    return False


def _flow(tree: PythonTree, statements: list[cst.BaseStatement], inside: Range, scope: Scope | None,
          owner: cst.FunctionDef | None) -> tuple[list[str], list[str]]:
    if not isinstance(scope, (FunctionScope, GlobalScope)):
        raise CannotExtractHere("the selection is not in a function or module body")
    region: cst.CSTNode = owner if owner is not None else tree.module
    loops = [tree.span(a) for a in tree.ancestors(statements[0]) if isinstance(a, _LOOPS)]

    def reaches(assignment: Assignment) -> bool:
        """Whether a binding outside the span may hold the name's value when the span starts."""
        if assignment.node not in tree.positions:
            return True
        at = tree.span(assignment.node).start
        return not inside.contains(at) and (at < inside.start or any(loop.start <= at < loop.end for loop in loops))

    local = [a for a in scope.assignments if isinstance(a, Assignment) and a.scope is scope]
    bound_inside: dict[str, list[Assignment]] = {}
    for assignment in sorted((a for a in local if a.node in tree.positions and inside.contains(tree.span(a.node).start)),
                             key=lambda a: tree.span(a.node).start):
        bound_inside.setdefault(assignment.name, []).append(assignment)
    # A module's names are its attributes, which importers may read: each one the span binds comes back.
    results: list[str] = list(bound_inside) if isinstance(scope, GlobalScope) else []
    for name in (n for n in bound_inside if n not in results):
        for read in names_meaning(tree, scope, name, region):
            at = tree.span(read).start
            if not inside.contains(at) and (at >= inside.end or any(loop.start <= at < loop.end for loop in loops)):
                results.append(name)
                break
    reads: dict[str, list[cst.Name]] = {}
    for statement in statements:
        for node in nodes_within(statement):
            if isinstance(node, cst.Name) and node.value not in reads:
                found = [n for n in names_meaning(tree, scope, node.value, statement) if n is node]
                if found:
                    reads[node.value] = [n for s in statements for n in names_meaning(tree, scope, node.value, s)]
    for name in bound_inside:
        # In a loop, a value the span binds and reads before binding it is the next pass's: it goes back out.
        if loops and name not in results and any(not _bound_before(tree, read, statements, name) for read in reads.get(name, [])):
            results.append(name)
    parameters: list[str] = []
    enclosing = enclosing_scopes(scope)
    for statement in statements:
        for node in nodes_within(statement):
            # A closure's name, bound by a function around the one the span is in: the new function,
            # at module level, sees it only as a parameter. (A def in the span binds its own names.)
            if isinstance(node, cst.Name) and tree.contexts.get(node) is ExpressionContext.LOAD and node.value not in parameters:
                outer = binding_scope(tree, node)
                if isinstance(outer, FunctionScope) and any(outer is around for around in enclosing):
                    parameters.append(node.value)
    for name in [*reads, *(r for r in results if r not in reads)]:
        if isinstance(scope, GlobalScope) and name not in bound_inside:
            continue  # a module name the span only reads: the new function reads it as a global too
        if not any(reaches(a) for a in local if a.name == name):
            continue
        uncovered = [read for read in reads.get(name, []) if not _bound_before(tree, read, statements, name)]
        if uncovered or name in results and _unconditionally_bound_by(tree, statements, bound_inside.get(name, [])) is None:
            parameters.append(name)  # read before the span surely binds it: the caller's value comes in
    return parameters, results


def enclosing_scopes(scope: Scope) -> list[Scope]:
    """The scopes around ``scope``, innermost first, without it."""
    found: list[Scope] = []
    while scope.parent is not scope:
        scope = scope.parent
        found.append(scope)
    return found


def _bound_before(tree: PythonTree, read: cst.Name, statements: list[cst.BaseStatement], name: str) -> bool:
    """Whether the span binds ``name`` on every path to ``read`` before it: an earlier statement of a
    block around the read (within the span) that binds it, or a ``for``, ``with`` or ``except`` around
    the read that binds it in its header."""
    at = tree.span(read).start
    child: cst.CSTNode = read
    for ancestor in tree.ancestors(read):
        if isinstance(ancestor, cst.For) and child is ancestor.body and _binds(ancestor.target, name):
            return True
        if isinstance(ancestor, cst.With) and child is ancestor.body and any(
                item.asname is not None and _binds(item.asname.name, name) for item in ancestor.items):
            return True
        if isinstance(ancestor, cst.ExceptHandler) and child is ancestor.body and ancestor.name is not None \
                and _binds(ancestor.name.name, name):
            return True
        siblings: list[cst.CSTNode] = []
        if isinstance(ancestor, cst.IndentedBlock):
            siblings = list(ancestor.body)
        if any(ancestor is statement for statement in statements):
            siblings = list(statements)
        for sibling in siblings:
            # The read's own statement binds after it reads (``n = n + 1``): only earlier ones count.
            if sibling is child or sibling is ancestor or tree.span(sibling).start >= at:
                break
            if isinstance(sibling, cst.SimpleStatementLine) and any(_simple_binds(small, name) for small in sibling.body):
                return True
        if any(ancestor is statement for statement in statements):
            return False
        child = ancestor
    return False


def _binds(target: cst.CSTNode, name: str) -> bool:
    """Whether assigning to ``target`` binds the variable ``name`` (``self.name = ...`` and
    ``items[name] = ...`` bind none)."""
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(element.value, name) for element in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False


def _simple_binds(small: cst.BaseSmallStatement, name: str) -> bool:
    if isinstance(small, cst.Assign):
        return any(_binds(target.target, name) for target in small.targets)
    if isinstance(small, cst.AnnAssign):
        return small.value is not None and _binds(small.target, name)
    if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
        return any(bound_name(alias) == name for alias in small.names)
    return False


def _unconditionally_bound_by(tree: PythonTree, statements: list[cst.BaseStatement], assignments: list[Assignment]) -> Position | None:
    """Where the first statement of the span that binds the name on every path ends, or None."""
    ends = []
    for assignment in assignments:
        holder = next((a for a in tree.ancestors(assignment.node) if isinstance(a, cst.BaseStatement)), None)
        if isinstance(holder, cst.SimpleStatementLine) and any(holder is statement for statement in statements):
            ends.append(tree.span(holder).end)
    return min(ends) if ends else None


def receiver_for_super(owner: cst.FunctionDef | None, roots: Sequence[cst.CSTNode], parameters: list[str]) -> list[str]:
    """``parameters`` with the method's receiver first when the code calls ``super()`` without
    arguments, which reads it (and the class) unseen: only a method of the class can run that."""
    bare = any(isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super" and not node.args
               for root in roots for node in own_nodes(root))
    if owner is None or not bare or not owner.params.params or owner.params.params[0].name.value in parameters:
        return parameters
    return [owner.params.params[0].name.value, *parameters]


def method_kind(tree: PythonTree, owner: cst.FunctionDef | None, parameters: list[str]) -> tuple[str, str] | None:
    """('method' or 'classmethod', the receiver's name) when the span reads the method's receiver."""
    body = tree.parents.get(owner) if owner is not None else None
    if owner is None or body is None or not isinstance(tree.parents.get(body), cst.ClassDef):
        return None
    decorators = {d.decorator.value for d in owner.decorators if isinstance(d.decorator, cst.Name)}
    if "staticmethod" in decorators or not owner.params.params:
        return None
    receiver = owner.params.params[0].name.value
    if receiver not in parameters:
        return None
    return ("classmethod" if "classmethod" in decorators else "method"), receiver


def check_name_free(tree: PythonTree, name: str, owner: cst.FunctionDef | None, as_method: bool) -> None:
    if as_method and owner is not None:
        class_body = tree.parents[owner]
        taken = any(isinstance(s, (cst.FunctionDef, cst.ClassDef)) and s.name.value == name for s in getattr(class_body, "body", ()))
        scope = tree.scopes.get(owner)
        attributes = any(isinstance(n, cst.Attribute) and n.attr.value == name for n in tree.within(tree.parents[class_body]))
        if taken or attributes or (scope is not None and name in scope and isinstance(scope, ClassScope)):
            raise NameClash(f"the class already has {name} (or sets or reads it as an attribute); choose another name")
        return
    scope = tree.scopes.get(tree.module)
    if scope is not None and (name in scope or scope.accesses[name]) or name_in_use(tree, name, tree.module):
        raise NameClash(f"{name} is already a name in this module (or a builtin); choose another name")


def _edit(tree: PythonTree, name: str, statements: list[cst.BaseStatement], first: int, last: int,
          owner: cst.FunctionDef | None, parameters: list[str], results: list[str], is_async: bool,
          method: tuple[str, str] | None) -> RefactorPlan:
    text = tree.source.text
    newline = tree.source.newline
    lines = text.split("\n")
    starts = tree.source.line_starts
    block_indent = indent_of(lines[lines_of(tree, statements[0])[0]])
    if method is not None and owner is not None:
        anchor: cst.CSTNode = owner
        outer_indent = indent_of(lines[lines_of(tree, owner)[0]])
    else:
        anchor = next(a for a in [statements[0], *tree.ancestors(statements[0])] if isinstance(tree.parents.get(a), cst.Module))
        outer_indent = ""
    unit = indent_unit(tree, owner, lines, block_indent)
    body_indent = outer_indent + unit
    moved = [line.rstrip("\r") for line in lines[first:last + 1]]
    body = [body_indent + line[len(block_indent):] if line.strip() else "" for line in moved]
    if any(line.strip() and not line.startswith(block_indent) for line in moved):
        raise NotWholeStatements("a selected line is indented less than the first statement; select whole statements of one block")
    receiver = method[1] if method is not None else None
    signature = ", ".join([receiver, *parameters] if receiver else parameters)
    header = ([f"{outer_indent}@classmethod"] if method is not None and method[0] == "classmethod" else []) + [
        f"{outer_indent}{'async ' if is_async else ''}def {name}({signature}):"]
    if results:
        body.append(f"{body_indent}return {', '.join(results)}")
    function = newline.join(header + body)
    call = f"{'await ' if is_async else ''}{receiver + '.' if receiver else ''}{name}({', '.join(parameters)})"
    call_line = f"{block_indent}{', '.join(results) + ' = ' if results else ''}{call}"
    replaced_start = starts[first]
    replaced_end = starts[last + 1] if last + 1 < len(starts) else len(text)
    after = placed(tree, anchor, function, (replaced_start, replaced_end, call_line + newline), method is not None,
                   before=owner is None)
    change = FileChange(tree.source.path, line_edits(text, after), tree.source.sha256)
    return RefactorPlan("extract-function", WorkspaceEdit((change,)), Source.AST, Confidence.HIGH, [])


def placed(tree: PythonTree, anchor: cst.CSTNode, function: str, replaced: tuple[int, int, str], in_class: bool,
           before: bool) -> str:
    """The file's text with ``replaced`` (start and end offsets, the text put there) made and the new
    function beside ``anchor``: after it, or before it when the selection runs as the module is
    imported (a function defined after would not exist yet when it is called)."""
    text, newline, starts = tree.source.text, tree.source.newline, tree.source.line_starts
    start, end, replacement = replaced
    gap = newline if in_class else newline * 2
    first_of_anchor, last_of_anchor = lines_of(tree, anchor)
    if before:
        insert_at = starts[first_of_anchor]
        above = text[:insert_at].split(newline)[:-1]
        blank = next((count for count, line in enumerate(reversed(above)) if line.strip()), len(above))
        inserted = newline * (max(0, 2 - blank) if above else 0) + function + newline + gap
    else:
        insert_at = starts[last_of_anchor + 1] if last_of_anchor + 1 < len(starts) else len(text)
        tail = "" if text.endswith(("\n", "\r")) or insert_at < len(text) else newline
        inserted = tail + gap + function + newline
    if insert_at <= start:
        return text[:insert_at] + inserted + text[insert_at:start] + replacement + text[end:]
    return text[:start] + replacement + text[end:insert_at] + inserted + text[insert_at:]


def indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def indent_unit(tree: PythonTree, owner: cst.FunctionDef | None, lines: list[str], block_indent: str) -> str:
    """The file's indentation step, as the function the span is in indents its body."""
    if owner is not None and isinstance(owner.body, cst.IndentedBlock) and owner.body.body:
        outer = indent_of(lines[lines_of(tree, owner)[0]])
        inner = indent_of(lines[lines_of(tree, owner.body.body[0])[0]])
        if inner.startswith(outer) and len(inner) > len(outer):
            return inner[len(outer):]
    return "\t" if block_indent.startswith("\t") else "    "

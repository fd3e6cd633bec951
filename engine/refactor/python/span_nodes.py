"""A Python file's LibCST tree with the metadata extract and inline read: node positions (code
points, as engine positions are), parents, scopes and load/store contexts; and the questions
both ask of it: which expression a span is, which statement holds it, what runs before it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property

import libcst as cst
from libcst.metadata import ClassScope, CodeRange, ExpressionContext, Scope

from engine.errors import Refused
from engine.positions import Position, Range
from engine.refactor.python.cst_edits import parse
from engine.refactor.python.kept_trees import KeptTrees
from engine.refactor.python.statement_positions import StatementPositions
from engine.refactor.python.tree_metadata import resolve
from engine.workspace import SourceFile

EFFECTS = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)
"""Nodes that can run code that changes state (or, for a walrus, rebinds a name)."""

OBSERVERS = (*EFFECTS, cst.Attribute, cst.Subscript)
"""Nodes whose value can depend on state another node changes."""

CONDITIONAL_PARENTS = (cst.IfExp, cst.BooleanOperation)


class CannotExtractHere(Refused):
    code = "cannot_extract_here"


class EvaluationOrderChanges(Refused):
    code = "evaluation_order_changes"


@dataclass(frozen=True)
class PythonTree:
    source: SourceFile
    module: cst.Module
    positions: Mapping[cst.CSTNode, CodeRange]
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    scopes: Mapping[cst.CSTNode, Scope | None]
    contexts: Mapping[cst.CSTNode, ExpressionContext]
    source_order: Sequence[cst.CSTNode] | None = None
    """The module's nodes as ``nodes_within(module)`` yields them, when the metadata's walk listed them."""

    @cached_property
    def all_nodes(self) -> list[cst.CSTNode]:
        """Every node of the module in source order (``nodes_within(module)``), listed once per tree
        (by the metadata's walk, else walked here): a LibCST node's ``children`` is recomputed by a
        visitor each time it is asked for."""
        return list(self.source_order) if self.source_order is not None else list(nodes_within(self.module))

    @cached_property
    def _statement_slices(self) -> list[tuple[int, int, int]] | None:
        """(first line, 0-based, blank and comment lines before it included; start; end) of each
        top-level statement, its nodes being ``all_nodes[start:end]``; None without the lines."""
        if not isinstance(self.positions, StatementPositions):
            return None
        first_lines = self.positions.first_lines()
        starts = [index for index, node in enumerate(self.all_nodes) if node in first_lines]
        footer = self.module.footer
        ends = [*starts[1:], self.all_nodes.index(footer[0]) if footer else len(self.all_nodes)]
        return [(first_lines[self.all_nodes[start]] - 1, start, end) for start, end in zip(starts, ends)]

    @cached_property
    def _statement_extents(self) -> dict[cst.CSTNode, tuple[int, int]]:
        slices = self._statement_slices or []
        return {self.all_nodes[start]: (start, end) for _line, start, end in slices}

    def within(self, root: cst.CSTNode) -> Sequence[cst.CSTNode] | Iterator[cst.CSTNode]:
        """``nodes_within(root)``, read off ``all_nodes`` when ``root`` is the module or one of its
        statements (no visitor rebuilding ``children`` on the way)."""
        if root is self.module:
            return self.all_nodes
        extent = self._statement_extents.get(root)
        return self.all_nodes[extent[0]:extent[1]] if extent is not None else nodes_within(root)

    def nodes_on_lines(self, first: int, last: int) -> Sequence[cst.CSTNode]:
        """In ``all_nodes``'s order, the nodes of the top-level statements that reach lines
        ``first``..``last`` (0-based): among them every node that starts on one of those lines.
        A scan for such nodes asks positions of those statements only (their positions are
        worked out per statement: engine.refactor.python.statement_positions)."""
        slices = self._statement_slices
        if slices is None:
            return self.all_nodes
        found: list[cst.CSTNode] = []
        for index, (line, start, end) in enumerate(slices):
            following = slices[index + 1][0] if index + 1 < len(slices) else None
            if line <= last and (following is None or following > first):
                found.extend(self.all_nodes[start:end])
        return found

    def span(self, node: cst.CSTNode) -> Range:
        found = self.positions[node]
        return Range(Position(found.start.line - 1, found.start.column), Position(found.end.line - 1, found.end.column))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        while node in self.parents:
            node = self.parents[node]
            yield node

    def offset(self, position: Position) -> int:
        return self.source.line_starts[position.line] + position.column


_KEPT: KeptTrees[PythonTree] = KeptTrees()


def read_tree(source: SourceFile) -> PythonTree:
    """The file's tree with its metadata, resolved once per content (engine.refactor.python.kept_trees)."""
    return _KEPT.get((source.path, source.sha256), len(source.text), lambda: _resolved_tree(source))


def _resolved_tree(source: SourceFile) -> PythonTree:
    found = resolve(parse(source))
    order = found.source_order
    if order is not None and found.parents is not None and len(order) == len(found.parents) + 1:
        # Every node reached once, through every field that holds one: the parents every field gives.
        parents: Mapping[cst.CSTNode, cst.CSTNode] = found.parents
    else:
        parents = parents_of(found.module)
        # The order read off the fields holds every node once when it holds as many as have a parent
        # (a node held twice, or a field the order missed, and the walk through children lists them).
        order = order if order is not None and len(order) == len(parents) + 1 else None
    return PythonTree(source, found.module, StatementPositions(found.module, parents), parents, found.scopes, found.contexts,
                      order)


_CHILD_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def parents_of(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each node's parent: what LibCST's ParentNodeProvider answers, read off the nodes' fields
    (a node's children are the nodes its fields hold) instead of by its visitor, which rebuilds
    every node it passes and cost a sixth of the metadata's time."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    pending: list[cst.CSTNode] = [module]
    while pending:
        node = pending.pop()
        names = _CHILD_FIELDS.get(type(node))
        if names is None:
            names = _CHILD_FIELDS[type(node)] = tuple(field.name for field in fields(node))
        for name in names:
            value = getattr(node, name)
            for child in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(child, cst.CSTNode):
                    parents[child] = node
                    pending.append(child)
    return parents


def nodes_within(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield root
    for child in root.children:
        yield from nodes_within(child)


def expression_at(tree: PythonTree, span: Range) -> cst.BaseExpression | None:
    """The outermost expression whose extent is ``span`` exactly, or one pair of parentheses inside it;
    None for one string of an implicit concatenation."""
    wanted = [span]
    text = tree.source.text[tree.offset(span.start):tree.offset(span.end)]
    if text.startswith("(") and text.endswith(")") and span.end.column > 0:
        wanted.append(Range(Position(span.start.line, span.start.column + 1), Position(span.end.line, span.end.column - 1)))
    for candidate in wanted:
        for node in tree.nodes_on_lines(candidate.start.line, candidate.start.line):
            if isinstance(node, cst.BaseExpression) and node in tree.positions and tree.span(node) == candidate:
                # One string of "a" "b" is no value of its own: a name in its place would not parse.
                return None if isinstance(tree.parents.get(node), cst.ConcatenatedString) else node
    return None


def trimmed(tree: PythonTree, span: Range) -> Range:
    """``span`` without the spaces and line breaks at its ends (a selection often takes them)."""
    text = tree.source.text
    start, end = tree.offset(span.start), tree.offset(span.end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Range(_position(tree, start), _position(tree, end))


def _position(tree: PythonTree, offset: int) -> Position:
    starts = tree.source.line_starts
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return Position(low, offset - starts[low])


def statement_of(tree: PythonTree, node: cst.CSTNode) -> cst.BaseStatement:
    """The statement, directly in a block or the module, that holds ``node``."""
    for ancestor in tree.ancestors(node):
        if isinstance(ancestor, cst.BaseStatement) and isinstance(tree.parents.get(ancestor), (cst.IndentedBlock, cst.Module)):
            return ancestor
    raise CannotExtractHere("the selection is not inside a statement of a block; select code inside a function or module body")


def first_line(tree: PythonTree, statement: cst.BaseStatement) -> int:
    """The 0-based line a statement starts on, its decorators included."""
    line = tree.span(statement).start.line
    for decorator in getattr(statement, "decorators", ()):
        line = min(line, tree.span(decorator).start.line)
    return line


def evaluation_key(tree: PythonTree, statement: cst.BaseStatement, node: cst.CSTNode) -> tuple[Position, int, Position]:
    """Orders the nodes of one statement as Python evaluates them: small statements in turn and,
    within an assignment, the value before its targets; otherwise left to right."""
    small: cst.CSTNode = statement
    inside_value = True
    chain = [node, *tree.ancestors(node)]
    for index, ancestor in enumerate(chain):
        if isinstance(ancestor, (cst.Assign, cst.AnnAssign)) and index > 0:
            small = ancestor
            inside_value = chain[index - 1] is ancestor.value
            break
        if ancestor is statement:
            break
    return tree.span(small).start, 0 if inside_value or small is statement else 1, tree.span(node).start


def effects_before(tree: PythonTree, statement: cst.BaseStatement, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``statement``'s own line(s) that may change state and that Python evaluates
    before ``node`` (the calls ``node`` is an argument of run after it, so they are not among them)."""
    header = _header_nodes(statement)
    enclosing = set(tree.ancestors(node))
    inside = set(nodes_within(node))
    key = evaluation_key(tree, statement, node)
    found: list[cst.CSTNode] = []
    for part in header:
        for candidate in nodes_within(part):
            if candidate in enclosing or candidate in inside or candidate not in tree.positions:
                continue
            if (isinstance(candidate, EFFECTS) or (isinstance(candidate, cst.AsName) and isinstance(tree.parents.get(candidate), cst.WithItem))) \
                    and evaluation_key(tree, statement, candidate) < key:
                found.append(candidate)
    return found


def _header_nodes(statement: cst.BaseStatement) -> list[cst.CSTNode]:
    """What a statement evaluates itself, without the blocks it holds."""
    if isinstance(statement, cst.SimpleStatementLine):
        return [statement]
    blocks = (cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)
    return [child for child in statement.children if not isinstance(child, blocks) and not (
        isinstance(statement, cst.If) and child is statement.orelse)]


def observes_state(node: cst.CSTNode) -> bool:
    return any(isinstance(part, OBSERVERS) for part in nodes_within(node))


def has_effects(node: cst.CSTNode) -> bool:
    return any(isinstance(part, EFFECTS) for part in nodes_within(node))


def read_names(tree: PythonTree, node: cst.CSTNode) -> list[cst.Name]:
    return [part for part in tree.within(node) if isinstance(part, cst.Name) and tree.contexts.get(part) is ExpressionContext.LOAD]


_DYNAMIC_LOCALS = frozenset({"locals", "vars", "eval", "exec"})


def reads_locals_dynamically(root: cst.CSTNode) -> str | None:
    """The call (``locals()``, ``vars()``, ``eval``, ``exec``) through which code in ``root`` may
    read its function's local variables by name, or None: moving or removing one would change
    what that call sees."""
    for node in nodes_within(root):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _DYNAMIC_LOCALS:
            if node.func.value != "vars" or not node.args:
                return f"{node.func.value}()"
    return None


def name_in_use(tree: PythonTree, name: str, within: cst.CSTNode) -> bool:
    """Whether ``within`` holds an identifier ``name`` (a read, a binding, a parameter): a new
    binding of it there could change what one of them means. Attribute names and keywords do not count."""
    for node in tree.within(within):
        if isinstance(node, cst.Name) and node.value == name:
            parent = tree.parents.get(node)
            if isinstance(parent, cst.Attribute) and parent.attr is node or isinstance(parent, cst.Arg) and parent.keyword is node:
                continue
            return True
    return False


def resolves_to(tree: PythonTree, node: cst.Name, scope: Scope) -> bool:
    """Whether the name at ``node`` means ``scope``'s variable of that name. Worked out from the
    scopes, not from LibCST's access links, which tie a read only to the bindings above it (a loop
    reading a variable that a later line of its body binds would be missed)."""
    found = tree.scopes.get(node)
    first = True
    while found is not None and found is not scope:
        # A class body's names are not seen from the functions inside it.
        if (first or not isinstance(found, ClassScope)) and found.assignments[node.value]:
            return False
        first = False
        parent = found.parent
        found = parent if parent is not found else None
    return found is scope


def names_meaning(tree: PythonTree, scope: Scope, name: str, within: cst.CSTNode) -> list[cst.Name]:
    """Every ``name`` in ``within`` that is read (or deleted, or augmented) and means ``scope``'s variable."""
    found = []
    for node in tree.within(within):
        if isinstance(node, cst.Name) and node.value == name and node in tree.positions:
            context = tree.contexts.get(node)
            augmented = isinstance(tree.parents.get(node), cst.AugAssign)
            if (context in (ExpressionContext.LOAD, ExpressionContext.DEL) or augmented) and resolves_to(tree, node, scope):
                found.append(node)
    return found


def binding_scope(tree: PythonTree, node: cst.Name) -> Scope | None:
    """The scope whose variable the name at ``node`` means (None: a builtin or an unbound name)."""
    found = tree.scopes.get(node)
    first = True
    while found is not None:
        if (first or not isinstance(found, ClassScope)) and found.assignments[node.value]:
            return found
        first = False
        parent = found.parent
        found = parent if parent is not found else None
    return None

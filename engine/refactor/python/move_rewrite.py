"""The two ends of a Python move as new module texts: the source without the moved code (and
without the imports only it used), the destination with the code and the imports it needs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst

from engine.refactor.python.move_source import SourceAnalysis, comments_above
from engine.refactor.python.cst_edits import (
    AllEditor,
    ModuleName,
    TopLevelStatement,
    alias_as,
    blank_lines_above,
    bound_name,
    dotted,
    import_module_of,
    insert_top_level,
    is_definition,
    is_import_line,
    is_docstring,
    parse_simple_statement,
    pruned_import_line,
)

_Node = TypeVar("_Node", bound=cst.CSTNode)


def rewrite_source(
    analysis: SourceAnalysis, name: str, back_import: cst.SimpleStatementLine | None, *, local: bool,
    keep_in_all: bool = False,
) -> str:
    """The source after the move. ``back_import`` (``from dest import name``) goes at module
    level, or with ``local`` at the top of each function that still uses the name. Its
    ``__all__`` loses the name unless ``keep_in_all`` (a re-export)."""
    editor = _SourceEditor(analysis, back_import if local else None)
    tree = analysis.tree.visit(editor)
    kept_comments = [line for line in editor.pending if line.comment is not None]
    if kept_comments:
        tree = tree.with_changes(footer=[*(editor.pending if editor.kept_any else kept_comments), *tree.footer])
    if not keep_in_all:
        tree = tree.visit(AllEditor(remove=name))
    if back_import is not None and not local:
        tree = insert_top_level(tree, [back_import])
    if not tree.body and not tree.header and not tree.footer:
        return ""  # LibCST writes a lone line break for an empty module
    return tree.code


class _SourceEditor(cst.CSTTransformer):
    def __init__(self, analysis: SourceAnalysis, local_import: cst.SimpleStatementLine | None) -> None:
        self.analysis = analysis
        self.moved = {id(s) for s in analysis.moved}
        self.top = {id(s) for s in analysis.tree.body}
        self.local_import = local_import
        self.pending: list[cst.EmptyLine] = []
        """Section comments above the moved code (and lines above removed imports): they stay,
        above whatever follows."""
        self.kept_any = False
        """Whether a top-level statement is kept before this point (else the next one loses its blank lines)."""

    def on_leave(
        self, original: _Node, updated: _Node
    ) -> _Node | cst.RemovalSentinel | cst.FlattenSentinel[_Node]:
        result = super().on_leave(original, updated)
        # A module's body holds nothing else: the check only narrows the type.
        if id(original) not in self.top or not isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return result
        if id(original) in self.moved:
            if original is self.analysis.moved[0]:
                self.pending += _kept_lines(original, self.analysis.carried_comments)
            return cst.RemovalSentinel.REMOVE
        if isinstance(result, cst.RemovalSentinel):
            # An import line that went: its blank lines and comments stay for what follows.
            self.pending += list(original.leading_lines)
            return result
        if isinstance(result, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            lines = list(result.leading_lines)
            if self.pending:
                only_blank = all(line.comment is None for line in self.pending)
                if not (only_blank and lines and lines[0].comment is None):
                    lines = [*self.pending, *lines]
                self.pending = []
            if not self.kept_any:
                # Now first in the module: no blank lines above it.
                while lines and lines[0].comment is None:
                    lines.pop(0)
            if lines != list(result.leading_lines):
                result = result.with_changes(leading_lines=lines)
            self.kept_any = True
        return result

    def leave_If(self, original: cst.If, updated: cst.If) -> cst.If | cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE if id(original) in self.analysis.emptied_blocks else updated

    def leave_Try(self, original: cst.Try, updated: cst.Try) -> cst.Try | cst.RemovalSentinel:
        return cst.RemovalSentinel.REMOVE if id(original) in self.analysis.emptied_blocks else updated

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if self.local_import is None or id(original) not in self.analysis.runtime_uses:
            return updated
        body = _indented(updated.body)
        statements = list(body.body)
        index = 1 if statements and is_docstring(statements[0]) else 0
        statements.insert(index, self.local_import)
        return updated.with_changes(body=body.with_changes(body=statements))

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.RemovalSentinel:
        return pruned_import_line(updated, [self.analysis.unused_after.get(id(before)) for before in original.body])


def _indented(body: cst.BaseSuite) -> cst.IndentedBlock:
    """A function's body as an indented block: ``def f(): return x`` gets one to take a line above."""
    if isinstance(body, cst.IndentedBlock):
        return body
    if isinstance(body, cst.SimpleStatementSuite):
        return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=list(body.body))])
    raise TypeError(f"unknown suite: {type(body).__name__}")  # LibCST has no third kind


def _kept_lines(statement: TopLevelStatement, carried: list[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """The lines above the moved code that do not move with it: up to the last section comment."""
    lines = list(statement.leading_lines)[: len(statement.leading_lines) - len(carried)]
    while lines and lines[-1].comment is None:
        lines.pop()
    return lines


def rewrite_dest(
    tree: cst.Module, analysis: SourceAnalysis, imports: list[cst.SimpleStatementLine],
    type_checking: list[cst.SimpleStatementLine], *, export: str | None, create_all: bool, guard: str = "TYPE_CHECKING",
    try_blocks: Sequence[cst.Try] = (),
) -> str:
    """The destination with the moved code at its end, or before the first statement that uses
    it when the module is imported (a decorator, a default, a base, a class body, module-level
    code: at the end, that use would raise NameError), and the imports it needs after its own."""
    moved = list(analysis.moved)
    body = list(tree.body)
    at = first_import_time_use(body, with_readers(body, moved_names(moved)))
    if at is None:
        gap = [cst.EmptyLine(), cst.EmptyLine()] if body else []
        moved[0] = moved[0].with_changes(leading_lines=[*gap, *analysis.carried_comments])
        tree = tree.with_changes(body=[*body, *moved])
    else:
        # The moved code takes the user's place, blank lines included; the user gets two above it.
        moved[0] = moved[0].with_changes(leading_lines=[*body[at].leading_lines, *analysis.carried_comments])
        user = body[at].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        tree = tree.with_changes(body=[*body[:at], *moved, user, *body[at + 1:]])
    added: list[TopLevelStatement] = list(imports)
    block = type_checking_block(tree)
    if type_checking and block is not None:
        # The destination's own `if TYPE_CHECKING:` block takes them: one block, not two.
        merged = cst.IndentedBlock(body=[*getattr(block.body, "body", []), *type_checking])
        tree = tree.with_changes(body=[s.with_changes(body=merged) if s is block else s for s in tree.body])
    elif type_checking:
        added.append(cst.If(
            test=cst.parse_expression(guard),
            body=cst.IndentedBlock(body=type_checking),
            leading_lines=[cst.EmptyLine()],
        ))
    for fallback in try_blocks:
        # After the plain imports, apart from them, with the comment lines right above it in the source.
        comments = comments_above(fallback)
        added.append(fallback.with_changes(leading_lines=[*([cst.EmptyLine()] if added else []), *comments]))
    tree = insert_top_level(tree, added)
    if analysis.future_annotations and not _has_future_annotations(tree):
        body = list(tree.body)
        index = 1 if body and is_docstring(body[0]) else 0
        future = cst.parse_statement("from __future__ import annotations\n")
        if index < len(body) and not is_import_line(body[index]):
            # Code right after the future import: the blank lines PEP 8 asks for after imports.
            body[index] = blank_lines_above(body[index], 2 if is_definition(body[index]) else 1)
        elif index < len(body) and not body[index].leading_lines:
            body[index] = body[index].with_changes(leading_lines=[cst.EmptyLine()])
        tree = tree.with_changes(body=[*body[:index], future, *body[index:]])
    if export is not None:
        editor = AllEditor(add=export)
        tree = tree.visit(editor)
        if not editor.changed and create_all:
            listing = parse_simple_statement(f'__all__ = ["{export}"]\n', config=tree.config_for_parsing)
            if tree.body and is_import_line(tree.body[0]):
                listing = listing.with_changes(leading_lines=[cst.EmptyLine()])
            tree = insert_top_level(tree, [listing])
    return tree.code


def type_checking_block(tree: cst.Module) -> cst.If | None:
    """The module's top-level ``if TYPE_CHECKING:`` (or ``if t.TYPE_CHECKING:``) block without an ``else``."""
    for statement in tree.body:
        if isinstance(statement, cst.If) and _is_type_checking(statement.test) and statement.orelse is None \
                and isinstance(statement.body, cst.IndentedBlock):
            return statement
    return None


def _has_future_annotations(tree: cst.Module) -> bool:
    return any(
        isinstance(small, cst.ImportFrom) and dotted(small.module) == "__future__"
        for statement in tree.body if isinstance(statement, cst.SimpleStatementLine) for small in statement.body
    )


@dataclass
class Bindings:
    names: dict[str, str | None] = field(default_factory=dict)
    """Names a module binds at import time → the absolute name an import binds them to
    (``pkg.mod.name``, ``pkg.mod``; ``a`` for ``import a.b``), or None for its own definitions."""
    plain_imports: set[str] = field(default_factory=set)
    """Modules imported without an alias (``import a.b`` → ``a.b``)."""
    type_checking: Bindings | None = None
    """What the module binds only for type checkers (``if TYPE_CHECKING:``): absent at run time."""


def top_level_bindings(tree: cst.Module, module: ModuleName) -> Bindings:
    found = Bindings(type_checking=Bindings())

    def visit(statements: Iterable[cst.CSTNode], into: Bindings) -> None:
        for statement in statements:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                into.names[statement.name.value] = None
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    _bind_small(small, module, into)
            elif isinstance(statement, cst.If) and _is_type_checking(statement.test) and found.type_checking is not None:
                visit(getattr(statement.body, "body", []), found.type_checking)
                if statement.orelse is not None:
                    visit([statement.orelse] if isinstance(statement.orelse, cst.If) else getattr(statement.orelse.body, "body", []), into)
            elif isinstance(statement, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
                for child in statement.children:
                    if isinstance(child, cst.IndentedBlock):
                        visit(child.body, into)
                    elif isinstance(child, (cst.Else, cst.ExceptHandler, cst.Finally, cst.If)):
                        visit([child] if isinstance(child, cst.If) else getattr(child.body, "body", []), into)

    visit(tree.body, found)
    return found


def _is_type_checking(test: cst.BaseExpression) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING`` (any module alias)."""
    return (isinstance(test, cst.Name) and test.value == "TYPE_CHECKING") or (
        isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING")


def _bind_small(small: cst.BaseSmallStatement, module: ModuleName, found: Bindings) -> None:
    names = found.names
    if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
        level, written = import_module_of(small)
        absolute = module.absolute(level, written)
        for alias in small.names:
            names[bound_name(alias)] = f"{absolute}.{dotted(alias.name)}"
    elif isinstance(small, cst.Import):
        for alias in small.names:
            imported = dotted(alias.name) or ""
            names[bound_name(alias)] = imported if alias_as(alias) else bound_name(alias)
            if alias_as(alias) is None:
                found.plain_imports.add(imported)
    elif isinstance(small, cst.Assign):
        for target in small.targets:
            if isinstance(target.target, cst.Name):
                names[target.target.value] = None
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and isinstance(small.target, cst.Name):
        names[small.target.value] = None


def moved_names(moved: Sequence[cst.BaseStatement]) -> set[str]:
    """The names the moved statements bind (a definition, its overloads, a constant)."""
    names: set[str] = set()
    for statement in moved:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                    [small.target] if isinstance(small, cst.AnnAssign) else [])
                names |= {t.value for t in targets if isinstance(t, cst.Name)}
    return names


def with_readers(body: Sequence[cst.BaseStatement], names: set[str]) -> set[str]:
    """``names`` and the module's own top-level functions and classes that read one of them anywhere
    (their bodies too), and those that read these, and so on: running one of them at import time
    (a metaclass, a base, a decorator, a module-level call) needs the names defined by then
    (jmespath's ``class Functions(metaclass=FunctionRegistry)``, whose ``__init__`` calls ``get_methods``)."""
    found = set(names)
    definitions = [s for s in body if isinstance(s, (cst.FunctionDef, cst.ClassDef))]
    while True:
        more = {d.name.value for d in definitions if d.name.value not in found and _reads_anywhere(d, found)}
        if not more:
            return found
        found |= more


def _reads_anywhere(node: cst.CSTNode, names: set[str]) -> bool:
    found = False

    class Find(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            nonlocal found
            found = found or name.value in names

    node.visit(Find())
    return found


def first_import_time_use(body: Sequence[cst.BaseStatement], names: set[str]) -> int | None:
    """The index of the first top-level statement that reads one of ``names`` when the module
    is imported: anything but a function body (and, in a class, its methods' bodies)."""
    for index, statement in enumerate(body):
        if any(_reads(part, names) for part in _import_time_parts(statement)):
            return index
    return None


def _import_time_parts(statement: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(statement, cst.FunctionDef):
        return [*statement.decorators, statement.params, *([statement.returns] if statement.returns else [])]
    if isinstance(statement, cst.ClassDef):
        parts: list[cst.CSTNode] = [*statement.decorators, *statement.bases, *statement.keywords]
        for inner in getattr(statement.body, "body", []):
            parts += _import_time_parts(inner)
        return parts
    return [statement]


def _reads(node: cst.CSTNode, names: set[str]) -> bool:
    found = False

    class Find(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            nonlocal found
            found = found or name.value in names

        def visit_FunctionDef(self, function: cst.FunctionDef) -> bool:
            # A function nested in module-level code: its decorators and defaults run, its body not.
            for part in _import_time_parts(function):
                part.visit(self)
            return False

        def visit_Lambda(self, lambda_: cst.Lambda) -> bool:
            return False

    node.visit(Find())
    return found

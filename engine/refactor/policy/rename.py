"""``rename``: a symbol and every use of it, or the parameter or local at FILE:LINE:COL.

The policy around the rename itself (engine.refactor.rename): which declarations go together
(an overload stack, the same method across its class hierarchy, stub twins), which names it
must not take (a sibling's), and what the graph knows of the name (GraphFacts) for the passes
the server cannot see (engine/refactor/python/rename_passes.py: keyword arguments of a renamed
parameter, uses by name in strings, mirror modules, run-time subclasses, attribute-name lists).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.errors import BaseUsesAttribute, GraftError, ServiceUnavailable, SymbolNotFound, UsageError
from engine.graph.queries import NodeRef
from engine.languages import ImportStyle, language_of, profile_of
from engine.names import PositionAddress, SymbolAddress, parse_address
from engine.positions import Position, split_lines
from engine.refactor import language_passes, rename, skipped_files
from engine.refactor.pass_protocol import GraphFacts, RenameRequest
from engine.refactor.python.parameter_address import parameter_position
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.self_assignments import first_assignment_on_self, uses_on_self
from engine.refactor.typescript.visibility import files_to_show, same_project
from engine.symbols import Symbol, SymbolKind

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.rename_symbol import Rename


def plan(operation: Rename, context: PlanContext) -> RefactorPlan:
    parsed = parse_address(operation.address)
    if isinstance(parsed, PositionAddress) and parsed.column is not None:
        return _rename_at(operation, context, parsed.file, Position(parsed.line - 1, parsed.column - 1))
    if isinstance(parsed, SymbolAddress) and (parameter := parameter_position(context, parsed)) is not None:
        return _rename_at(operation, context, parameter.file, parameter.position)  # `func/param`: the parameter's own path
    family = context.resolve_binding(parsed)
    symbol = family[-1]  # an overload stack's implementation, a property's last accessor
    rename.check_name(operation.new_name, language_of(symbol.file))
    rename.check_clash(family, _siblings(context, symbol), operation.new_name)
    rename.check_not_compiled(context.workspace, symbol.file)
    # Each accessor of a property reaches the same base attribute: one target each.
    targets = list(dict.fromkeys(target for member in family for target in _rename_targets(context, member)))
    facts = GraphFacts(context, symbol=symbol, mirrors=operation.mirrors) if _graph_sees_uses(symbol.file) else None
    return _planned(operation, context, targets, symbol.name, facts, _dotted_path(context, symbol))


def _rename_at(operation: Rename, context: PlanContext, file: str, position: Position) -> RefactorPlan:
    """The name at a position: a parameter or local (the server's rename, plus keyword arguments)."""
    line = split_lines(context.workspace.read(file).text)[position.line] if position.line >= 0 else ""
    match = next((m for m in re.finditer(r"[\w$]+", line) if m.start() <= position.column < m.end()), None)
    if match is None:
        raise SymbolNotFound(f"no name at {operation.address}")
    rename.check_name(operation.new_name, language_of(file))
    # Here, not at the top: LibCST's import is slow and would delay every cold rename's first
    # request to its server, and only a rename by position may be a parameter's.
    from engine.refactor.python import keyword_arguments

    parameter = keyword_arguments.parameter_at(context.workspace, file, position) if _graph_sees_uses(file) else None
    facts = GraphFacts(context, parameter=parameter) if parameter is not None else None
    return _planned(operation, context, [rename.RenameTarget(file, position)], match.group(), facts, None)


def _planned(
    operation: Rename, context: PlanContext, targets: list[rename.RenameTarget], old_name: str,
    facts: GraphFacts | None, dotted: str | None,
) -> RefactorPlan:
    if old_name == operation.new_name:
        raise UsageError(f"{operation.address} is already called {operation.new_name}")
    if context.require_server and context.services is None:
        raise ServiceUnavailable("no language-server support is installed (the lsp_pool package is missing)")
    queries = context.graph()
    begun = language_passes.begun_rename(targets[0].file, context, old_name, operation.new_name) \
        if context.use_server and context.services is not None else None

    def planned() -> RefactorPlan:
        if context.use_server and context.services is not None:
            shown = files_to_show(context, [old_name], queries.importing_files)  # TypeScript: every project too
            context.services.show_importers(sorted({target.file for target in targets}), shown, same_project(context))
        return rename.plan_rename(RenameRequest(
            context.workspace, context.services, tuple(targets), old_name, operation.new_name, use_server=context.use_server,
            require_server=context.require_server, text=operation.text, dotted=dotted, files=tuple(queries.project.facts),
            listing=context.workspace_files, words=context.file_words(), include_docs=operation.include_docs, facts=facts,
            meanwhile=begun.meanwhile if begun is not None else None,
        ))

    made = skipped_files.checked(context, targets[0].file, [old_name], f"renaming {old_name} to {operation.new_name}",
                                 operation.strict, planned)
    return language_passes.finished(made, context, operation, targets[0].file, begun)


def _rename_targets(context: PlanContext, symbol: Symbol) -> list[rename.RenameTarget]:
    """The symbol, the same method everywhere in its class hierarchy, and the stub twin of each."""
    declarations = [symbol]
    # An attribute set on self in a subclass is the base's attribute too: fields have a hierarchy as methods do.
    if symbol.kind in (SymbolKind.METHOD, SymbolKind.PROPERTY, SymbolKind.FIELD) and _graph_sees_uses(symbol.file):
        for ref in _hierarchy(context, symbol):
            try:
                found = context.resolve(parse_address(f"{ref.path}:{ref.name_path}"))
            except GraftError:
                continue
            if found.address != symbol.address:
                declarations.append(found)
    targets = []
    for declaration in declarations:
        targets.append(rename.RenameTarget(declaration.file, declaration.selection_range.start))
        stub = declaration.file[:-3] + ".pyi" if declaration.file.endswith(".py") else None
        if stub is not None and (context.workspace.root / stub).is_file():
            twins = [s for top in context.extractor.extract(context.workspace.read(stub)).symbols for s in top.walk()
                     if s.name_path == declaration.name_path]
            targets += [rename.RenameTarget(stub, twin.selection_range.start) for twin in twins]
    if symbol.kind in (SymbolKind.PROPERTY, SymbolKind.FIELD) and _graph_sees_uses(symbol.file):
        # After the symbol's own target: the first target is the rename's primary one.
        targets += _assigned_in_subclasses(context, symbol, {(d.file, d.name_path) for d in declarations})
    if symbol.kind in (SymbolKind.METHOD, SymbolKind.PROPERTY, SymbolKind.FIELD) and _graph_sees_uses(symbol.file):
        # A property is a method to the syntax trees: the base's attribute it overrides is the same one.
        declared = {(d.file, d.name_path) for d in declarations}
        targets += [t for t in _assigned_in_bases(context, symbol, declared) if t not in targets]
    return targets


def _hierarchy(context: PlanContext, symbol: Symbol) -> list[NodeRef]:
    """The same member in the class hierarchy, as the graph knows it. A member the trees do not
    list (an attribute only set on self in a method, which the server's outline names) has no
    node: the server renames it from its declaration, and subclasses' assignments are added below."""
    try:
        return context.graph().hierarchy_methods(f"{symbol.file}:{symbol.name_path}")
    except SymbolNotFound:
        return []


def _assigned_in_subclasses(context: PlanContext, symbol: Symbol, declared: set[tuple[str, str]]) -> list[rename.RenameTarget]:
    """The member declared again by assignment on self in a subclass that has no declaration of
    it in its body (see engine.refactor.python.self_assignments)."""
    owner = symbol.name_path.rpartition("/")[0]
    try:
        below = context.graph().subclasses(f"{symbol.file}:{owner}") if owner else []
    except SymbolNotFound:
        below = []  # a class the trees do not list
    targets = []
    for cls in below:
        if cls.name_path is None or (cls.path, f"{cls.name_path}/{symbol.name}") in declared:
            continue
        position = first_assignment_on_self(context.workspace.read(cls.path).text, cls.name_path.split("/"), symbol.name)
        if position is not None:
            targets.append(rename.RenameTarget(cls.path, position))
    return targets


def _assigned_in_bases(context: PlanContext, symbol: Symbol, declared: set[tuple[str, str]]) -> list[rename.RenameTarget]:
    """A property (or field) that overrides an attribute its base sets on self (``self._x = x``
    in ``__init__``): one attribute in the MRO, so the base's assignment and uses, and those of
    every class below that base, follow the rename. A base that only uses the attribute, set
    by its subclasses, is refused (BaseUsesAttribute)."""
    queries = context.graph()
    owner = symbol.name_path.rpartition("/")[0]
    try:
        above = queries.superclasses(f"{symbol.file}:{owner}") if owner else []
    except SymbolNotFound:
        above = []  # a class the trees do not list
    targets: list[rename.RenameTarget] = []
    setters: list[NodeRef] = []
    for cls in above:
        if cls.name_path is None or (cls.path, f"{cls.name_path}/{symbol.name}") in declared:
            continue  # declared in its body: the hierarchy's own target
        text = context.workspace.read(cls.path).text
        position = first_assignment_on_self(text, cls.name_path.split("/"), symbol.name)
        if position is not None:
            targets.append(rename.RenameTarget(cls.path, position))
            setters.append(cls)
        elif uses_on_self(text, cls.name_path.split("/"), symbol.name):
            raise BaseUsesAttribute(
                f"{cls.path}:{cls.name_path} uses self.{symbol.name} without setting it, and {symbol.address} provides it: "
                f"renaming one leaves the other (and any other class that provides it); rename by hand or give the base a declaration")
    for base in setters:
        # A sibling of the symbol's class that sets the base's attribute again shares it too.
        for cls in queries.subclasses(base.address):
            if cls.name_path is None or cls.name_path == owner and cls.path == symbol.file or (cls.path, f"{cls.name_path}/{symbol.name}") in declared:
                continue
            position = first_assignment_on_self(context.workspace.read(cls.path).text, cls.name_path.split("/"), symbol.name)
            if position is not None and rename.RenameTarget(cls.path, position) not in targets:
                targets.append(rename.RenameTarget(cls.path, position))
    return targets


def _dotted_path(context: PlanContext, symbol: Symbol) -> str | None:
    """``pkg.mod.Name`` (or ``pkg.mod.Class.method``) for a Python symbol, as strings name it."""
    kind = profile_of(symbol.file)
    if kind is None or kind.imports is not ImportStyle.PYTHON:
        return None  # only Python strings name a symbol by its dotted module path
    module = context.graph().project.module_name(symbol.file)
    return f"{module}.{'.'.join(s.name for s in symbol.path)}" if module else None


def _graph_sees_uses(path: str) -> bool:
    """Whether the graph resolves this file's names (Python): the passes below rest on it."""
    kind = profile_of(path)
    return kind is not None and kind.graph_sees_uses


def _siblings(context: PlanContext, symbol: Symbol) -> list[Symbol]:
    parent_path = symbol.path[:-1]
    return [s for top in context.outline(symbol.file).symbols for s in top.walk() if s.path[:-1] == parent_path]

"""``delete``: a symbol nothing else refers to. Refused, with every place listed, while anything
outside it does. An overload stack or a property's accessors go together (one name in Python).

References come from the server, else from the graph; the graph resolves uses by name only
where the language's profile says so, and there every code use by name counts too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from engine.errors import BaseUnresolved, DefinitionsApart, OverridesBase, ServiceUnavailable
from engine.languages import language_of, profile_of
from engine.names import parse_address
from engine.positions import Range, split_lines
from engine.refactor import symbol_edits
from engine.refactor.corpus import Corpus
from engine.refactor.go import interface_methods
from engine.refactor.python.name_uses import name_uses
from engine.refactor.python.overrides import overridden_methods
from engine.refactor.python import unused_imports
from engine.refactor.plan import RefactorPlan
from engine.refactor.typescript.visibility import files_to_show, in_family, refuse_unseen_mentions
from engine.symbols import Source, Symbol

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext
    from engine.refactor.operations.safe_delete import Delete


def plan(operation: Delete, context: PlanContext) -> RefactorPlan:
    family = context.resolve_binding(parse_address(operation.address))
    source = context.workspace.read(family[0].file)
    symbol = _spanning(family, source.text)
    if context.use_server and context.services is not None and in_family(symbol.file):
        # tsserver sees the uses in a project only once a file of it is open (test configs).
        context.services.show_importers([symbol.file], files_to_show(context, [symbol.name], context.graph().importing_files))
    if language_of(symbol.file) == "python":
        _refuse_an_override(context, symbol)
    if language_of(symbol.file) == "go" and interface_methods.is_method(source.text, symbol.selection_range.start.line):
        corpus = Corpus(context.workspace, list(context.graph().project.facts), words=context.file_words())
        interface_methods.refuse_if_an_interface_may_call(corpus, symbol.address, symbol.name)
    found = context.references(_reference_address(context, family[-1]))
    if context.use_server and in_family(symbol.file):
        refuse_unseen_mentions(context, [symbol.name], {symbol.file, *(loc.file for loc in found.locations)},
                               f"deleting {symbol.address}")
    kind = profile_of(symbol.file)
    if found.source is Source.AST and not (kind is not None and kind.graph_sees_uses):
        # The graph resolves uses by name only where the profile says so; elsewhere it would miss them.
        raise ServiceUnavailable(
            f"cannot check the references to {symbol.address} without a language server for "
            f"{language_of(symbol.file) or 'this file'}; nothing was deleted"
        )
    outside = _outside_uses(context, symbol, [(loc.file, loc.range.start.line + 1) for loc in found.locations],
                            by_name=found.source is Source.AST)
    planned = symbol_edits.plan_delete(symbol, source, outside)
    if language_of(symbol.file) == "python":
        planned = unused_imports.pruned(context.workspace, planned, source)
    note = f"references checked by {found.source.value} ({found.confidence.value})"
    return replace(planned, warnings=[*planned.warnings, note, *found.notes])


def _refuse_an_override(context: PlanContext, symbol: Symbol) -> None:
    """A method that overrides a base's is referred to by that base (it calls it through
    ``self``), where no reference search finds it; a base that cannot be followed leaves that
    unknown, so it is refused too."""
    bases = overridden_methods(context.workspace, context.graph(), symbol)
    if bases.overridden:
        raise OverridesBase(
            f"{symbol.address} overrides " + ", ".join(str(o) for o in bases.overridden)
            + "; the base class calls it by name, so deleting it changes what the base does. Nothing was deleted;"
            " if the base's own behaviour is what you want, delete the override by hand and run the tests"
        )
    if bases.unresolved:
        raise BaseUnresolved(
            f"cannot tell whether {symbol.address} overrides a method of " + ", ".join(bases.unresolved)
            + " (the base could not be resolved, by the graph or by jedi); nothing was deleted. Check that the base's"
            " package is importable in the project's environment, or delete the method by hand"
        )


def _outside_uses(context: PlanContext, symbol: Symbol, references: list[tuple[str, int]], *, by_name: bool) -> list[str]:
    """``file:line (in enclosing)`` of every use outside the symbol itself. From the graph
    (``by_name``), every code use by name counts too: the graph knows calls, imports and bases,
    not every read of a name (decorators, default arguments, names passed along)."""
    project = context.graph().project
    own = range(symbol.range.start.line, symbol.range.last_line)

    def where(path: str, line: int) -> str:
        enclosing = project.enclosing_name(path, line)
        return f"{path}:{line}" + (f" (in {enclosing})" if enclosing else "")

    outside = [where(path, line) for path, line in references if not (path == symbol.file and line - 1 in own)]
    if by_name:
        listed = {entry.split(" ")[0] for entry in outside}
        for path, line in name_uses(Corpus(context.workspace, list(project.facts), words=context.file_words()), symbol.name, symbol.file, own):
            if f"{path}:{line}" not in listed:
                listed.add(f"{path}:{line}")
                outside.append(where(path, line) + " [by name]")
    exports = project.facts[symbol.file].exports if symbol.file in project.facts else None
    if exports and len(symbol.path) == 1 and symbol.name in exports:
        outside.append(f"{symbol.file} (listed in __all__)")
    return outside


def _reference_address(context: PlanContext, symbol: Symbol) -> str:
    """Where to ask for the symbol's references: its name path, or for TypeScript and JavaScript
    with a server, its name's position, so that the server answers even for a symbol the graph's
    parse lost (tree-sitter gives up on some valid files, immer's types-external.ts: the name path
    was "not found" though the server's outline has it)."""
    if not (context.use_server and context.services is not None and in_family(symbol.file)):
        return symbol.address
    start = symbol.selection_range.start
    return f"{symbol.file}:{start.line + 1}:{start.column + 1}"


def _spanning(family: list[Symbol], text: str) -> Symbol:
    """One symbol covering a family of definitions that stand together (only blank and comment
    lines between them); refused when they do not, since deleting the span would take other code."""
    if len(family) == 1:
        return family[0]
    lines = split_lines(text)
    for before, after in zip(family, family[1:]):
        between = lines[before.range.last_line:after.range.start.line]
        if any(line.strip() and not line.lstrip().startswith("#") for line in between):
            raise DefinitionsApart(
                f"the {len(family)} definitions of {family[0].name} do not stand together (other code lies between "
                f"lines {before.range.last_line} and {after.range.start.line + 1}); delete them one by one with "
                + ", ".join(m.address for m in family)
            )
    return replace(family[0], range=Range(family[0].range.start, family[-1].range.end))

"""What an address names: find, resolve (one symbol or the candidates), a binding's same-named
definitions, a symbol's text and its neighbours, and the graph's map of a folder."""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.errors import FileNotInWorkspace, GraftError, MalformedAddress, SymbolNotFound, UnsafePath
from engine.graph.queries import EdgeRef, OverviewEntry
from engine.languages import language_of, profile_of
from engine.names import Address, PositionAddress, SymbolAddress, parse_address
from engine.overloads import OverloadSet, overload_set
from engine.positions import split_lines
from engine.reading.outlines import SymbolsListing
from engine.reading.project_graph import GraphReading
from engine.resolve import ambiguous, checked_position, declaration_at, match_name_path, name_at, not_found, symbol_at
from engine.symbols import Symbol, SymbolKind
from engine.workspace import Skipped, SourceFile


@dataclass(frozen=True)
class FindResult:
    matches: list[Symbol]
    files_searched: int
    skipped: list[Skipped]


@dataclass(frozen=True)
class SymbolText:
    symbol: Symbol
    file: SourceFile
    first_line: int
    """1-based number of the first line in ``lines``."""
    lines: list[str]
    overloads: OverloadSet | None = None
    """The overload set the address named without ``[n]``, answered for its implementation."""


@dataclass(frozen=True)
class Explanation:
    """What a symbol is: its source, and its neighbours in the project graph."""

    text: SymbolText
    callers: list[EdgeRef]
    callees: list[EdgeRef]
    supertypes: list[EdgeRef]
    subtypes: list[EdgeRef]
    notes: list[str] = field(default_factory=list)
    """Where the callers and callees came from (the server's call hierarchy, outside Python), or
    why there are none to show."""


class AddressReading(GraphReading):
    """The Engine's answers to an address."""

    def find(self, address: Address, kind: SymbolKind | None = None) -> FindResult:
        """Every symbol an address names; workspace-wide when it names no file."""
        if isinstance(address, PositionAddress):
            return FindResult([self._symbol_at_position(address)], 1, [])
        listing = self._files_for(address)
        matches = match_name_path(listing.files, address.name_path, kind)
        if not matches:
            where = address.file or f"the workspace ({len(listing.files)} files)"
            wanted = str(address.name_path) + (f" of kind {kind.label}" if kind else "")
            raise not_found(listing.files, wanted, address.name_path, where)
        return FindResult(matches, len(listing.files), listing.skipped)

    def graph_target(self, target: str) -> str:
        """A graph query's target as the graph names it: ``FILE:LINE:COL`` on a name is the symbol
        that name refers to (as :meth:`find` says), since the graph has no file text to tell; a
        file path, a name path or ``FILE:LINE`` go to the graph as they are."""
        try:
            parsed = parse_address(target)
        except MalformedAddress:
            return target  # a file path, which the graph takes as it is
        if not isinstance(parsed, PositionAddress):
            queries = self.graph()
            try:
                nodes = queries.nodes_for(target)
            except GraftError:
                return target  # the graph's own refusal says it, as it did before
            chosen = self._overloads_among(target, [queries.ref(n).address for n in nodes]) if len(nodes) > 1 else None
            # An overload set's impact is its implementation's; other several-named targets go as they are.
            return chosen.implementation.address if chosen is not None else target
        if parsed.column is None:
            return target
        symbol = self.resolve(parsed)
        return f"{symbol.file}:{symbol.name_path}"

    def resolve(self, address: Address, kind: SymbolKind | None = None) -> Symbol:
        """Exactly one symbol, or a refusal that lists the candidates."""
        result = self.find(address, kind)
        if len(result.matches) > 1:
            raise ambiguous(str(address), result.matches)
        return result.matches[0]

    def overview(self, under: str = ".", depth: int = 1) -> list[OverviewEntry]:
        """The graph's map of a folder, the folder checked like any path a user gives: outside the
        workspace, through a symlink (not followed, so not indexed), or missing, it is refused
        rather than answered with an empty map."""
        relative, absolute = self.workspace.resolve(under)
        if absolute.is_symlink():
            raise UnsafePath(f"{relative} is a symlink; codegraft does not follow symlinked folders, so nothing under it is indexed")
        if not absolute.exists():
            raise FileNotInWorkspace(f"{relative} does not exist (paths are relative to the workspace root {self.workspace.root})")
        return self.graph().overview(relative, depth)

    def resolve_binding(self, address: Address) -> list[Symbol]:
        """What rename, move and delete act on: one symbol, or all the same-named definitions of
        one scope when the address names several without ``[n]`` (an ``@overload`` stack, a
        property's getter, setter and deleter, a function defined in both arms of an ``if``):
        in Python those are one name, and acting on one of them alone would break the others."""
        matches = self.find(address).matches
        first = matches[0]
        one_binding = all(
            m.file == first.file and m.name == first.name and m.path[:-1] == first.path[:-1] for m in matches
        )
        kind = profile_of(first.file)
        if len(matches) > 1 and not (one_binding and kind is not None and kind.one_name_definitions):
            raise ambiguous(str(address), matches)
        return sorted(matches, key=lambda m: m.range.start)

    def explain(self, address: Address) -> Explanation:
        """A symbol's source with what calls it, what it calls, its bases and subclasses."""
        found = self.read(address)
        queries = self.graph()
        key = f"{found.symbol.file}:{found.symbol.name_path}"
        served = self.served_graph()
        try:
            callers, callees = served.callers(key), served.callees(key)
        except GraftError as refusal:  # a type (not_callable), a server without call hierarchy, or none at all
            return Explanation(found, [], [], queries.supertypes(key), queries.subtypes(key),
                               [f"callers and callees not known ({refusal.code}): {refusal.message}"])
        notes = list(dict.fromkeys([*callers.notes, *callees.notes]))
        return Explanation(found, callers.rows, callees.rows, queries.supertypes(key), queries.subtypes(key), notes)

    def read(self, address: Address, kind: SymbolKind | None = None) -> SymbolText:
        """A symbol's source text, from the first decorator to the end of its body. An overload
        set named without ``[n]`` reads as its implementation, with the signatures listed."""
        matches = self.find(address, kind).matches
        chosen: OverloadSet | None = None
        if len(matches) > 1:
            chosen = overload_set(matches, self.workspace.read(matches[0].file).text)
            if chosen is None:
                raise ambiguous(str(address), matches)
        symbol = chosen.implementation if chosen is not None else matches[0]
        source = self.workspace.read(symbol.file)
        lines = split_lines(source.text)
        start, end = symbol.range.start.line, symbol.range.last_line
        return SymbolText(symbol, source, start + 1, lines[start:end], chosen)

    def _symbol_at_position(self, address: PositionAddress) -> Symbol:
        """``FILE:LINE`` is the innermost symbol around the line. ``FILE:LINE:COL`` on a name is
        what the name refers to (a declaration's own name is that declaration; a call's callee is
        the callee, not the function the call is in); on no name, the innermost symbol around it.
        A position past the end of the file or of its line is refused, never clamped."""
        source = self.workspace.read(address.file)
        position = checked_position(source.text, address)
        outline = self.outline(address.file)
        if address.column is None:
            return symbol_at(outline, address)
        declared = declaration_at(outline, position)
        if declared is not None:
            return declared
        if name_at(source, position) is None:
            return symbol_at(outline, address)
        return self._symbol_defined_for(address)

    def _symbol_defined_for(self, address: PositionAddress) -> Symbol:
        """The outline symbol the name at a position is defined as (its definition's declaration)."""
        answer = self.definition(str(address))
        for location in answer.locations:
            if location.inside_workspace and language_of(location.file) is not None:
                found = declaration_at(self.outline(location.file), location.range.start)
                if found is not None:
                    return found
        where = ", ".join(f"{loc.file}:{loc.range.start.line + 1}:{loc.range.start.column + 1}" for loc in answer.locations)
        raise SymbolNotFound(
            f"the name at {address} is defined at {where or 'no place the answer gives'}, which is no symbol of an outline "
            f"(a parameter, a local, a library's name?); {address.file}:{address.line} without a column names the "
            "symbol around the line"
        )

    def _files_for(self, address: SymbolAddress) -> SymbolsListing:
        if address.file is not None:
            return SymbolsListing([self.outline(address.file)], [])
        return self.symbols(".")

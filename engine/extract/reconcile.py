"""Filling in what a language server's symbols leave out, from the syntax tree of the same file.

Servers disagree on a symbol's full range: jedi starts a decorated function
at ``def``, clangd starts a template at the function, and none reports doc
comments. The symbol model promises full ranges with decorators and
attributes, so a served symbol borrows its start (only ever earlier) and its
doc range from the syntax-tree symbol with the same identifier position.

Servers also fold overloads: pyright lists only the implementation of a
``@typing.overload`` family. Overloads must stay addressable (``add[0]``), so
the missing members are taken from the syntax tree, each still labelled
``source: ast``. Signatures are syntax and come from the tree too. Otherwise,
which symbols exist, their names and their kinds stay the server's, with two
exceptions. A range the tree finds longer is the tree's (basedpyright gives a
multi-line ``__all__ = [ … ]`` its first line only, so ``read`` showed one line
and ``replace`` would have cut the statement). And in a file with syntax errors
a server may drop what follows the error (a class after it) while the tree,
which recovers, still has it: :func:`add_dropped` puts those back, labelled.
"""

from __future__ import annotations

from collections import Counter

from engine.extract import finalize
from engine.positions import Position, Range
from engine.symbols import Symbol, walk_all


def reconcile(served: list[Symbol], syntactic: list[Symbol]) -> list[Symbol]:
    twins = {symbol.selection_range.start: symbol for symbol in walk_all(syntactic)}
    _add_folded_overloads(served, syntactic, twins)
    for symbol in walk_all(served):
        twin = twins.get(symbol.selection_range.start)
        if twin is None:
            continue
        if twin.range.start < symbol.range.start and twin.range.end >= symbol.range.start:
            symbol.range = Range(twin.range.start, symbol.range.end)
        if twin.range.end > symbol.range.end and twin.range.start <= symbol.range.end:
            symbol.range = Range(symbol.range.start, twin.range.end)
        if symbol.doc_range is None:
            symbol.doc_range = twin.doc_range
        # A signature is syntax; the tree's is the same for every server (servers give a raw line or nothing).
        symbol.signature = twin.signature or symbol.signature
    return finalize(served)


def _add_folded_overloads(served: list[Symbol], syntactic: list[Symbol], twins: dict[Position, Symbol]) -> None:
    """Where the tree has several same-named siblings and the server one of them, add the others."""
    counts = Counter(symbol.name for symbol in syntactic)
    served_names = Counter(symbol.name for symbol in served)
    present = {symbol.selection_range.start for symbol in served}
    added = False
    for symbol in syntactic:
        if counts[symbol.name] > 1 and served_names[symbol.name] == 1 and symbol.selection_range.start not in present:
            served.append(symbol)
            added = True
    if added:
        served.sort(key=lambda symbol: symbol.range.start)
    for symbol in served:
        twin = twins.get(symbol.selection_range.start)
        if twin is not None and twin is not symbol and symbol.children:
            _add_folded_overloads(symbol.children, twin.children, twins)


def add_dropped(served: list[Symbol], syntactic: list[Symbol]) -> list[str]:
    """Add the symbols of the tree the server left out (each labelled by its own source, ``ast``),
    at every level; returns the name paths added. Only for files with syntax errors: elsewhere a
    server's omissions (locals it does not list) are its choice."""
    present = {symbol.selection_range.start: symbol for symbol in walk_all(served)}
    added: list[str] = []

    def visit(into: list[Symbol], tree: list[Symbol]) -> None:
        for symbol in tree:
            twin = present.get(symbol.selection_range.start)
            if twin is None:
                into.append(symbol)
                added.extend(s.name_path for s in symbol.walk())
            else:
                visit(twin.children, symbol.children)
        into.sort(key=lambda symbol: symbol.range.start)

    visit(served, syntactic)
    return added

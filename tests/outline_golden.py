"""A compact, reviewable rendering of a file's symbols, used as the expected-outline format.

One line per symbol::

    <indent><kind> <name path> <first>-<last> name@<line>:<col> [doc <first>-<last>]

Lines and columns are 1-based; columns count code points.
"""

from __future__ import annotations

from engine.extract import FileSymbols
from engine.symbols import Symbol


def render(listing: FileSymbols) -> str:
    lines = [f"# source={listing.source.value} confidence={listing.confidence.value}"]
    for symbol in listing.symbols:
        _render(symbol, 0, lines)
    return "\n".join(lines) + "\n"


def _render(symbol: Symbol, depth: int, out: list[str]) -> None:
    selection = symbol.selection_range.start
    text = (
        f"{'  ' * depth}{symbol.kind.label} {symbol.name_path} {symbol.range.first_line}-{symbol.range.last_line}"
        f" name@{selection.line + 1}:{selection.column + 1}"
    )
    if symbol.doc_range is not None:
        text += f" doc {symbol.doc_range.first_line}-{symbol.doc_range.last_line}"
    out.append(text)
    for child in symbol.children:
        _render(child, depth + 1, out)

"""The span of code an extract or inline acts on, from its three ways of being asked.

``FILE:LINE:COL-LINE:COL`` names it directly; a name path with ``--lines 12-18`` names whole
lines of that symbol; a name path with ``--match TEXT`` names the one place the text occurs in
that symbol (several places are refused with each one's range, to be given instead). A
position ``FILE:LINE:COL`` is an empty span there (inline points at a name). Nothing here knows a
language: the policies decide what the span must hold.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import AmbiguousMatch, MatchNotFound, PositionOutOfRange, Refused, UsageError
from engine.languages import profile_of
from engine.names import PositionAddress, RangeAddress, parse_span_address
from engine.positions import Position, Range, split_lines
from engine.resolve import checked_position
from engine.symbols import Symbol
from engine.workspace import SourceFile

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_LINES = re.compile(r"(\d+)(?:-(\d+))?")


@dataclass(frozen=True)
class Selection:
    source: SourceFile
    range: Range
    """0-based, code points, end exclusive; empty for a position."""
    symbol: Symbol | None = None
    """The symbol a name path named, when the span was asked for inside one."""

    @property
    def text(self) -> str:
        return text_of(self.source.text, self.range)

    def describe(self) -> str:
        start, end = self.range.start, self.range.end
        return f"{self.source.path}:{start.line + 1}:{start.column + 1}-{end.line + 1}:{end.column + 1}"


def select(context: PlanContext, address: str, lines: str = "", match: str = "") -> Selection:
    parsed = parse_span_address(address)
    if isinstance(parsed, RangeAddress):
        _no_refinement(address, lines, match)
        source = context.workspace.read(parsed.file)
        start = checked_position(source.text, PositionAddress(parsed.file, parsed.start_line, parsed.start_column))
        end = checked_position(source.text, PositionAddress(parsed.file, parsed.end_line, parsed.end_column))
        return Selection(source, Range(start, end))
    if isinstance(parsed, PositionAddress):
        _no_refinement(address, lines, match)
        source = context.workspace.read(parsed.file)
        if parsed.column is None:
            return Selection(source, _whole_lines(source.text, parsed.line, parsed.line))
        at = checked_position(source.text, parsed)
        return Selection(source, Range(at, at))
    symbol = context.resolve(parsed)
    source = context.workspace.read(symbol.file)
    within = symbol.range
    if lines:
        within = _lines_of(symbol, source.text, lines)
    if match:
        return Selection(source, _matched(source, within, match, symbol), symbol)
    return Selection(source, within, symbol)


class UnsupportedLanguage(Refused):
    code = "unsupported_language"


def python_only(selection: Selection, operation: str) -> None:
    """An operation codegraft implements itself for Python only: in another language it is refused,
    saying so (extract and inline reach TypeScript, JavaScript and Go through
    engine.refactor.code_actions before this is asked)."""
    language = profile_of(selection.source.path)
    if language is None or language.family != "python":
        name = language.id if language is not None else "this file's language"
        raise UnsupportedLanguage(f"{operation} is implemented for Python only; {selection.source.path} is {name}. "
                                  "Its language server's own code actions are not wired into codegraft yet; nothing was changed")


def python_files_naming(context: PlanContext, name: str, but: str) -> list[SourceFile]:
    """The workspace's Python files, ``but`` aside, whose text names ``name`` as a word: where an
    operation that changes a function's calls looks for them."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    found = []
    for path in context.workspace_files():
        language = profile_of(path)
        if path == but or language is None or language.family != "python":
            continue
        source = context.workspace.read(path)
        if word.search(source.text):
            found.append(source)
    return found


def text_of(text: str, span: Range) -> str:
    lines = split_lines(text)
    if span.start.line == span.end.line:
        return lines[span.start.line][span.start.column:span.end.column]
    middle = lines[span.start.line + 1:span.end.line]
    return "\n".join([lines[span.start.line][span.start.column:], *middle, lines[span.end.line][:span.end.column]])


def _no_refinement(address: str, lines: str, match: str) -> None:
    if lines or match:
        raise UsageError(f"{address} already names its place: --lines and --match refine a name path (FILE:Class/method)")


def _lines_of(symbol: Symbol, text: str, spec: str) -> Range:
    found = _LINES.fullmatch(spec.strip())
    if found is None:
        raise UsageError(f"--lines takes FIRST-LAST (1-based, inclusive), as in 12-18, not {spec!r}")
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) is not None else first
    if not symbol.range.first_line <= first <= last <= symbol.range.last_line:
        raise PositionOutOfRange(
            f"--lines {spec}: {symbol.name_path} spans lines {symbol.range.first_line}-{symbol.range.last_line} of {symbol.file}",
            symbol.file, first, None, symbol.range.last_line)
    return _whole_lines(text, first, last)


def _whole_lines(text: str, first: int, last: int) -> Range:
    """Lines ``first``..``last`` (1-based) from the first to the last character that is not a space."""
    lines = split_lines(text)
    if last > len(lines):
        raise PositionOutOfRange(f"line {last} is past the end of the file ({len(lines)} lines)", "", last, None, len(lines))
    start_line = lines[first - 1]
    end_line = lines[last - 1]
    return Range(Position(first - 1, len(start_line) - len(start_line.lstrip())), Position(last - 1, len(end_line.rstrip())))


def _matched(source: SourceFile, within: Range, match: str, symbol: Symbol) -> Range:
    starts = source.line_starts
    begin = starts[within.start.line] + within.start.column
    finish = starts[within.end.line] + within.end.column if within.end.line < len(starts) else len(source.text)
    region = source.text[begin:finish]
    found: list[Range] = []
    at = region.find(match)
    while at != -1:
        if _whole_words(region, at, at + len(match)):
            found.append(Range(_position(source, begin + at), _position(source, begin + at + len(match))))
        at = region.find(match, at + 1)
    if not found:
        raise MatchNotFound(f"{match!r} does not occur in {symbol.name_path} ({symbol.file}:{within.first_line}-{within.last_line}); "
                            "nothing was changed")
    if len(found) > 1:
        candidates = [Selection(source, span).describe() for span in found]
        raise AmbiguousMatch(f"{match!r} occurs {len(found)} times in {symbol.name_path}: give one of these ranges instead:\n  "
                             + "\n  ".join(candidates), candidates)
    return found[0]


def _whole_words(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] neither starts nor ends inside a word (``s`` is not found in ``items``)."""
    def word(char: str) -> bool:
        return char.isalnum() or char == "_"
    return not (start > 0 and word(text[start]) and word(text[start - 1])) and not (
        end < len(text) and word(text[end - 1]) and word(text[end]))


def _position(source: SourceFile, offset: int) -> Position:
    starts = source.line_starts
    line = bisect_right(starts, offset) - 1
    return Position(line, offset - starts[line])

"""The last resort: symbols from regular expressions, labelled low confidence.

Used for languages without a bundled grammar and for files whose syntax tree
is mostly errors. Nesting and extents are guessed from indentation, which
is right for conventionally formatted code and wrong otherwise; that is why
every symbol from here says ``confidence: low``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.positions import LineIndex, Position, Range, split_lines
from engine.symbols import TYPE_KINDS, Confidence, Source, Symbol, SymbolKind


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    kind: SymbolKind


def _p(expression: str, kind: SymbolKind) -> Pattern:
    return Pattern(re.compile(expression), kind)


_K = SymbolKind
_GENERIC: tuple[Pattern, ...] = (
    _p(r"^\s*(?:(?:export|pub(?:\([^)]*\))?|public|private|protected|internal|static|async|override|abstract|final|open)\s+)*"
       r"(?:def|function|func|fn|fun|sub|proc|procedure)\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_$][\w$]*[?!]?)", _K.FUNCTION),
    _p(r"^\s*(?:(?:export|pub(?:\([^)]*\))?|public|private|protected|internal|static|abstract|final|sealed|data|open)\s+)*"
       r"(?P<kw>class|struct|interface|enum|trait|module|object|record|protocol|namespace)\s+(?P<name>[A-Za-z_$][\w$]*)",
       _K.CLASS),
)

_BY_LANGUAGE: dict[str, tuple[Pattern, ...]] = {
    "python": (
        _p(r"^\s*(?:async\s+)?def\s+(?P<name>\w+)", _K.FUNCTION),
        _p(r"^\s*class\s+(?P<name>\w+)", _K.CLASS),
    ),
    "ruby": (
        _p(r"^\s*def\s+(?:self\.)?(?P<name>[\w]+[?!=]?)", _K.FUNCTION),
        _p(r"^\s*class\s+(?P<name>[A-Z]\w*)", _K.CLASS),
        _p(r"^\s*module\s+(?P<name>[A-Z]\w*)", _K.MODULE),
        _p(r"^\s*(?P<name>[A-Z][A-Z0-9_]*)\s*=", _K.CONSTANT),
    ),
    "lua": (_p(r"^\s*(?:local\s+)?function\s+(?:[\w.]+[.:])?(?P<name>\w+)", _K.FUNCTION),),
    "shellscript": (
        _p(r"^\s*(?:function\s+)?(?P<name>[A-Za-z_][\w-]*)\s*\(\)", _K.FUNCTION),
        _p(r"^\s*function\s+(?P<name>[A-Za-z_][\w-]*)", _K.FUNCTION),
    ),
}

_KEYWORD_KINDS = {
    "class": _K.CLASS, "struct": _K.STRUCT, "interface": _K.INTERFACE, "enum": _K.ENUM, "trait": _K.INTERFACE,
    "module": _K.MODULE, "object": _K.CLASS, "record": _K.STRUCT, "protocol": _K.INTERFACE,
    "namespace": _K.NAMESPACE,
}


class RegexExtractor:
    id = "regex"
    version = "1"

    def extract(self, file: str, language_id: str | None, data: bytes, index: LineIndex) -> list[Symbol]:
        patterns = _BY_LANGUAGE.get(language_id or "", ()) + _GENERIC
        lines = split_lines(data.decode("utf-8", errors="replace"))
        found: list[tuple[int, int, Symbol]] = []  # (indent, line number, symbol)
        for number, line in enumerate(lines):
            symbol = self._match(file, patterns, line, number)
            if symbol is not None:
                found.append((len(line) - len(line.lstrip()), number, symbol))
        return _nest(found, lines)

    @staticmethod
    def _match(file: str, patterns: tuple[Pattern, ...], line: str, number: int) -> Symbol | None:
        for pattern in patterns:
            match = pattern.regex.match(line)
            if match is None:
                continue
            kind = pattern.kind
            keyword = match.groupdict().get("kw")
            if keyword:
                kind = _KEYWORD_KINDS.get(keyword, kind)
            start, end = match.span("name")
            return Symbol(
                name=match.group("name"),
                kind=kind,
                file=file,
                range=Range(Position(number, 0), Position(number, len(line))),
                selection_range=Range(Position(number, start), Position(number, end)),
                source=Source.REGEX,
                confidence=Confidence.LOW,
                signature=line.strip()[:160],
            )
        return None


def _nest(found: list[tuple[int, int, Symbol]], lines: list[str]) -> list[Symbol]:
    """Nest symbols by indentation and extend each to the last line before a line indented no deeper."""
    top: list[Symbol] = []
    stack: list[tuple[int, Symbol]] = []
    for indent, number, symbol in found:
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack:
            parent = stack[-1][1]
            if symbol.kind is SymbolKind.FUNCTION and parent.kind in TYPE_KINDS | {SymbolKind.MODULE}:
                symbol.kind = SymbolKind.METHOD
            parent.children.append(symbol)
        else:
            top.append(symbol)
        stack.append((indent, symbol))
        symbol.range = Range(symbol.range.start, _block_end(lines, number, indent))
    return top


def _block_end(lines: list[str], start: int, indent: int) -> Position:
    last = start
    for number in range(start + 1, len(lines)):
        text = lines[number]
        if not text.strip():
            continue
        current = len(text) - len(text.lstrip())
        if current < indent or (current == indent and not text.lstrip().startswith(("}", "end", ")"))):
            break
        last = number
    return Position(last, len(lines[last]))

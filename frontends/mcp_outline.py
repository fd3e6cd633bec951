"""file_outline's answers: by default, a file's top level at a glance; with depth or kinds, a row
per symbol chosen.

The glance gives every top-level symbol with its first line and the most detail that fits the
budget, in steps: signatures whole with the docstring's first sentence; then the parameters'
names with the docstring; then the parameters' names alone; then names alone. Each class names
its members. The head says what a step left out and the max_chars that gives it all, so nothing
is dropped silently; rows are cut only when even names do not fit, and that is said too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from engine.api_surface import FileSymbols, Symbol
from frontends.mcp_views import DEFAULT_MAX_CHARS, View, bounded, checked_budget, left_out

GLANCE_MAX_CHARS = 1_200
"""The default outline's budget: a module's top level at a glance, its steps chosen to fit."""

_SIGNATURE_WIDTH = 120
"""A signature kept in a summary row, at most (the … says it was longer; read_symbol has it whole)."""
_GLANCE_DOC_WIDTH = 72
_SIGNATURE_END = re.compile(r"\s*:?\s*(#.*)?$")
"""A definition line's colon and trailing comment (``class _RangeWrapper: # private``), not part of its signature."""
_SHORT_SIGNATURE_WIDTH = 60
"""A class's or variable's signature kept once parameters are down to their names."""
_CALLABLE = frozenset({"function", "method", "constructor"})
_RECEIVERS = frozenset({"self", "cls", "this"})
_TYPE_FIRST = frozenset({"c", "cpp", "java", "csharp"})
"""Languages whose parameters give their type before their name."""
_OPEN, _CLOSE = "([{<", ")]}>"


@dataclass(frozen=True)
class _Step:
    signatures: bool
    """Signatures whole (else the parameters' names)."""
    docs: bool
    parameters: bool
    left_out: str
    """What this step leaves out, as the head says it ('' for nothing)."""


_STEPS = (
    _Step(True, True, True, ""),
    _Step(False, True, True, "types and defaults"),
    _Step(False, False, True, "types, defaults, docstrings"),
    _Step(False, False, False, "signatures and docstrings"),
)


def outline_view(listing: FileSymbols, depth: int | None, kinds: frozenset[str], max_chars: int | None, structured: bool,
                 source_text: str = "") -> View:
    """``source_text``: the file's text, for the docstrings' first lines. Without depth or kinds,
    the glance (:func:`_glance_view`); with either, a row per symbol chosen. ``max_chars`` None:
    :data:`GLANCE_MAX_CHARS` for the glance, the tools' default for rows."""
    if depth is None and not kinds:
        return _glance_view(listing, max_chars, structured, source_text)
    return _rows_view(listing, depth, kinds, DEFAULT_MAX_CHARS if max_chars is None else max_chars, structured, source_text)


def glance_rows(listing: FileSymbols, text: str, step: _Step = _STEPS[0]) -> list[str]:
    """The top level: each symbol's first line, what ``step`` gives of its signature, a class's
    members by name after a colon, and the docstring's first sentence; overloads counted (``get ×6``)."""
    return [row for row, _count in _glance(listing, text, step)]


def _glance(listing: FileSymbols, text: str, step: _Step) -> list[tuple[str, int]]:
    """:func:`glance_rows`, each with the number of top-level symbols it gives."""
    lines = text.splitlines()
    rows: list[tuple[int, str, str, int]] = []  # (first line, what is said, its doc, how many in a row say it: overloads)
    for symbol in listing.symbols:
        doc = _clipped(_first_sentence(_doc_line(symbol, lines)), _GLANCE_DOC_WIDTH) if step.docs else ""
        said = _said(symbol, listing.language or "", step)
        if symbol.children:
            counted: dict[str, int] = {}
            for member in symbol.children:
                counted[member.name] = counted.get(member.name, 0) + 1
            said += ": " + ", ".join(name if count == 1 else f"{name} ×{count}" for name, count in counted.items())
        if rows and rows[-1][1:3] == (said, doc):
            rows[-1] = (*rows[-1][:3], rows[-1][3] + 1)
        else:
            rows.append((symbol.range.first_line, said, doc, 1))
    return [(f"{line} {said}" + (f" ×{count}" if count > 1 else "") + (f"  # {doc}" if doc else ""), count)
            for line, said, doc, count in rows]


def _said(symbol: Symbol, language: str, step: _Step) -> str:
    """A symbol as a row gives it: its signature whole, or its name with its parameters' names
    (``wrap_file(environ, file, buffer_size)``), or ``kind name``."""
    signature = _SIGNATURE_END.sub("", " ".join(symbol.signature.split()).replace("( ", "(").replace(" )", ")").replace(",)", ")"))
    callable_ = symbol.kind.label in _CALLABLE
    if symbol.name not in signature or not step.parameters:
        return symbol.name if callable_ else f"{symbol.kind.label} {symbol.name}"
    if step.signatures or not callable_:  # a class's bases, a constant's type: short, and what it is
        return _clipped(signature, _SIGNATURE_WIDTH if step.signatures else _SHORT_SIGNATURE_WIDTH)
    parameters = _parameters(signature, symbol.name, language)
    return symbol.name if parameters is None else f"{symbol.name}({parameters})"


def _parameters(signature: str, name: str, language: str) -> str | None:
    """The parameters' names of a function's signature, its receiver (``self``) left out; None
    when no parameter list follows its name (type parameters may: ``f<T>(x: T)``). A signature
    cut short keeps its ``…``."""
    found = re.search(rf"(?<![\w$]){re.escape(name)}\s*(<[^()]*>)?\s*\(", signature)
    if found is None:
        return None
    pieces, closed = _split_top_level(signature[found.end():])
    if not closed:
        pieces = pieces[:-1]  # cut short inside it: a name may be cut too
    names = [n for n in (_parameter_name(piece, language) for piece in pieces) if n and n not in _RECEIVERS]
    return ", ".join(names) + ("" if closed else ", …" if names else "…")


def _split_top_level(text: str, closing: str = ")") -> tuple[list[str], bool]:
    """``text`` after an opening bracket, split at its top-level commas up to the matching
    ``closing`` one; and whether that was found."""
    pieces: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            if depth == 0 and char == closing:
                pieces.append("".join(current))
                return [p for p in pieces if p.strip()], True
            depth = max(depth - 1, 0)
        if char == "," and depth == 0:
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
    pieces.append("".join(current))
    return [p for p in pieces if p.strip()], False


def _parameter_name(piece: str, language: str) -> str:
    """A parameter's name: before its annotation's colon (Python, TypeScript, Rust), the first word
    in Go, the last in C, C++, Java and C#; its default left out."""
    declared = piece.strip()
    if declared[:1] in ("{", "["):  # a destructured parameter: its pattern's names
        closing = "}" if declared[0] == "{" else "]"
        pattern, _closed = _split_top_level(declared[1:], closing)
        return f"{declared[0]} {', '.join(p.split('=', 1)[0].split(':', 1)[0].strip() for p in pattern)} {closing}"
    declared = declared.split("=", 1)[0].strip()
    if ":" in declared:
        words = declared.split(":", 1)[0].split()
    elif language in _TYPE_FIRST:
        words = declared.replace("*", " ").replace("&", " ").split()[-1:]
    else:
        words = declared.split()[:1] if language == "go" else declared.split()
    return words[-1] if words else ""


def _glance_view(listing: FileSymbols, max_chars: int | None, structured: bool, source_text: str) -> View:
    """The default outline: every top-level symbol, with the most detail the budget holds."""
    everything = sum(1 for top in listing.symbols for _s in top.walk())
    base = (f"# {listing.file}: {len(listing.symbols)} top-level of {everything} symbols "
            f"({listing.language or 'unknown'}, {listing.source.value}, {listing.confidence.value})")
    budget = GLANCE_MAX_CHARS if max_chars is None else checked_budget(max_chars)
    members = "; depth=2: members' rows"
    whole = len("\n".join([base + members, *glance_rows(listing, source_text)]))
    for step in _STEPS:
        counted = _glance(listing, source_text, step)
        rows = [row for row, _count in counted]
        head = base + (f"; {step.left_out} left out to fit (max_chars={whole} has them)" if step.left_out else "") + members
        if len("\n".join([head, *rows])) <= budget or step is _STEPS[-1]:
            break
    if max_chars is None and len("\n".join([head, *rows])) > budget:
        budget = DEFAULT_MAX_CHARS  # names alone overflow a glance: every top-level name still comes, up to the tools' budget
    text, shown = bounded([head], rows, lambda left: left_out(left, "rows", "narrow with kinds=[...]"), budget)
    shown_symbols = sum(count for _row, count in counted[:shown])
    payload: dict[str, Any] = {"total": everything, "shown": shown_symbols}
    if step.left_out:
        payload["left_out"] = step.left_out
    if shown < len(rows):
        payload["omitted"] = {"rows": len(rows) - shown}
    if structured:
        payload |= {"file": listing.file, "language": listing.language, "source": listing.source.value,
                    "confidence": listing.confidence.value, "notes": listing.notes}
        lines = source_text.splitlines()
        payload["symbols"] = [{"name_path": s.name_path, "kind": s.kind.label, "line": s.range.first_line,
                               "end_line": s.range.last_line, "signature": s.signature, "doc": _doc_line(s, lines),
                               "members": [c.name for c in s.children]} for s in listing.symbols[:shown_symbols]]
    return payload, text


def outline_rows(listing: FileSymbols, chosen: list[Symbol], text: str) -> list[str]:
    """One row per symbol: kind, name path, lines, signature, and the docstring's first line."""
    lines = text.splitlines()
    rows = []
    for s in chosen:
        # "class Cart" says nothing the row's kind and name do not.
        bare = s.signature in ("", s.name) or s.signature.split()[-1:] == [s.name] and len(s.signature.split()) <= 3
        signature = "" if bare else f"  {s.signature}"
        doc = _doc_line(s, lines)
        rows.append(f"{'  ' * (len(s.path) - 1)}{s.kind.label} {s.name_path}  {s.range.first_line}-{s.range.last_line}"
                    f"{signature}{f'  # {doc}' if doc else ''}")
    return rows


def _rows_view(listing: FileSymbols, depth: int | None, kinds: frozenset[str], max_chars: int, structured: bool,
               source_text: str) -> View:
    chosen = [s for top in listing.symbols for s in top.walk()
              if (depth is None or len(s.path) <= depth) and (not kinds or s.kind.label in kinds)]
    rows = outline_rows(listing, chosen, source_text)
    head = f"# {listing.file} ({listing.language or 'unknown'}): {len(chosen)} symbol(s) from {listing.source.value} ({listing.confidence.value})"
    text, shown = bounded([head, *(f"# note: {n}" for n in listing.notes)], rows,
                          lambda left: left_out(left, "symbols", "narrow with depth=1 or kinds=[...]"), max_chars)
    kept, left = rows[:shown], len(rows) - shown
    payload: dict[str, Any] = {"total": len(chosen), "shown": len(kept)}
    if left:
        payload["omitted"] = {"symbols": left}
    if structured:
        payload |= {"file": listing.file, "language": listing.language, "source": listing.source.value,
                    "confidence": listing.confidence.value, "notes": listing.notes}
        lines = source_text.splitlines()
        payload["symbols"] = [{"name_path": s.name_path, "kind": s.kind.label, "line": s.range.first_line,
                               "end_line": s.range.last_line, "signature": s.signature, "doc": _doc_line(s, lines)}
                              for s in chosen[: len(kept)]]
    return payload, text


def _clipped(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _first_sentence(line: str) -> str:
    """A docstring line up to the end of its first sentence, its spaces collapsed."""
    line = " ".join(line.split())
    end = line.find(". ")
    return line[: end + 1] if end > 0 else line


def _doc_line(symbol: Symbol, lines: list[str]) -> str:
    """The first line of a symbol's docstring or doc comment, without its quotes or comment marks."""
    if symbol.doc_range is None:
        return ""
    for line in lines[symbol.doc_range.first_line - 1: symbol.doc_range.last_line]:
        text = _DOC_MARKS.sub("", line.strip()).strip()
        text = _DOC_END.sub("", text).strip()
        if text:
            return text if len(text) <= _DOC_WIDTH else text[: _DOC_WIDTH - 1] + "…"
    return ""


_DOC_MARKS = re.compile(r'^(?:[rRbBuU]{0,2}(?:"""|\'\'\'|"|\')|/\*\*?|\*|///?|#)')
_DOC_END = re.compile(r'(?:"""|\'\'\'|\*/)$')
_DOC_WIDTH = 100
"""A docstring's first line kept in an outline row, at most (the … says it was longer)."""

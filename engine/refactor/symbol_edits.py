"""Replace, insert before or after, and safely delete a symbol, addressed by name path.

Language-neutral: these work on symbol ranges (from the server, the tree or regex),
whole lines at a time, so a declaration goes with its decorators and attributes.
New text is re-indented to the target's indentation, and blank lines follow the
language's conventions (two around top-level Python definitions, one elsewhere).
"""

from __future__ import annotations

import textwrap

from engine.edits.model import FileChange, WorkspaceEdit
from engine.errors import EmptyText, Refused
from engine.answers import TextEdit
from engine.languages import Language, profile
from engine.positions import Position, Range, split_lines
from engine.refactor.plan import RefactorPlan
from engine.symbols import Symbol, SymbolKind
from engine.workspace import SourceFile


_DEFINITION_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS, SymbolKind.CONSTRUCTOR, SymbolKind.PROPERTY})


class ReferencesRemain(Refused):
    code = "references_remain"


def plan_replace(symbol: Symbol, source: SourceFile, new_text: str, *, include_doc_comment: bool = False) -> RefactorPlan:
    lines = split_lines(source.text)
    first = symbol.range.start.line
    if include_doc_comment and symbol.doc_range is not None and symbol.doc_range.start.line < first:
        first = symbol.doc_range.start.line
    last = symbol.range.last_line - 1
    body = _indented(new_text, _indent(lines[symbol.range.start.line]))
    if not body.strip():
        raise EmptyText("the replacement text is empty; use `graft delete` to remove a symbol")
    edit = TextEdit(Range(Position(first, 0), Position(last, len(lines[last]))), body)
    return _plan("replace", symbol, source, edit)


def plan_insert(symbol: Symbol, source: SourceFile, text: str, *, before: bool) -> RefactorPlan:
    lines = split_lines(source.text)
    indent = _indent(lines[symbol.range.start.line])
    block = _indented(text, indent)
    if not block.strip():
        raise EmptyText("the text to insert is empty")
    gap = "\n" * (1 + _blank_lines(source, indent, symbol, block))
    if before:
        # Above the doc comment, so that the comment stays with the symbol it describes.
        first = symbol.range.start.line
        if symbol.doc_range is not None and symbol.doc_range.start.line < first:
            first = symbol.doc_range.start.line
        edit = TextEdit(Range(Position(first, 0), Position(first, 0)), block + gap)
        return _plan("insert-before", symbol, source, edit)
    last = symbol.range.last_line - 1
    end = Position(last, len(lines[last]))
    return _plan("insert-after", symbol, source, TextEdit(Range(end, end), gap + block))


def plan_delete(symbol: Symbol, source: SourceFile, outside_references: list[str]) -> RefactorPlan:
    """Delete a symbol nothing outside it refers to; ``outside_references`` are 'file:line (in X)' strings."""
    if outside_references:
        listing = "\n  ".join(outside_references)
        raise ReferencesRemain(
            f"{symbol.address} is still referred to in {len(outside_references)} place(s); nothing was deleted:\n  {listing}"
        )
    lines = split_lines(source.text)
    first = symbol.range.start.line
    if symbol.doc_range is not None and symbol.doc_range.start.line < first:
        first = symbol.doc_range.start.line
    comment = _profile(source).leading_comment
    if comment is not None:
        # Comment lines right above a definition describe it: they go with it.
        while first > 0 and lines[first - 1].lstrip().startswith(comment):
            first -= 1
    after = symbol.range.last_line  # the first line after the symbol
    if first > 0 and not lines[first - 1].strip():
        # The blank lines above go with it; those below keep separating what follows.
        while first > 0 and not lines[first - 1].strip():
            first -= 1
    else:
        # Nothing blank above (the start of a file or a body): the blank lines below go instead.
        while after < len(lines) - 1 and not lines[after].strip():
            after += 1
    if after < len(lines):
        end = Position(after, 0)
    else:
        end = Position(len(lines) - 1, len(lines[-1]))
    return _plan("delete", symbol, source, TextEdit(Range(Position(first, 0), end), ""))


def _plan(operation: str, symbol: Symbol, source: SourceFile, edit: TextEdit) -> RefactorPlan:
    change = FileChange(source.path, (edit,), source.sha256)
    warnings = []
    if symbol.confidence.value == "low":
        warnings.append(f"{symbol.address} comes from {symbol.source.value}: its extent is a guess; check the diff")
    return RefactorPlan(operation, WorkspaceEdit((change,)), symbol.source, symbol.confidence, warnings)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _indented(text: str, indent: str) -> str:
    """``text`` without its own common indentation, re-indented to ``indent``, without a final newline."""
    body = textwrap.dedent(text.expandtabs(4) if "\t" in text and " " in indent else text).strip("\n")
    body = _relative_body(body, indent)
    return "\n".join(indent + line if line.strip() else "" for line in body.split("\n"))


def _relative_body(text: str, indent: str) -> str:
    """A declaration whose first line is bare but whose later lines keep the absolute indentation
    they have in the file (how an agent copies a method out of a class), made relative: the
    target's indentation is taken off the later lines, which re-indenting then puts back. Told
    apart from a relative text by the later lines being deeper than the target's own line."""
    lines = text.split("\n")
    later = [line for line in lines[1:] if line.strip()]
    if not indent or not later or lines[0] != lines[0].lstrip():
        return text
    if all(line.startswith(indent) for line in later) and min(len(_indent(line)) for line in later) > len(indent):
        return "\n".join([lines[0], *(line[len(indent):] if line.strip() else line for line in lines[1:])])
    return text


def _blank_lines(source: SourceFile, indent: str, target: Symbol, text: str) -> int:
    """The language's blank lines around a definition (PEP 8's two at Python's top level); a
    plain statement next to a plain statement gets the language's own count (Python's
    constants sit together)."""
    policy = _profile(source)
    between = policy.blank_lines.between_statements
    if between is not None:
        definition = target.kind in _DEFINITION_KINDS or bool(policy.definition_start and policy.definition_start.match(text))
        if not definition:
            return between
    return policy.blank_lines.top_level if indent == "" else policy.blank_lines.nested


def _profile(source: SourceFile) -> Language:
    """The file's language profile (a file of no known language gets the defaults)."""
    return profile(source.language) or _UNKNOWN


_UNKNOWN = Language("unknown", "unknown", ())

"""The syntax check before a write: touched files that parse now must still parse afterwards.

Parsing every touched file is the costly part of applying a large rename (a widely used
name touches a hundred files), so a file is not parsed when every edit to it swaps one
whole identifier for another: that cannot change whether the file parses. "Whole" and
"identifier" are checked strictly, and anything else is parsed:

- the old text and the new text are plain ASCII identifiers, neither a keyword nor a
  contextual keyword of the language (``type``, ``match``, ``async``: swapping one of those
  in or out can change how a line parses);
- the characters on either side are not identifier characters (the old text is a whole
  token, not part of a longer name or a number such as ``0x1f``) and not quotes (a string
  prefix ``rb"…"``, a character literal ``'a'``);
- the old text is not an exponent or suffix after a number's dot (``1.e5``).
"""

from __future__ import annotations

from typing import Any, Iterable

from engine.edits.model import FileChange, Operation, paths_of
from engine.edits.python_parse import python_module
from engine.edits.materialize import FileState
from engine.edits.text import line_starts
from engine.extract.treesitter import TreeSitterExtractor
from engine.languages import language_of, profile
from engine.answers import TextEdit

_QUOTES = "\"'`"


def newly_broken(
    states: list[FileState], operations: Iterable[Operation], parser: TreeSitterExtractor,
    decoded: dict[str, tuple[str, list[int]]] | None = None,
) -> dict[str, str]:
    """The states that parse before and not after, each with its first error after the edit
    (``line 41: unexpected indent``: what a caller needs to fix its text); ``operations``
    (canonical paths) tell which files only had identifiers swapped, and those are not parsed.
    ``decoded`` holds the texts and line starts materialize already made."""
    edits_by_path: dict[str, tuple[TextEdit, ...]] = {}
    other_operations: set[str] = set()  # a second change of a file is relative to the first's result: parse it
    for operation in operations:
        if isinstance(operation, FileChange) and operation.path not in edits_by_path:
            edits_by_path[operation.path] = operation.edits
        else:
            other_operations.update(paths_of(operation))
    broken: dict[str, str] = {}
    for state in states:
        language = language_of(state.path)
        if state.after is None or language is None or not parser.supports(language):
            continue
        edits = edits_by_path.get(state.path)
        if state.before is not None and edits and state.path not in other_operations:
            text, starts = (decoded or {}).get(state.path) or (_decode(state.before), None)
            if swaps_identifiers_only(text, edits, language, starts):
                continue
        error = first_syntax_error(parser, language, state.after, state.path)
        if error is None:
            continue  # parses after the edit: nothing to compare, and the common case stays one parse
        if state.before is None or first_syntax_error(parser, language, state.before, state.path) is None:
            broken[state.path] = error
    return broken


def first_syntax_error(parser: TreeSitterExtractor, language: str, data: bytes, path: str) -> str | None:
    """None when the bytes parse, else where they first do not (``line 41: unexpected indent``).
    For Python, the interpreter's own parser alone decides and words it: whether the module
    would import is its answer. Tree-sitter is not asked there: it recovers from an unexpected
    indent without flagging it, and it flags lines Python accepts (``*[], a = (1,)``), which made
    a file holding one count as unparsable before the edit, so a break the edit made went unseen."""
    kind = profile(language)
    if kind is not None and kind.interpreter_parses:
        parsed = python_module(data, path)  # the check's scope parsed the same bytes already, most often
        if isinstance(parsed, SyntaxError):
            return f"line {parsed.lineno}: {parsed.msg}" if parsed.lineno else parsed.msg
        if isinstance(parsed, ValueError):  # a NUL byte: no line to name
            return str(parsed)
        return None
    root = parser.parse(language, _strip_bom(data)).root_node
    if not root.has_error:
        return None
    node = _first_error_node(root)
    if node is None:
        return "a syntax error"
    what = f"missing {node.type}" if node.is_missing else "unexpected text"
    return f"line {node.start_point[0] + 1}: {what}"


def _first_error_node(root: Any) -> Any:
    """The first ERROR or MISSING node in document order, descending only where errors are."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return node
        stack.extend(child for child in reversed(node.children) if child.has_error or child.is_missing)
    return None


def swaps_identifiers_only(text: str, edits: tuple[TextEdit, ...], language: str, starts: list[int] | None = None) -> bool:
    """Whether every edit replaces a whole identifier token by another (see the module's rules)."""
    kind = profile(language)
    name = kind.identifier_token if kind is not None else None
    if kind is None or name is None:
        return False
    reserved = kind.keywords | kind.contextual_keywords
    word_characters = "$" if name.match("$") else ""
    starts = starts if starts is not None else line_starts(text)
    new_names_checked: set[str] = set()  # a rename brings one new name, at every edit
    for edit in edits:
        line = edit.range.start.line
        if line != edit.range.end.line or line >= len(starts):
            return False
        # Offsets without clamping at the line's end (offset_of's): a column past it takes the
        # break into the old text, which is then no identifier, and the file is parsed.
        start, end = starts[line] + edit.range.start.column, starts[line] + edit.range.end.column
        if end > (starts[line + 1] if line + 1 < len(starts) else len(text)):
            return False  # past the line (which offset_of would clamp to an insertion at its end)
        old = text[start:end]
        if edit.new_text not in new_names_checked:
            if not name.fullmatch(edit.new_text) or edit.new_text in reserved:
                return False
            new_names_checked.add(edit.new_text)
        if not name.fullmatch(old) or old in reserved:
            return False
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        for neighbour in (before, after):
            if neighbour and (neighbour.isalnum() or neighbour == "_" or neighbour in word_characters or neighbour in _QUOTES):
                return False
        if before == "." and start > 1 and text[start - 2].isdigit():
            return False
    return True


def _decode(data: bytes) -> str:
    return _strip_bom(data).decode("utf-8", errors="replace")


def _strip_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data

"""What a mention of a name is where it stands: code, a string, a comment or a docstring.

A rename reports the mentions of the old name it left (engine.refactor.leftovers); what they are
decides what they mean. A comment or a string that still says the old name is text the rename
chose not to touch; a use in code that still says it is another symbol of that name, or a
reference the rename missed, and the answer says so rather than calling it text.

Python is read with the strings-and-comments scan the rename passes share
(engine.refactor.python.strings_and_comments); a docstring is a string that is the first code of the
file or follows the colon of a ``def`` or ``class`` header. The C-like families (C, C++, C#, Go, Java,
Rust, TypeScript and JavaScript, Kotlin, Swift, Scala) are read with one scan of their comments and
literals, doc comments (``/** */``, ``///``, ``//!``) counted as docstrings. A name inside an
f-string's braces or a template literal's ``${}`` is code. Other languages are not classified,
and say so.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from enum import Enum

from engine.refactor.python.strings_and_comments import CodeMap


class MentionKind(str, Enum):
    CODE = "code"
    STRING = "string"
    COMMENT = "comment"
    DOCSTRING = "docstring"
    UNCLASSIFIED = "unclassified"
    """A language this module has no scan for."""
    BUILTIN = "builtin"
    """Code, in a Python file where the name can only be a builtin or a standard-library module
    (engine.refactor.python.builtin_names): never a use of the renamed symbol."""


_C_LIKE_FAMILIES = frozenset({"c", "csharp", "go", "java", "rust", "typescript", "kotlin", "swift", "scala"})
_STRING_PREFIX = re.compile(r"[rRbBfFuU]{0,2}$")


def mention_kinds(text: str, offsets: list[int], language: str | None, family: str | None,
                  code_map: CodeMap | None = None) -> list[MentionKind]:
    """The kind of the mention at each offset of ``text`` (a file's whole text); ``code_map``: the
    Python text's scan where the caller has it (shared by content)."""
    if language == "python":
        return _python_kinds(text, offsets, code_map or CodeMap(text))
    if family in _C_LIKE_FAMILIES:
        return _c_like_kinds(text, offsets, family)
    return [MentionKind.UNCLASSIFIED] * len(offsets)


def _python_kinds(text: str, offsets: list[int], code: CodeMap) -> list[MentionKind]:
    kinds = []
    for offset in offsets:
        span = code.span_at(offset)
        if span is None:
            kinds.append(MentionKind.CODE)
            continue
        start, _end = span
        if text[start] == "#":
            kinds.append(MentionKind.COMMENT)
            continue
        prefix = _prefix(text, start)
        if "f" in prefix.lower() and _interpolated(text[start:offset], "{"):
            kinds.append(MentionKind.CODE)
        elif _is_docstring(text, code, start - len(prefix)):
            kinds.append(MentionKind.DOCSTRING)
        else:
            kinds.append(MentionKind.STRING)
    return kinds


def _prefix(text: str, quote: int) -> str:
    """The string prefix before an opening quote (``rb``, ``f``), or '' (the end of a name is no prefix)."""
    found = _STRING_PREFIX.search(text, max(0, quote - 2), quote)
    prefix = found.group() if found is not None else ""
    before = quote - len(prefix) - 1
    if prefix and before >= 0 and (text[before].isalnum() or text[before] == "_"):
        return ""
    return prefix


def _is_docstring(text: str, code: CodeMap, start: int) -> bool:
    """Whether the string literal starting at ``start`` (its prefix) is a docstring: the first code
    of the file, or the first thing after the colon that ends a ``def`` or ``class`` header. Read
    from the text and its strings-and-comments scan, without parsing: a parse per file was nine
    tenths of the leftover pass."""
    colon = _previous_code(text, code, start - 1)
    if colon < 0:
        return True
    if text[colon] != ":":
        return False
    line_start = max(text.rfind("\n", 0, colon), text.rfind("\r", 0, colon)) + 1
    if _HEADER.match(text, line_start, colon) is not None and code.span_at(line_start) is None:
        return True  # a header on one line, the usual case
    # Back to the start of the statement the colon ends, across the brackets of a long signature;
    # a colon inside brackets (a dict's, a slice's, a lambda's in a call) ends no header.
    depth, index = 0, colon - 1
    while index >= 0:
        span = code.span_at(index)
        if span is not None:
            index = span[0] - 1
            continue
        character = text[index]
        if character in ")]}":
            depth += 1
        elif character in "([{":
            if depth == 0:
                return False
            depth -= 1
        elif character in "\r\n" and depth == 0 and not (index > 0 and text[index - 1] == "\\"):
            break
        index -= 1
    return _HEADER.match(text, index + 1, colon) is not None


_HEADER = re.compile(r"\s*(?:async\s+def|def|class)\s")


def _previous_code(text: str, code: CodeMap, index: int) -> int:
    """The offset of the last character before ``index`` (included) that is neither white space nor
    in a comment; -1 when there is none."""
    while index >= 0:
        if text[index].isspace():
            index -= 1
            continue
        span = code.span_at(index)
        if span is not None and text[span[0]] == "#":
            index = span[0] - 1
            continue
        return index
    return -1


def _interpolated(before: str, opener: str) -> bool:
    """Whether the end of ``before`` (a literal from its opening quote) is inside an interpolation:
    f-string braces (``{{`` is a brace) or a template literal's ``${``."""
    depth = 0
    index = 0
    while index < len(before):
        character = before[index]
        if opener == "{" and before.startswith("{{", index) and depth == 0:
            index += 2
            continue
        if depth == 0 and before.startswith(opener, index):
            depth, index = 1, index + len(opener)
            continue
        if depth and character == "{":
            depth += 1
        elif depth and character == "}":
            depth -= 1
        index += 1
    return depth > 0


_C_LIKE = (
    r"///[^\r\n]*|//![^\r\n]*|//[^\r\n]*"
    r"|/\*.*?\*/"
    r'|"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"'
    r"|`[^`\\]*(?:\\.[^`\\]*)*`"
)
_C_LIKE_SCAN = re.compile(_C_LIKE + r"|'(?:\\[^\r\n]{1,10}?|[^'\\\r\n])'", re.DOTALL)
"""Comments, strings, raw and template literals, and character literals of one character (Rust's
lifetimes and generics' ``'a`` are not literals)."""
_SCRIPT_SCAN = re.compile(_C_LIKE + r"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'", re.DOTALL)
"""TypeScript and JavaScript: single-quoted strings of any length."""


def _c_like_kinds(text: str, offsets: list[int], family: str | None) -> list[MentionKind]:
    scan = _SCRIPT_SCAN if family == "typescript" else _C_LIKE_SCAN
    spans = [(match.start(), match.end()) for match in scan.finditer(text)]
    starts = [start for start, _end in spans]
    kinds = []
    for offset in offsets:
        index = bisect_right(starts, offset) - 1
        if index < 0 or offset >= spans[index][1]:
            kinds.append(MentionKind.CODE)
            continue
        start = spans[index][0]
        if text.startswith(("/**", "///", "//!"), start) and not text.startswith("/**/", start):
            kinds.append(MentionKind.DOCSTRING)
        elif text.startswith(("//", "/*"), start):
            kinds.append(MentionKind.COMMENT)
        elif text[start] == "`" and family == "typescript" and _interpolated(text[start:offset], "${"):
            kinds.append(MentionKind.CODE)
        else:
            kinds.append(MentionKind.STRING)
    return kinds

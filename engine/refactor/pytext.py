"""Python source as text, without a parser: where its strings and comments are.

Scanning a hundred files for the code uses of one name cannot afford a tokenizer per
file (``tokenize`` is pure Python); one regular expression finds every string literal and
comment, and a position outside all of them is code. Like ``tokenize`` on Python 3.11, an
f-string counts as one string (the names inside its braces are not code); an unterminated
string is left as code, which only matters for files that do not parse anyway.
"""

from __future__ import annotations

import re
from bisect import bisect_right

_STRINGS_AND_COMMENTS = re.compile(
    r"#[^\r\n]*"
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'"
    r'|"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"',
    re.DOTALL,
)


class CodeMap:
    """Which offsets of a Python text are code (not inside a string literal or comment)."""

    def __init__(self, text: str) -> None:
        spans = [(m.start(), m.end()) for m in _STRINGS_AND_COMMENTS.finditer(text)]
        self._starts = [start for start, _end in spans]
        self._ends = [end for _start, end in spans]

    def is_code(self, offset: int) -> bool:
        index = bisect_right(self._starts, offset) - 1
        return index < 0 or offset >= self._ends[index]

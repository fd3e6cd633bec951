"""Python source as text, without a parser: where its strings and comments are.

Scanning a hundred files for the code uses of one name cannot afford a tokenizer per
file (``tokenize`` is pure Python); one regular expression finds every string literal and
comment, and a position outside all of them is code. Like ``tokenize`` on Python 3.11, an
f-string counts as one string (the names inside its braces are not code); an unterminated
string is left as code, which only matters for files that do not parse anyway.
"""

from __future__ import annotations

import re
import sys
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
    """Which offsets of a Python text are code (not inside a string literal or comment).

    The text is scanned only as far as the offsets asked about: a rename asks about a few
    uses in a file, and often near its top."""

    def __init__(self, text: str) -> None:
        self._found = _STRINGS_AND_COMMENTS.finditer(text)
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._scanned_past = -1
        """Every string and comment starting at or before this offset is in the lists."""

    def is_code(self, offset: int) -> bool:
        while self._scanned_past < offset:
            match = next(self._found, None)
            if match is None:
                self._scanned_past = sys.maxsize
                break
            self._starts.append(match.start())
            self._ends.append(match.end())
            self._scanned_past = match.start()
        index = bisect_right(self._starts, offset) - 1
        return index < 0 or offset >= self._ends[index]

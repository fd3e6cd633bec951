"""Python source as text, without a parser: where its strings and comments are.

Scanning a hundred files for the code uses of one name cannot afford a tokenizer per
file (``tokenize`` is pure Python); one regular expression finds every string literal and
comment, and a position outside all of them is code. Like ``tokenize`` on Python 3.11, an
f-string counts as one string (the names inside its braces are not code); an unterminated
string is left as code, which only matters for files that do not parse anyway.

A content's strings and comments are kept, as far as they were scanned, by the hash of its bytes
(:data:`_SCANS`): a long-lived engine's next rename asks about the same files, and the scan was a
sixth of the work its passes do beside the server.
"""

from __future__ import annotations

import re
import sys
import threading
from bisect import bisect_right
from collections import OrderedDict

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
    uses in a file, and often near its top. ``content``, the hash of the file's bytes, shares
    the scan with every other map of the same content (:data:`_SCANS`)."""

    def __init__(self, text: str, content: str | None = None) -> None:
        self._text = text
        self._scan = _SCANS.scan_of(content, len(text)) if content is not None else _Scan()

    def is_code(self, offset: int) -> bool:
        scan = self._scan
        if scan.scanned_past < offset:
            scan.scan_to(self._text, offset)
        index = bisect_right(scan.starts, offset) - 1
        return index < 0 or offset >= scan.ends[index]

    def span_at(self, offset: int) -> tuple[int, int] | None:
        """The string literal or comment holding ``offset`` (start, end), or None where it is code."""
        scan = self._scan
        if scan.scanned_past < offset:
            scan.scan_to(self._text, offset)
        index = bisect_right(scan.starts, offset) - 1
        if index < 0 or offset >= scan.ends[index]:
            return None
        return scan.starts[index], scan.ends[index]


class _Scan:
    """The strings and comments of one content found so far: every one starting at or before
    ``scanned_past``, and where to go on from."""

    __slots__ = ("starts", "ends", "scanned_past", "_resume", "_lock")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.scanned_past = -1
        self._resume = 0
        self._lock = threading.Lock()

    def scan_to(self, text: str, offset: int) -> None:
        with self._lock:
            if self.scanned_past >= offset:
                return  # another map of the same content went as far meanwhile
            # The pattern has no anchor and no look-behind: searching on from the end of the last
            # match finds what one search over the whole text would have found next.
            for match in _STRINGS_AND_COMMENTS.finditer(text, self._resume):
                # The end first: a reader that sees a start always finds its end.
                self.ends.append(match.end())
                self.starts.append(match.start())
                self._resume = match.end()
                self.scanned_past = match.start()
                if match.start() >= offset:
                    return
            self.scanned_past = sys.maxsize


class _ScansByContent:
    """Scans by the hash of the content, least recently used dropped first once the contents held
    are longer than ``limit`` characters in all."""

    def __init__(self, limit: int = 32 * 2**20) -> None:
        self._limit = limit
        self._held = 0
        self._scans: OrderedDict[str, tuple[_Scan, int]] = OrderedDict()
        self._lock = threading.Lock()

    def scan_of(self, content: str, length: int) -> _Scan:
        with self._lock:
            found = self._scans.get(content)
            if found is not None:
                self._scans.move_to_end(content)
                return found[0]
            scan = _Scan()
            self._scans[content] = (scan, length)
            self._held += length
            while self._held > self._limit and len(self._scans) > 1:
                _, (_, dropped) = self._scans.popitem(last=False)
                self._held -= dropped
            return scan

    def clear(self) -> None:
        with self._lock:
            self._scans.clear()
            self._held = 0


_SCANS = _ScansByContent()


def forget_scans() -> None:
    """Let every kept scan go (a daemon at rest gives their memory back)."""
    _SCANS.clear()

"""The engine ranges of a server's text edits, kept from request to request per file content.

A warm rename asks again about a name it renamed before, in files unchanged since: the server's
answer names the same thousand (line, character) pairs, and each was converted anew into a
range and two positions, three objects per edit, on the critical path between the answer's
arrival and the plan. A kept range is looked up instead.

A file's ranges belong to the :class:`~engine.positions.LineIndex` they were made on (the
content the server's columns count in) and to one position encoding: a changed file gets a new
index (``lsp_pool.convert``'s kept indexes check the file's status), and its old ranges are
dropped, never answered from. The index is held weakly, so a dropped index takes nothing with it.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

from engine.positions import LineIndex, PositionEncoding, Range

EditKey = tuple[int, int, int, int]
"""A text edit's ends as the server sent them: start line, start character, end line, end character."""

KeptRange = tuple[Range, "EditKey | None"]
"""An edit's range, and its ends in engine positions (what tells repeated replacements apart),
None for an empty range: an insertion, never a repeat."""

KEPT_RANGES = 16_384
"""How many ranges are kept at most, in all files (each with its two positions, a few hundred
bytes; each file's table counts as one more); the least recently converted files' go first."""


@dataclass
class _File:
    index: weakref.ref[LineIndex]
    ranges: dict[EditKey, KeptRange] = field(default_factory=dict)
    counted: int = 1
    """What it holds of the limit: its ranges as last counted, and one for the table itself (a
    file named with no edits holds no range, yet must not be kept without bound)."""


def converted(index: LineIndex, key: EditKey, encoding: PositionEncoding) -> KeptRange:
    """The range of a text edit whose ends are ``key``, as ``index`` reads them in ``encoding``."""
    made = index.edit_range(*key, encoding)
    start, end = made.start, made.end
    empty = start.line == end.line and start.column == end.column
    return made, None if empty else (start.line, start.column, end.line, end.column)


class KeptRanges:
    def __init__(self, limit: int = KEPT_RANGES) -> None:
        self._files: OrderedDict[tuple[str, PositionEncoding], _File] = OrderedDict()
        self._limit = limit
        self._held = 0
        self._lock = threading.Lock()  # each pool's loop converts on its own thread

    def of(self, path: str, index: LineIndex, encoding: PositionEncoding) -> dict[EditKey, KeptRange]:
        """The ranges kept for ``path`` as ``index`` reads it in ``encoding``, for the caller to
        look up and to add to (then :meth:`counted`); an empty table if none were made on this index."""
        key = (path, encoding)
        with self._lock:
            kept = self._files.get(key)
            if kept is not None and kept.index() is index:
                self._files.move_to_end(key)
                return kept.ranges
            if kept is not None:
                self._held -= kept.counted
            kept = self._files[key] = _File(weakref.ref(index))
            self._files.move_to_end(key)
            self._held += kept.counted
            self._within_the_limit()
            return kept.ranges

    def counted(self, path: str, encoding: PositionEncoding, ranges: dict[EditKey, KeptRange]) -> None:
        """``ranges`` (from :meth:`of`) added to: held within the limit, least recently used files dropped."""
        with self._lock:
            kept = self._files.get((path, encoding))
            if kept is None or kept.ranges is not ranges:
                return  # dropped meanwhile, or replaced by a newer content's: not held
            self._held += 1 + len(ranges) - kept.counted
            kept.counted = 1 + len(ranges)
            self._within_the_limit()

    def _within_the_limit(self) -> None:
        while self._held > self._limit and self._files:
            _key, dropped = self._files.popitem(last=False)
            self._held -= dropped.counted

    @property
    def held(self) -> int:
        return self._held

    def clear(self) -> None:
        with self._lock:
            self._files.clear()
            self._held = 0

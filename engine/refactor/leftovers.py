"""What a rename leaves of the old name: reported, never edited.

Occurrences of the old name in the files as they will be after the edit, each classified
(engine.refactor.mention_kinds): in code (another symbol of that name, or a reference the rename
missed: the plan's confidence is then at most medium), in a string, a comment or a docstring
(text the rename leaves as it is); dynamic lookups by that name that may break, and f-strings
that build names starting like it. The scan of the files the edit does not touch happens before
the edit is known (a rename runs it while the server computes), so only the edited files are
read again, as they will be.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable

from engine.edits.model import FileChange, Span, WorkspaceEdit
from engine.edits.materialize import materialize
from engine.edits.text import apply_text_edits, line_starts, splice_line, word_offsets
from engine.errors import Refused
from engine.answers import TextEdit
from engine.languages import profile_of
from engine.positions import split_lines
from engine.refactor.corpus import Corpus
from engine.refactor.mention_kinds import MentionKind, mention_kinds
from engine.refactor.python.builtin_names import builtin_lines
from engine.refactor.python.strings_and_comments import CodeMap

_DYNAMIC = (
    (r"getattr\([^)]*[\"']{name}[\"']", "getattr with the old name"),
    (r"setattr\([^)]*[\"']{name}[\"']", "setattr with the old name"),
    (r"hasattr\([^)]*[\"']{name}[\"']", "hasattr with the old name"),
    (r"globals\(\)\s*\[\s*[\"']{name}[\"']", "globals() lookup"),
    (r"f[\"'][^\"'{{]*\b{name}\b", "a name built in an f-string"),
)
_F_STRING_PREFIX = re.compile(r"""f["'][^"']*?([A-Za-z_]\w*)\{""")


@dataclass(frozen=True)
class Leftover:
    """A line that still mentions the old name after the edit, and what the mention is there."""

    path: str
    line: int
    """1-based."""
    kind: MentionKind

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


_SHOWN = 10
"""Places listed of the uses in code left (what the user must check); the rest are counted."""
_SUMMARISED = 3
"""Places listed per kind of the leftovers that need nothing done (text, builtins): a summary."""

_TEXT_KINDS = ((MentionKind.COMMENT, "comment"), (MentionKind.STRING, "string"), (MentionKind.DOCSTRING, "docstring"),
               (MentionKind.UNCLASSIFIED, "not classified"))


class Leftovers:
    def __init__(self, corpus: Corpus, old_name: str, language: str | None) -> None:
        """Scan every file that mentions the old name, as it is now."""
        self.corpus = corpus
        self.old_name = old_name
        self.language = language
        self._dynamic = [(re.compile(p.format(name=re.escape(old_name))), why) for p, why in _DYNAMIC]
        self._a_word = _WORD_ONLY.fullmatch(old_name) is not None
        self._paths = corpus.mentioning(old_name, language)
        self._lines_now: dict[str, list[tuple[int, str]]] = {}
        self._words_now: dict[str, frozenset[Span]] = {}
        """Where each file holds the old name as a word now, each as the span of an edit replacing it."""
        for path in self._paths:
            data = corpus.bytes_of(path)
            self._lines_now[path], self._words_now[path] = self._scanned_kept(data or b"")
            if data is not None:
                corpus.found_words(old_name, path, data, self._words_now[path])
        self._built_names = _built_names(corpus, language, old_name)

    def files_holding_the_name(self) -> list[str]:
        """The files that hold the old name as a word now: those a rename of it edits, or reports."""
        return [path for path, lines in self._lines_now.items() if lines]

    def warnings(self, edit: WorkspaceEdit) -> list[str]:
        """Warnings for the old name left in the files as they will be after ``edit``."""
        return self.found(edit)[1]

    def found(self, edit: WorkspaceEdit) -> tuple[list[Leftover], list[str]]:
        """The old name's mentions left in the files as they will be after ``edit``, each with its
        kind, and the warnings that say them (code first: it may be a missed reference)."""
        lines_after = self._lines_after(edit)
        warnings: list[str] = []
        leftovers: list[Leftover] = []
        for path in self._paths:
            lines = lines_after.get(path, self._lines_now[path])
            for number, line in lines:
                for pattern, why in self._dynamic:
                    if pattern.search(line):
                        warnings.append(f"{path}:{number + 1}: {why} may break: {line.strip()[:80]}")
            if lines:
                leftovers += self._classified(path, edit, {number for number, _line in lines})
        code = [leftover.where for leftover in leftovers if leftover.kind is MentionKind.CODE]
        if code:
            # What the user must act on, first and in full (up to _SHOWN); the rest is summarised.
            warnings.append(f"{len(code)} use(s) of {self.old_name!r} in code not renamed (another symbol of that name, "
                            f"or a reference the rename missed: check them): {_listed(code)}")
        text = [(label, [leftover.where for leftover in leftovers if leftover.kind is kind]) for kind, label in _TEXT_KINDS]
        text = [(label, places) for label, places in text if places]
        if text:
            count = sum(len(places) for _label, places in text)
            kinds = "; ".join(f"{label}: {_listed(places, _SUMMARISED)}" for label, places in text)
            warnings.append(f"{count} mention(s) of {self.old_name!r} in text left as they are ({kinds})")
        builtin = [leftover.where for leftover in leftovers if leftover.kind is MentionKind.BUILTIN]
        if builtin:
            warnings.append(f"{len(builtin)} use(s) of the builtin or standard-library {self.old_name!r} left as they are "
                            f"(in files that bind the name no other way): {_listed(builtin, _SUMMARISED)}")
        return leftovers, warnings + self._built_names

    def _classified(self, path: str, edit: WorkspaceEdit, numbers: set[int]) -> list[Leftover]:
        """The mentions on these lines of the file as the edit leaves it, one per line and kind."""
        text, code_map = self._text_after(path, edit)
        if text is None:
            return [Leftover(path, number + 1, MentionKind.UNCLASSIFIED) for number in sorted(numbers)]
        offsets = word_offsets(text, self.old_name)
        profile = profile_of(path)
        kinds = mention_kinds(text, offsets, profile.id if profile else None, profile.family if profile else None, code_map)
        starts = line_starts(text) if "\r" in text else None
        found: dict[tuple[int, MentionKind], None] = {}
        number, counted_to = 0, 0
        for offset, kind in zip(offsets, kinds):
            if starts is not None:
                number = bisect_right(starts, offset) - 1
            else:  # line breaks counted between one offset and the next, as _lines_at does
                number += text.count("\n", counted_to, offset)
                counted_to = offset
            if number in numbers:
                found[(number, kind)] = None
        before = self.corpus.bytes_of(path)
        if profile is not None and profile.id == "python" and before is not None and any(kind is MentionKind.CODE for _n, kind in found):
            builtin = builtin_lines(_decoded(before), self.old_name, {n + 1 for n, kind in found if kind is MentionKind.CODE})
            found = {(n, MentionKind.BUILTIN if kind is MentionKind.CODE and n + 1 in builtin else kind): None for n, kind in found}
        return [Leftover(path, number + 1, kind) for number, kind in sorted(found, key=lambda key: (key[0], key[1].value))]

    def _text_after(self, path: str, edit: WorkspaceEdit) -> tuple[str | None, CodeMap | None]:
        """A file's whole text as the edit leaves it (as :meth:`_lines` reads it), None when it
        cannot be read; and for an untouched Python file, its strings-and-comments scan, shared
        with the rename's other passes by content."""
        if path not in edit.touched:
            try:
                source = self.corpus.source(path)
            except Refused:
                return _decoded(self.corpus.bytes_of(path) or b""), None
            return source.text, self.corpus.code_map(path) if source.language == "python" else None
        changes = [op for op in edit.operations if isinstance(op, FileChange) and op.path == path]
        if len(changes) == 1 and all(isinstance(op, FileChange) for op in edit.operations):
            source = self.corpus.source(path)
            return apply_text_edits(source.text, changes[0].edits, source.newline), None
        after = {state.path: state.after for state in materialize(edit, self.corpus.workspace)}.get(path)
        return (_decoded(after) if after is not None else None), None

    def _lines_after(self, edit: WorkspaceEdit) -> dict[str, list[tuple[int, str]]]:
        """For each edited file that mentions the old name: its lines holding the name after the edit."""
        changes = [op for op in edit.operations if isinstance(op, FileChange)]
        if len(changes) != len(edit.operations) or len({c.path for c in changes}) != len(changes):
            # File operations, or a file changed twice: the general way.
            after = {state.path: state.after for state in materialize(edit, self.corpus.workspace)}
            return {path: self._lines(data) for path, data in after.items() if path in self._lines_now and data is not None}
        found: dict[str, list[tuple[int, str]]] = {}
        for change in changes:
            if change.path not in self._lines_now:
                continue  # does not mention the old name: nothing to report there
            if self._replaces_every_mention(change):
                found[change.path] = []  # a rename's usual answer: nothing of the name is left to splice lines for
            elif all(e.range.start.line == e.range.end.line and not _BREAKS.search(e.new_text) and self.old_name not in e.new_text
                   for e in change.edits):
                # Edits within lines that bring no old name in (a rename's): line numbers stay, so
                # only the lines that held the name before can hold it after; each is edited alone.
                found[change.path] = self._edited_lines(change)
            else:
                source = self.corpus.source(change.path)
                found[change.path] = self._lines(apply_text_edits(source.text, change.edits, source.newline).encode("utf-8"))
        return found

    def _replaces_every_mention(self, change: FileChange) -> bool:
        """Whether ``change`` replaces each word of the old name in its file, and nothing else,
        each with a text on one line that holds no old name: then none is left. (A word of the name
        stands between characters that cannot be part of a word; a replacement without the name
        cannot join them into one.)"""
        words, old = self._words_now[change.path], self.old_name
        if len(change.spans) != len(words) or not self._a_word or not words.issuperset(change.spans):
            return False
        texts = {edit.new_text for edit in change.edits}  # a rename's edits share one text: each text looked at once
        # As many edits as words, each on a distinct word (overlapping edits are refused when made).
        return not any(old in text or _BREAKS.search(text) for text in texts)

    def _edited_lines(self, change: FileChange) -> list[tuple[int, str]]:
        by_line: dict[int, list[TextEdit]] = {}
        for text_edit in change.edits:
            by_line.setdefault(text_edit.range.start.line, []).append(text_edit)
        lines = []
        for number, line in self._lines_now[change.path]:
            edits = by_line.get(number)
            if edits:
                line = splice_line(line, edits)
            if word_offsets(line, self.old_name):
                lines.append((number, line))
        return lines

    def _lines(self, data: bytes) -> list[tuple[int, str]]:
        """(0-based number, text) of each line holding the old name as a word (columns as the
        engine counts them: without a BOM)."""
        return self._scanned(data)[0]

    def _scanned_kept(self, data: bytes) -> tuple[list[tuple[int, str]], frozenset[Span]]:
        """:meth:`_scanned` of a file as it is before the rename, kept by the old name and the
        content: a long-lived engine's next rename of the name scans the same files again (a warm
        rename of a function used in fifty files: most of the work beside the server's request)."""
        return _SCANS.get((self.old_name, data), lambda: self._scanned(data))

    def _scanned(self, data: bytes) -> tuple[list[tuple[int, str]], frozenset[Span]]:
        """:meth:`_lines`, and where each word of the old name is (the span of an edit replacing it)."""
        text = _decoded(data)
        offsets = word_offsets(text, self.old_name)
        width = len(self.old_name)
        if not offsets:
            return [], frozenset()
        if "\r" not in text:
            return _lines_at(text, offsets, width)
        starts = line_starts(text)
        found: dict[int, str] = {}
        spots = set()
        for offset in offsets:
            number = bisect_right(starts, offset) - 1
            spots.add((number, offset - starts[number], number, offset - starts[number] + width))
            if number not in found:
                end = starts[number + 1] if number + 1 < len(starts) else len(text)
                found[number] = text[starts[number]:end].rstrip("\r\n")
        return list(found.items()), frozenset(spots)


class _KeptScans:
    """Scans by (old name, content), the least recently used dropped past ``limit`` bytes of
    content. Neither is the request's answer: the same name in the same bytes scans the same."""

    def __init__(self, limit: int) -> None:
        self._limit, self._held = limit, 0
        self._scans: OrderedDict[tuple[str, bytes], tuple[list[tuple[int, str]], frozenset[Span]]] = OrderedDict()
        self._lock = threading.Lock()  # a daemon may plan for several clients at once

    def get(self, key: tuple[str, bytes],
            scan: Callable[[], tuple[list[tuple[int, str]], frozenset[Span]]]) -> tuple[list[tuple[int, str]], frozenset[Span]]:
        with self._lock:
            found = self._scans.get(key)
            if found is not None:
                self._scans.move_to_end(key)
                return found
        scanned = scan()  # outside the lock: another file's scan need not wait for this one
        with self._lock:
            if key not in self._scans:
                self._held += len(key[1])
            self._scans[key] = scanned
            while self._held > self._limit and self._scans:
                (_name, data), _dropped = self._scans.popitem(last=False)
                self._held -= len(data)
        return scanned


_SCANS = _KeptScans(16 * 2**20)


_BREAKS = re.compile(r"[\r\n]")
_WORD_ONLY = re.compile(r"[\w$]+")


def _decoded(data: bytes) -> str:
    return data[3:].decode("utf-8", errors="replace") if data.startswith(b"\xef\xbb\xbf") else data.decode("utf-8", errors="replace")


def _listed(places: list[str], shown: int = _SHOWN) -> str:
    return ", ".join(places[:shown]) + (f" and {len(places) - shown} more" if len(places) > shown else "")


def _lines_at(text: str, offsets: list[int], width: int) -> tuple[list[tuple[int, str]], frozenset[Span]]:
    """(0-based number, text) of the lines holding these ascending offsets, in a text whose
    only line break is ``\\n``: line breaks counted between one offset and the next, in C,
    rather than every line start of the file listed (most of this pass on a warm rename); and
    the span of each word of ``width`` there."""
    found: list[tuple[int, str]] = []
    spots = set()
    number, counted_to, line_start, line_end = 0, 0, 0, -1
    for offset in offsets:
        if offset >= line_end:  # not on the line just taken
            number += text.count("\n", counted_to, offset)
            counted_to = offset
            line_start = text.rfind("\n", 0, offset) + 1
            line_end = text.find("\n", offset)
            line_end = len(text) if line_end < 0 else line_end
            found.append((number, text[line_start:line_end]))
        spots.add((number, offset - line_start, number, offset - line_start + width))
    return found, frozenset(spots)


def _built_names(corpus: Corpus, language: str | None, old_name: str) -> list[str]:
    """f-strings that build a name starting like the old one (``f"handle_{action}"`` for
    ``handle_save``): a lookup by such a name breaks silently after the rename."""
    head = old_name.split("_")[0]
    if language != "python" or "_" not in old_name.strip("_") or len(head) < 3:
        return []
    found = []
    for path in corpus.mentioning(head + "_{", language):
        try:
            text = corpus.source(path).text
        except Refused:
            continue
        for number, line in enumerate(split_lines(text)):
            for match in _F_STRING_PREFIX.finditer(line):
                prefix = match.group(1)
                if len(prefix) >= 3 and old_name.startswith(prefix) and prefix != old_name:
                    found.append(f"{path}:{number + 1}: a name built in an f-string may have meant {old_name}: {line.strip()[:80]}")
    return found

"""The files one refactoring searches: listed once, each read at most once.

A rename looks for the old name several times over (dotted strings, leftovers, names built
in f-strings, attribute strings); on a large project each pass over every file costs more
than the server's rename itself, so the passes share one listing and one read per file. A
long-lived engine also knows each file's words (engine.refactor.mentions): a file whose words
cannot hold the name is not read at all.
"""

from __future__ import annotations

from typing import Callable

from engine.edits.model import Span
from engine.languages import language_of
from engine.refactor.mentions import FileWords
from engine.refactor.python.strings_and_comments import CodeMap
from engine.workspace import SourceFile, Workspace

_UTF8_BOM = b"\xef\xbb\xbf"


class Corpus:
    def __init__(
        self, workspace: Workspace, paths: list[str] | None = None, listing: Callable[[], list[str]] | None = None,
        words: FileWords | None = None,
    ) -> None:
        self.workspace = workspace
        self.paths = paths if paths is not None else workspace.scan().files
        """Workspace-relative paths, as a scan (or the project graph, which comes from one) lists them."""
        self._listing = listing
        self._by_language: dict[str | None, list[str]] | None = None
        self._bytes: dict[str, bytes | None] = {}
        self._sources: dict[str, SourceFile] = {}
        self._mentioning: dict[tuple[str, str | None], list[str]] = {}
        self._words = words
        """Files' words at their current content (MentionIndex.current), for the files it knows
        (none known: every file is read, as without them)."""
        self._found: dict[tuple[str, str], tuple[bytes, frozenset[Span]]] = {}
        """By (word, path): the bytes a pass scanned for the word, and where it stands there."""

    def workspace_files(self) -> list[str]:
        """Every file of the workspace, sources or not (text files collected as doctests):
        the engine's kept listing when it was given one (not to be changed), else a walk."""
        return self._listing() if self._listing is not None else self.workspace.scan().files

    def bytes_of(self, path: str) -> bytes | None:
        """Raw bytes for searching (the listing already vetted the path); None if unreadable."""
        if path not in self._bytes:
            try:
                self._bytes[path] = self.workspace.listed_bytes(path)
            except OSError:
                self._bytes[path] = None
        return self._bytes[path]

    def source(self, path: str) -> SourceFile:
        """A file to edit, read through the workspace (which refuses paths outside it), once."""
        if path not in self._sources:
            self._sources[path] = self.workspace.read(path)
        return self._sources[path]

    def found_words(self, word: str, path: str, data: bytes, spans: frozenset[Span]) -> None:
        """Say where a pass found ``word`` standing alone in ``path``, whose bytes it decoded
        (UTF-8, without a BOM) from ``data``: each span covers exactly ``word`` in that text."""
        self._found[(word, path)] = (data, spans)

    def words_in(self, word: str, source: SourceFile) -> frozenset[Span] | None:
        """Where a pass found ``word`` standing alone in ``source`` (:meth:`found_words`), or None
        when none looked in that file, or looked in other bytes than ``source`` was decoded from
        (the file changed between the two reads): each span covers exactly ``word`` in
        ``source.text``. A rename's checks of the server's thousand edits ask this rather
        than slicing the text under each edit."""
        found = self._found.get((word, source.path))
        if found is None or source.encoding != "utf-8":
            return None
        data, spans = found
        same = (data.startswith(_UTF8_BOM) and data[len(_UTF8_BOM):] == source.data) if source.has_bom else data == source.data
        return spans if same else None

    def code_map(self, path: str) -> CodeMap:
        """Where the strings and comments of a Python file are: the scan is shared, by the file's
        content, by every pass of the call (code uses, attribute uses, doctests) and later calls."""
        source = self.source(path)
        return CodeMap(source.text, source.sha256)

    def mentioning(self, needle: str, language: str | None) -> list[str]:
        """Files of a language whose bytes contain ``needle``: only those get decoded."""
        key = (needle, language)
        if key not in self._mentioning:
            wanted = needle.encode("utf-8")
            unread = self._words.cannot_hold(wanted) if self._words is not None else set()
            found = []
            for path in self._in_language(language):
                if path in unread:
                    continue
                data = self.bytes_of(path)
                if data is not None and wanted in data:
                    found.append(path)
            self._mentioning[key] = found
        return list(self._mentioning[key])

    def _in_language(self, language: str | None) -> list[str]:
        if self._by_language is None:
            self._by_language = {}
            for path in self.paths:
                self._by_language.setdefault(language_of(path), []).append(path)
        return self._by_language.get(language, [])

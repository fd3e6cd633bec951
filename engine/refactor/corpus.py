"""The files one refactoring searches: listed once, each read at most once.

A rename looks for the old name several times over (dotted strings, leftovers, names built
in f-strings, attribute strings); on a large project each pass over every file costs more
than the server's rename itself, so the passes share one listing and one read per file.
"""

from __future__ import annotations

from engine.languages import language_of
from engine.workspace import SourceFile, Workspace


class Corpus:
    def __init__(self, workspace: Workspace, paths: list[str] | None = None) -> None:
        self.workspace = workspace
        self.paths = paths if paths is not None else workspace.scan().files
        """Workspace-relative paths, as a scan (or the project graph, which comes from one) lists them."""
        self._bytes: dict[str, bytes | None] = {}
        self._sources: dict[str, SourceFile] = {}
        self._mentioning: dict[tuple[str, str | None], list[str]] = {}
        self._root = str(workspace.root)

    def bytes_of(self, path: str) -> bytes | None:
        """Raw bytes for searching (the listing already vetted the path); None if unreadable."""
        if path not in self._bytes:
            try:
                with open(f"{self._root}/{path}", "rb") as handle:  # plain strings: a thousand files per pass
                    self._bytes[path] = handle.read()
            except OSError:
                self._bytes[path] = None
        return self._bytes[path]

    def source(self, path: str) -> SourceFile:
        """A file to edit, read through the workspace (which refuses paths outside it), once."""
        if path not in self._sources:
            self._sources[path] = self.workspace.read(path)
        return self._sources[path]

    def mentioning(self, needle: str, language: str | None) -> list[str]:
        """Files of a language whose bytes contain ``needle``: only those get decoded."""
        key = (needle, language)
        if key not in self._mentioning:
            wanted = needle.encode("utf-8")
            found = []
            for path in self.paths:
                if language_of(path) != language:
                    continue
                data = self.bytes_of(path)
                if data is not None and wanted in data:
                    found.append(path)
            self._mentioning[key] = found
        return list(self._mentioning[key])

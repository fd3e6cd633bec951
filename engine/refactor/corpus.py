"""The files one refactoring searches: listed once, each read at most once.

A rename looks for the old name several times over (dotted strings, leftovers, names built
in f-strings, attribute strings); on a large project each pass over every file costs more
than the server's rename itself, so the passes share one listing and one read per file.
"""

from __future__ import annotations

from engine.languages import language_of
from engine.workspace import Workspace


class Corpus:
    def __init__(self, workspace: Workspace, paths: list[str] | None = None) -> None:
        self.workspace = workspace
        self.paths = paths if paths is not None else workspace.scan().files
        """Workspace-relative paths, as a scan (or the project graph, which comes from one) lists them."""
        self._bytes: dict[str, bytes | None] = {}

    def bytes_of(self, path: str) -> bytes | None:
        if path not in self._bytes:
            try:
                self._bytes[path] = (self.workspace.root / path).read_bytes()
            except OSError:
                self._bytes[path] = None
        return self._bytes[path]

    def mentioning(self, needle: str, language: str | None) -> list[str]:
        """Files of a language whose bytes contain ``needle``: only those get decoded."""
        wanted = needle.encode("utf-8")
        found = []
        for path in self.paths:
            if language_of(path) != language:
                continue
            data = self.bytes_of(path)
            if data is not None and wanted in data:
                found.append(path)
        return found

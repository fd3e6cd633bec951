"""Keeping a server's view of files in step with the disk and with our own edits.

Files are opened only when the server needs them open (some servers answer
only for open documents) or when the caller edits them: opening a file makes
a type-checking server check it, which is slow and delays everything else.
Changes made on disk by anyone are noticed when a file is next used (size and
mtime first, then the hash) and reported with ``didChange`` (when open) and
``workspace/didChangeWatchedFiles``; to a server that takes no watched-file events (tsserver, which
watches files itself, in its own time), a file known to have changed is opened with its text.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lsprotocol import types as t


@dataclass
class _Seen:
    size: int
    mtime_ns: int
    sha256: str
    version: int | None = None
    """Document version when open, None when closed."""
    last_used: float = 0.0


MAX_OPEN_DOCUMENTS = 16
"""Documents kept open at once per server; opening one more closes the least recently used.
A sweep over a project (the index asking for every file's symbols) otherwise leaves every
file open, and a server re-checks open files on every change: typescript-language-server
with Django's 87 JavaScript files open kept a core busy and slowed every later request."""


class DocumentTracker:
    def __init__(
        self, notify: Callable[[str, object], None], language_of: Callable[[Path], str | None],
        max_open: int = MAX_OPEN_DOCUMENTS, *, watches_files_itself: bool = False,
    ) -> None:
        """``watches_files_itself``: the server takes no watched-file events (ServerSpec.watches_files_itself)."""
        self._notify = notify
        self._watches_files_itself = watches_files_itself
        self._language_of = language_of
        self._seen: dict[Path, _Seen] = {}
        self._max_open = max_open

    def make_room(self, count: int) -> None:
        """Keep at least ``count`` documents open at once from now on: a request that needs that
        many open together (tsserver's loose files and one file per project, shown before a
        rename) would otherwise close the first it opened, and tsserver drop that project."""
        self._max_open = max(self._max_open, count + 1)

    def open_documents(self) -> list[Path]:
        return [path for path, seen in self._seen.items() if seen.version is not None]

    def use(self, path: Path, *, open_it: bool, written: bool = False) -> bool:
        """Bring the server up to date with ``path`` before a request about it; True when
        that sent the server the document (didOpen or didChange). ``written``: the file is known
        to have been rewritten, so its content is compared even when its size and mtime look
        the same (a same-length edit within the file system's timestamp granularity, a few
        milliseconds: the change went unseen, and a diagnostics pull right after an apply was
        answered from the old content)."""
        stat = path.stat()
        seen = self._seen.get(path)
        now = time.monotonic()
        if seen is None:
            data = path.read_bytes()
            seen = _Seen(stat.st_size, stat.st_mtime_ns, hashlib.sha256(data).hexdigest(), last_used=now)
            self._seen[path] = seen
            if open_it:
                self._open(path, seen, data)
            return open_it
        seen.last_used = now
        sent = False
        if written or (stat.st_size, stat.st_mtime_ns) != (seen.size, seen.mtime_ns):
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            seen.size, seen.mtime_ns = stat.st_size, stat.st_mtime_ns
            if digest != seen.sha256:
                seen.sha256 = digest
                sent = seen.version is not None
                self._changed(path, seen, data)
        if open_it and seen.version is None:
            self._open(path, seen, path.read_bytes())
            sent = True
        return sent

    def changed_by_us(self, path: Path, *, existed: bool = False) -> None:
        """Our own apply layer rewrote, created or deleted ``path``: tell the server now rather
        than on next use. ``existed``: the file was there before the write (rewritten in place)."""
        if not path.exists():
            seen = self._seen.pop(path, None)
            if seen is not None and seen.version is not None:
                self._notify(t.TEXT_DOCUMENT_DID_CLOSE, t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(path.as_uri())))
            self._watched(path, t.FileChangeType.Deleted)
        elif self._watches_files_itself:
            # Its own watcher would tell it in its own time, after a request sent at once (a
            # rename answered from the old file). Opened, it answers from this text; once closed
            # again (idle, or to make room), it reads the disk, current by then.
            self.use(path, open_it=True, written=True)
        elif path in self._seen:
            # Sent as an open document, not only as a watched-file event: servers take those after
            # a debounce, and a diagnostics pull right after an apply was answered from the old text.
            self.use(path, open_it=True, written=True)
        elif existed:
            # Rewritten, though never shown to the server: Changed, which basedpyright answers by
            # re-reading the file and re-checking its dependents. Created would make it rebuild
            # its whole program, searching for files and asking the interpreter for its paths
            # again: an apply's after check then paid a cold server's price for its first file.
            self._watched(path, t.FileChangeType.Changed)
        else:
            # Created by the edit, or changed behind our back and not known to be old: servers
            # treat Created as "add it to the program, or re-read it".
            self._watched(path, t.FileChangeType.Created)

    def close_idle(self, idle_seconds: float) -> list[Path]:
        """didClose every document unused for ``idle_seconds``."""
        now = time.monotonic()
        closed = []
        for path, seen in self._seen.items():
            if seen.version is not None and now - seen.last_used >= idle_seconds:
                self._notify(t.TEXT_DOCUMENT_DID_CLOSE, t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(path.as_uri())))
                seen.version = None
                closed.append(path)
        return closed

    def forget(self) -> None:
        """The server restarted: it knows no document."""
        self._seen.clear()

    def _open(self, path: Path, seen: _Seen, data: bytes) -> None:
        open_now = sorted((other.last_used, other_path) for other_path, other in self._seen.items() if other.version is not None)
        for _last_used, oldest in open_now[: max(0, len(open_now) - self._max_open + 1)]:
            self._notify(t.TEXT_DOCUMENT_DID_CLOSE, t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(oldest.as_uri())))
            self._seen[oldest].version = None
        seen.version = 1
        item = t.TextDocumentItem(
            uri=path.as_uri(),
            language_id=self._language_of(path) or "plaintext",
            version=seen.version,
            text=_text(data),
        )
        self._notify(t.TEXT_DOCUMENT_DID_OPEN, t.DidOpenTextDocumentParams(item))

    def _changed(self, path: Path, seen: _Seen, data: bytes) -> None:
        if seen.version is not None:
            seen.version += 1
            self._notify(
                t.TEXT_DOCUMENT_DID_CHANGE,
                t.DidChangeTextDocumentParams(
                    text_document=t.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=seen.version),
                    content_changes=[t.TextDocumentContentChangeWholeDocument(text=_text(data))],
                ),
            )
        self._watched(path, t.FileChangeType.Changed)

    def _watched(self, path: Path, change: t.FileChangeType) -> None:
        self._notify(t.WORKSPACE_DID_CHANGE_WATCHED_FILES, t.DidChangeWatchedFilesParams([t.FileEvent(uri=path.as_uri(), type=change)]))


def _text(data: bytes) -> str:
    # LSP documents carry no BOM.
    return data.decode("utf-8-sig", errors="replace")

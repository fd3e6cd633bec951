"""What the pool tells a server about the files it rewrote (lsp_pool/documents.py)."""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types as t

from lsp_pool.documents import DocumentTracker


def test_a_rewrite_of_the_same_size_and_mtime_is_still_sent(tmp_path: Path) -> None:
    """A rename of `helper` to `assist` keeps the file's size, and within the file system's
    timestamp granularity its mtime too: the tracker took the file for unchanged, the server kept
    the old content, and the before/after diagnostics comparison of an apply missed a new error
    (a flaky e2e test under load)."""
    sent: list[tuple[str, object]] = []
    tracker = DocumentTracker(lambda method, params: sent.append((method, params)), lambda path: "python")
    module = tmp_path / "m.py"
    module.write_text("def helper():\n    return 1\n")
    tracker.use(module, open_it=True)
    before = os.stat(module)
    module.write_text("def assist():\n    return 1\n")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same mtime, as within one tick
    sent.clear()
    tracker.changed_by_us(module)
    changes = [params for method, params in sent if method == t.TEXT_DOCUMENT_DID_CHANGE]
    assert len(changes) == 1
    assert isinstance(changes[0], t.DidChangeTextDocumentParams), changes
    assert changes[0].content_changes[0].text == "def assist():\n    return 1\n"


def _watched_events(sent: list[tuple[str, object]]) -> list[tuple[str, t.FileChangeType]]:
    events: list[tuple[str, t.FileChangeType]] = []
    for method, params in sent:
        if method == t.WORKSPACE_DID_CHANGE_WATCHED_FILES:
            assert isinstance(params, t.DidChangeWatchedFilesParams), params
            events.extend((event.uri.rsplit("/", 1)[-1], event.type) for event in params.changes)
    return events


def test_a_file_never_shown_is_told_changed_when_it_existed_and_created_when_not_known_to(tmp_path: Path) -> None:
    """basedpyright takes Created as a new file and rebuilds its whole program (it searches for
    files and asks the interpreter for its paths again): an apply's check after the write, on
    files it had not opened before (the budget cut the check short), then cost what a cold
    server's does. A file rewritten in place is Changed; one not known to have existed (created,
    or changed behind our back) stays Created, so that a new file joins the server's program."""
    sent: list[tuple[str, object]] = []
    tracker = DocumentTracker(lambda method, params: sent.append((method, params)), lambda path: "python")
    for name in ("edited.py", "created.py"):
        (tmp_path / name).write_text("VALUE = 1\n")
    tracker.changed_by_us(tmp_path / "edited.py", existed=True)
    tracker.changed_by_us(tmp_path / "created.py")
    assert _watched_events(sent) == [("edited.py", t.FileChangeType.Changed), ("created.py", t.FileChangeType.Created)]
    assert not [method for method, _params in sent if method == t.TEXT_DOCUMENT_DID_OPEN]  # telling is not opening

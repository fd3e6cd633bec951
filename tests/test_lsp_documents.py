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
    assert changes[0].content_changes[0].text == "def assist():\n    return 1\n"  # type: ignore[attr-defined]

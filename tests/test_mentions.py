"""The files' words a long-lived engine keeps (engine.refactor.mentions): the files found to
mention a name are exactly those found by reading every file, and fewer files are read."""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.api import Engine
from engine.refactor.corpus import Corpus
from engine.refactor.mentions import MentionIndex, longest_word, words_of
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace, read_bytes
from tests.conftest import SAMPLE

FILES = {
    "pkg/__init__.py": "from pkg.models import Order as Order\n__all__ = ['Order', \"total_price\"]\n",
    "pkg/models.py": "class Order:\n    def total_price(self):  # the total_price, with tax\n        return self.sub_total_price * 1.2\n",
    "pkg/crlf.py": "import pkg.models\r\nx = pkg.models.Order()\r\nmock.patch('pkg.models.Order.total_price')\r\n",
    "pkg/bom.py": "\ufeffcafé = 'Ünïcode'\nnaïve_total_price = 3\n",
    "pkg/latin.py": "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\nORDER_total = 1\n",
    "pkg/empty.py": "",
    "pkg/other.py": "def helper(): return {'order': 1}.get('order')\n",
    "web/app.js": "export const totalPrice = (order) => order.total_price;\n",
}


@dataclass(frozen=True)
class Fact:
    sha256: str


def _workspace(root: Path) -> Workspace:
    for path, text in FILES.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("latin-1") if "latin" in path else text.encode("utf-8"))
    return Workspace(root)


def _facts(workspace: Workspace) -> dict[str, Fact]:
    import hashlib

    return {path: Fact(hashlib.sha256(read_bytes(f"{workspace.root}/{path}")).hexdigest()) for path in FILES}


def _needles(rng: random.Random) -> list[str]:
    text = "".join(FILES.values()) + " pkg.models.Order.total_price caf naïve Ünï () .get( "
    found = {"total_price", "Order", "pkg.models.Order", "'order'", "café", "é", "_", "()", "ORDER", "price * 1"}
    while len(found) < 400:
        start = rng.randrange(len(text))
        found.add(text[start:start + rng.randint(1, 16)])
    return sorted(found)


def test_words_and_the_longest_word_of_a_needle() -> None:
    assert set(words_of(b"a.b_c(d1) caf\xc3\xa9 a").split(b"\n")) == {b"a", b"b_c", b"d1", b"caf"}
    assert longest_word(b"pkg.models.Order") == b"models"
    assert longest_word(b"caf\xc3\xa9") == b"caf"
    assert longest_word(b"()") is None


def test_the_words_find_exactly_the_files_a_reading_of_every_file_finds(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    index = MentionIndex()
    assert index.update(str(workspace.root), _facts(workspace)) == len(FILES)
    words = index.current(_facts(workspace))
    assert len(words) == len(FILES) and all(words.knows(path) for path in FILES)
    assert words.files_with(b"total_price") == {"pkg/__init__.py", "pkg/models.py", "pkg/crlf.py", "pkg/bom.py", "web/app.js"}
    for needle in _needles(random.Random(7)):
        for language in ("python", "javascript", None):
            read_all = Corpus(workspace, list(FILES)).mentioning(needle, language)
            narrowed = Corpus(workspace, list(FILES), words=words).mentioning(needle, language)
            assert narrowed == read_all, (needle, language)


def test_a_file_changed_since_its_words_were_read_is_read_again(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    index = MentionIndex()
    index.update(str(workspace.root), _facts(workspace))
    (tmp_path / "pkg/other.py").write_text("def helper(): return Order\n")
    facts = _facts(workspace)  # the graph has caught up with the change: its hash is the new one
    words = index.current(facts)
    assert not words.knows("pkg/other.py") and len(words) == len(FILES) - 1
    assert "pkg/other.py" in Corpus(workspace, list(FILES), words=words).mentioning("Order", "python")
    assert index.update(str(workspace.root), facts) == 1  # only the changed file is read again
    assert "pkg/other.py" in index.current(facts).files_with(b"Order")
    assert index.current(facts).files_with(b"sub_total") == {"pkg/models.py"}  # the others' words kept as they were
    del facts["pkg/other.py"]
    index.update(str(workspace.root), facts)
    assert not index.current(_facts(workspace)).knows("pkg/other.py")  # a file gone from the graph is forgotten


def test_which_files_are_known_is_worked_out_when_first_asked_not_when_the_index_is_taken(tmp_path: Path) -> None:
    """A rename takes the index before it sends its request; comparing every file's hash then
    delayed the request. The comparison waits for the first question (asked beside the server)."""
    workspace = _workspace(tmp_path)
    index = MentionIndex()
    index.update(str(workspace.root), _facts(workspace))

    class Counted(dict[str, Fact]):
        looked_up = 0

        def get(self, key: str, default: Fact | None = None) -> Fact | None:  # type: ignore[override]
            Counted.looked_up += 1
            return super().get(key, default)

    facts = Counted(_facts(workspace))
    words = index.current(facts)
    corpus = Corpus(workspace, list(FILES), words=words)
    assert Counted.looked_up == 0
    assert corpus.mentioning("total_price", "python") == ["pkg/__init__.py", "pkg/models.py", "pkg/crlf.py", "pkg/bom.py"]
    assert Counted.looked_up == len(FILES)  # once, for every file
    assert words.knows("pkg/models.py") and len(words) == len(FILES)
    assert Counted.looked_up == len(FILES)  # not again


def test_a_file_changed_after_the_graph_read_it_is_not_indexed(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    facts = _facts(workspace)
    (tmp_path / "pkg/other.py").write_text("def helper(): return Order\n")  # the graph has not caught up yet
    index = MentionIndex()
    assert index.update(str(workspace.root), facts) == len(FILES) - 1
    assert not index.current(facts).knows("pkg/other.py")


def test_an_engine_with_its_words_indexed_plans_the_same_rename_reading_fewer_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root)
    read: list[str] = []
    real_read = Workspace.listed_bytes  # what the corpus searches: every file its words do not rule out

    def counted(self: Workspace, path: str) -> bytes:
        read.append(path)
        return real_read(self, path)

    monkeypatch.setattr(Workspace, "listed_bytes", counted)
    engine = Engine(Workspace(root))
    try:
        before = engine.plan(Rename("shop/util.py:round_cents", "round_to_cents")).edit
        read_without = set(read)
        assert engine.index_words() > 0
        assert engine.index_words() == 0  # nothing changed: nothing read again
        read.clear()
        after = engine.plan(Rename("shop/util.py:round_cents", "round_to_cents")).edit
    finally:
        engine.close()
    assert after == before
    assert set(read) < read_without
    assert all(b"round_cents" in (root / path).read_bytes() for path in read)

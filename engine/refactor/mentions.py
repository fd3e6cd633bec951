"""The words of each source file, kept by a long-lived engine, so that a refactoring's search for
the files that mention a name reads only the files that may.

A rename looks for its name in every file of the project (engine.refactor.corpus): on Django's
2,899 source files that is 17 MB read and searched on every call, a large share of a warm daemon's
CPU. Here each file's distinct runs of ``[A-Za-z0-9_]`` are kept, one a line, all files in one
blob (3 MB for Django), indexed in the daemon's idle time after a call; a search is one pass
over the blob.

Exact, not a guess: a file holding a needle holds the needle's longest word inside one of its
own words (a run of word bytes cannot cross a non-word byte), so a file whose words lack it
cannot hold the needle. A file's words are used only while the graph's facts of the file still
have the content hash they were read from, and a long-lived engine brings the graph up to date
with the disk before each call: a file changed since is read, as before.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from typing import Mapping, Protocol

from engine.workspace import read_bytes

_WORD = re.compile(rb"\w+")
"""A word as bytes see it: ASCII letters, digits and underscores (every other byte breaks a word)."""
_NOT_WORD_TO_SPACE = bytes(byte if chr(byte).isascii() and (chr(byte).isalnum() or byte == 0x5F) else 0x20 for byte in range(256))


class HasContent(Protocol):
    """A file's facts, as far as this module reads them: the hash of the content they describe."""

    @property
    def sha256(self) -> str: ...


def words_of(data: bytes) -> bytes:
    """The distinct words of ``data``, one a line (in no particular order)."""
    return b"\n".join(set(data.translate(_NOT_WORD_TO_SPACE).split()))


def longest_word(needle: bytes) -> bytes | None:
    """The needle's longest word, which every file holding the needle holds inside one of its
    own words; None for a needle without one (nothing to narrow by)."""
    return max(_WORD.findall(needle), key=len, default=None)


class FileWords:
    """The index as one call's graph sees it: which files it knows at their current content, and
    which of those hold a word inside one of theirs.

    Which files it knows is worked out when first asked, not when the call takes it: comparing
    every file's hash would otherwise come before a rename's
    request to its server, where the first question comes from the passes run beside it."""

    def __init__(self, blob: bytes, ends: list[int], paths: list[str], hashes: list[str], facts: Mapping[str, HasContent]) -> None:
        self._blob, self._ends, self._paths, self._hashes = blob, ends, paths, hashes
        # Read later in the call, as the rest of a plan reads the graph: the engine brings the
        # graph up to date before a call, and nothing changes it until the call is over.
        self._facts = facts
        self._known_files: set[str] | None = None

    @property
    def _known(self) -> set[str]:
        if self._known_files is None:
            facts = self._facts
            self._known_files = {path for path, content_hash in zip(self._paths, self._hashes)
                                 if (fact := facts.get(path)) is not None and fact.sha256 == content_hash}
        return self._known_files

    def knows(self, path: str) -> bool:
        return path in self._known

    def cannot_hold(self, needle: bytes) -> set[str]:
        """The known files that cannot hold ``needle``: none of their words holds its longest
        word. Empty for a needle without a word (nothing to narrow by)."""
        word = longest_word(needle)
        return self._known - self.files_with(word) if word is not None else set()

    def files_with(self, word: bytes) -> set[str]:
        """The indexed files one of whose words holds ``word`` (a run of word bytes)."""
        found: set[str] = set()
        blob, ends = self._blob, self._ends
        at = blob.find(word)
        while at != -1:
            number = bisect_right(ends, at)
            found.add(self._paths[number])
            at = blob.find(word, ends[number])  # on to the next file's words
        return found

    def __len__(self) -> int:
        return len(self._known)


class MentionIndex:
    """Each source file's words, with the hash of the content they were read from."""

    def __init__(self) -> None:
        self._paths: list[str] = []
        self._hashes: list[str] = []
        self._blob = b""
        self._ends: list[int] = []
        """Where each file's words end in the blob (the separator after them excluded)."""

    def update(self, root: str, facts: Mapping[str, HasContent]) -> int:
        """Index the files whose current content (``facts``' hashes) is not indexed yet, and forget
        files that are gone; the number indexed. A file that no longer has the hash the graph
        holds is left for a later update, after the graph has caught up with it."""
        held = {path: number for number, path in enumerate(self._paths)}
        paths: list[str] = []
        hashes: list[str] = []
        pieces: list[bytes] = []
        indexed = 0
        for path, fact in facts.items():
            number = held.get(path)
            if number is not None and self._hashes[number] == fact.sha256:
                words = self._blob[self._ends[number - 1] + 1 if number else 0:self._ends[number]]
            else:
                try:
                    data = read_bytes(f"{root}/{path}")
                except OSError:
                    continue
                if hashlib.sha256(data).hexdigest() != fact.sha256:
                    continue
                words = words_of(data)
                indexed += 1
            paths.append(path)
            hashes.append(fact.sha256)
            pieces.append(words)
        if indexed or paths != self._paths:
            self._paths, self._hashes, self._blob = paths, hashes, b"\n".join(pieces)
            self._ends, end = [], -1
            for words in pieces:
                end += len(words) + 1
                self._ends.append(end)
        return indexed

    def __len__(self) -> int:
        return len(self._paths)

    def current(self, facts: Mapping[str, HasContent]) -> FileWords:
        """The index for a graph whose files have ``facts``: a file is known while its facts
        still have the hash its words were read from."""
        return FileWords(self._blob, self._ends, self._paths, self._hashes, facts)

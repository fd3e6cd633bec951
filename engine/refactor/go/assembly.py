"""A Go name that the package's assembly uses cannot be renamed by gopls.

A function declared in Go without a body (``func writeBlocks(d *Digest, b []byte) int``) is
implemented in a ``.s`` file of its package, under its name (``TEXT ·writeBlocks(SB)``); assembly
also reaches Go variables and functions by name (``·prime1v``, ``CALL ·helper(SB)``). gopls renames
the Go side only: the build then fails with "missing function body", or the assembly no longer
links. The text of a ``.s`` file is not renamed here either (its symbols are not Go's), so a plan
that renames a name some assembly file of the package spells is refused, listed.
"""

from __future__ import annotations

import re

from engine.errors import ListingRefusal
from engine.refactor.corpus import Corpus


class UsedByAssembly(ListingRefusal):
    """The name is used by assembly files of its package, which the rename does not reach."""

    code = "used_by_assembly"
    listed_as = "uses"


def check(corpus: Corpus, folders: set[str], old_name: str, new_name: str) -> None:
    """Raises UsedByAssembly when a ``.s`` file in one of ``folders`` (the renamed declarations'
    packages) names ``old_name`` as a symbol of its package (``·old_name``)."""
    pattern = re.compile(rf"·{re.escape(old_name)}(?![\w])")
    uses = []
    for path in corpus.workspace_files():
        if not path.endswith(".s") or path.rpartition("/")[0] not in folders:
            continue
        data = corpus.bytes_of(path)
        text = data.decode("utf-8", errors="replace") if data is not None else ""
        uses += [f"{path}:{number}" for number, line in enumerate(text.split("\n"), 1) if pattern.search(line)]
    if uses:
        listing = "\n  ".join(uses[:10]) + (f"\n  … and {len(uses) - 10} more" if len(uses) > 10 else "")
        raise UsedByAssembly(
            f"renaming {old_name} to {new_name} is refused: assembly files of its package use {old_name} (a function "
            f"implemented in assembly, or a name the assembly reaches), and the rename cannot change them:\n  {listing}\n"
            f"rename it in the .s files by hand in the same change, or keep the name", uses)

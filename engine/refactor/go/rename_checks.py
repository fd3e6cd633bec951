"""gopls's own rename checks, surfaced as typed refusals rather than as a server that failed.

gopls refuses a rename that would change what the program means (a name that would conflict
with or shadow another, a concrete method whose new name would break an interface relation, a
built-in) with a JSON-RPC error whose message is its reasons, one per line, each after a
position (``dir/file.go:12:6: renaming this func "A" to "B" would conflict``). Without this
the engine read it as the server being unavailable, and offered a text rename.
"""

from __future__ import annotations

import re

from engine.errors import ListingRefusal, Refused, ServerAnsweredError, ServiceUnavailable

_RENAME_METHODS = frozenset({"textDocument/rename", "textDocument/prepareRename"})

_CONFLICT = re.compile(r"renaming this |would conflict|conflicts with|would shadow|become shadowed|no longer assignable"
                       r"|you cannot have a|is not a valid imported package name")
"""What gopls's conflict checks say (golang/rename_check.go)."""

_NOT_RENAMEABLE = re.compile(r"cannot be renamed|can't rename|cannot rename|invalid identifier to rename"
                             r"|must be renamed at its declaration")
"""What gopls says of a name it will not rename at all (a built-in, a package it cannot move)."""


class RenameConflict(ListingRefusal):
    """gopls's checks found that the rename would change what the program means."""

    code = "rename_conflict"
    listed_as = "conflicts"


class NotRenameable(RenameConflict):
    """gopls will not rename this name at all (a built-in, ``_``, a package it cannot move)."""

    code = "not_renameable"


def server_refusal(error: ServiceUnavailable, old_name: str, new_name: str) -> Refused | None:
    """The typed refusal gopls's error on a rename stands for, or None when it is another failure."""
    if not isinstance(error, ServerAnsweredError) or error.method not in _RENAME_METHODS:
        return None
    lines = [line.strip() for line in error.detail.splitlines() if line.strip()]
    if not lines:
        return None
    listing = "\n  ".join(lines)
    if _CONFLICT.search(error.detail):
        hint = ("start the rename at the interface's method to rename its implementations with it"
                if "no longer assignable" in error.detail else "choose another name, or rename the other declaration first")
        return RenameConflict(f"{error.server} refuses to rename {old_name} to {new_name}, which would change what the "
                              f"program means:\n  {listing}\n{hint}", lines)
    if _NOT_RENAMEABLE.search(error.detail):
        return NotRenameable(f"{error.server} will not rename {old_name}:\n  {listing}", lines)
    return None

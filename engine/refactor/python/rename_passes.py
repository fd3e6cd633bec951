"""Python's rename passes, in the order they run on the server's (or jedi's) edit.

Adding a hazard: a module here with a class that has the :class:`RenamePass` shape (a ``name``,
its ``hazards``, ``prepare`` and ``add``), and one line in :data:`RENAME_PASSES`.
"""

from __future__ import annotations

from engine.edits.model import WorkspaceEdit
from engine.refactor.pass_protocol import RenamePass, RenameRequest, merge
from engine.refactor.python.copied_receivers import CopiedReceivers
from engine.refactor.python.jedi_rename import jedi_rename
from engine.refactor.python.receiver_passes import InferredReceivers, LocalTwins, NameCaptures, SelfHomonyms
from engine.refactor.python.string_passes import AllEntries, Doctests, DottedStrings, DynamicLookups
from engine.refactor.python.symbol_passes import (
    AttributeLists, DynamicOverrides, EntryPoints, KeywordArguments, NameUses, UnfollowedMirrors,
)

RENAME_PASSES: tuple[type[RenamePass], ...] = (
    AllEntries,
    DottedStrings,
    KeywordArguments,
    NameUses,
    DynamicOverrides,
    AttributeLists,
    EntryPoints,
    UnfollowedMirrors,
    Doctests,
    DynamicLookups,
    SelfHomonyms,
    InferredReceivers,
    CopiedReceivers,
    LocalTwins,  # after every pass that adds edits: a module with a twin keeps its name
    NameCaptures,  # last: judges the final edit
)
"""Each is made anew for each rename; its notes come in this order."""

WITHOUT_SERVER = "scope-aware rename by jedi"
"""The note of a rename made by :func:`rename_without_server`."""


def rename_without_server(request: RenameRequest) -> WorkspaceEdit:
    """jedi's scope-aware rename of every target, merged: Python's rename when no server answers."""
    return merge([jedi_rename(request.workspace, t.file, t.position, request.new_name) for t in request.targets])

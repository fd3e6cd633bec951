"""Rename passes that settle a Python rename's edit last: ``self.old`` uses that are another
class's homonym, ``x.old`` uses whose receiver is inferred, modules with a twin of their own,
and names whose meaning the rename would change."""

from __future__ import annotations

from engine.edits.model import WorkspaceEdit
from engine.refactor.corpus import Corpus
from engine.refactor.pass_protocol import RenameRequest
from engine.refactor.python import member_lookup
from engine.refactor.python.inferred_receivers import (
    Declaration, FixtureMember, attribute_uses, inferred_receiver_uses, without_self_homonyms,
)
from engine.refactor.python.local_twins import keep_local_twins, possible_twins
from engine.refactor.python.name_capture import name_captures
from engine.refactor.rename import NameClash
from engine.symbols import Source


def _declarations(request: RenameRequest) -> list[Declaration]:
    return [Declaration(t.file, t.position) for t in request.targets]


def _fixture_member(request: RenameRequest, corpus: Corpus) -> FixtureMember | None:
    """What a test's fixture parameters hold (a member's uses on them), for a symbol the graph resolves."""
    facts = request.facts
    if facts is None or facts.symbol is None:
        return None
    return member_lookup.receiver_members(facts.context.graph(), facts.symbol.name)(corpus)


class SelfHomonyms:
    """The server's edits of ``self.old`` that resolve, in their class, to another class's member."""

    name = "self_homonyms"
    hazards = ("self attributes of another class",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request = corpus, request

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        if source is not Source.LSP:
            return edit, []  # jedi's edit follows scopes, not the server's guesses
        member = _fixture_member(self.request, self.corpus)
        if member is None:
            return edit, []
        return without_self_homonyms(self.corpus, edit, self.request.old_name, _declarations(self.request), member)


class InferredReceivers:
    """``x.old`` uses the edit leaves whose receiver jedi or a pytest fixture resolves to a renamed declaration."""

    name = "inferred_receivers"
    hazards = ("attribute uses on inferred receivers", "pytest fixture values")

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request = corpus, request
        self.uses = attribute_uses(corpus, request.old_name)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        request, by_server = self.request, source is Source.LSP
        member = _fixture_member(request, self.corpus)
        if member is None and not by_server:
            return edit, []  # jedi's own edit: only fixtures can add to it
        return inferred_receiver_uses(request.workspace, self.corpus, edit, request.old_name, request.new_name,
                                      _declarations(request), self.uses, ask_jedi=by_server, fixture_member=member)


class LocalTwins:
    """A module with a twin of its own (it defines the old name and imports the renamed symbol)
    keeps its name, whatever a pass added there: after every pass that adds edits."""

    name = "local_twins"
    hazards = ("modules defining the old name themselves",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request = corpus, request
        self.possible = possible_twins(corpus, corpus.mentioning(request.old_name, "python"), request.old_name)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        request = self.request
        return keep_local_twins(self.corpus, edit, request.primary, request.old_name, request.new_name, self.possible)


class NameCaptures:
    """Refuses (NameClash) an edit that would change what a Python name means: last, on the final edit."""

    name = "name_captures"
    hazards = ("names captured by the new name",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request = corpus, request

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        old_name, new_name = self.request.old_name, self.request.new_name
        captures = name_captures(self.corpus, edit, old_name, new_name)
        if captures:
            listing = "\n  ".join(capture.message() for capture in captures)
            raise NameClash(f"renaming {old_name} to {new_name} would change what names mean:\n  {listing}\n"
                            "choose another name, or rename the other binding first")
        return edit, []

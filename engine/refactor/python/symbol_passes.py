"""Rename passes that rest on the project graph (``RenameRequest.facts``): keyword arguments of a
renamed parameter, uses by name in strings and attribute reads, mirror modules' own bindings,
overrides in classes built on run-time bases, attribute-name lists and entry points."""

from __future__ import annotations

from engine.edits.model import FileChange, WorkspaceEdit
from engine.refactor.corpus import Corpus
from engine.refactor.pass_protocol import GraphFacts, RenameRequest, merge
from engine.refactor.python import attribute_strings, member_lookup
from engine.refactor.python.attribute_lists import with_attribute_lists
from engine.refactor.python.dynamic_bases import DynamicSubclass, dynamic_subclasses, with_dynamic_overrides
from engine.symbols import Source, Symbol


class KeywordArguments:
    """``old=`` keywords of the calls to a renamed parameter's function, found by name."""

    name = "keyword_arguments"
    hazards = ("keyword arguments of a renamed parameter",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.request = request

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        facts = self.request.facts
        if facts is None or facts.parameter is None:
            return edit, []
        # Here, not at the top: LibCST's import is slow and would delay every cold rename's first
        # request to its server.
        from engine.refactor.python import keyword_arguments

        context = facts.context
        return keyword_arguments.keyword_call_sites(
            context.workspace, context.graph(), facts.parameter, self.request.new_name, edit)


def _symbol_facts(request: RenameRequest) -> tuple[GraphFacts, Symbol] | None:
    facts = request.facts
    return (facts, facts.symbol) if facts is not None and facts.symbol is not None else None


class NameUses:
    """Uses by name the graph resolves to the symbol (string annotations, attribute strings, code),
    and, with ``mirrors``, the old name's own bindings in mirror modules and their uses."""

    name = "name_uses"
    hazards = ("string annotations", "attribute strings", "mirror modules")

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request, self.found = corpus, request, _symbol_facts(request)
        if self.found is None:
            return
        facts, symbol = self.found
        queries = facts.context.graph()
        self.uses = attribute_strings.find_name_uses(queries, symbol, corpus)
        twins = _mirror_bindings(facts, symbol, corpus) if facts.mirrors else []
        self.twin_uses = [(twin, [attribute_strings.definition_use(twin, corpus),
                                  *attribute_strings.find_name_uses(queries, twin, corpus)]) for twin in twins]
        attribute_strings.scan_code_uses([use for _twin, found in self.twin_uses for use in found] + self.uses, corpus)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        if self.found is None:
            return edit, []
        symbol, new_name = self.found[1], self.request.new_name
        extended, notes = attribute_strings.add_name_uses(edit, self.uses, new_name, self.corpus, symbol)
        for twin, found in self.twin_uses:
            extended, _twin_notes = attribute_strings.add_name_uses(extended, found, new_name, self.corpus, twin)
            notes.append(f"mirror binding renamed too: {twin.file}:{twin.selection_range.start.line + 1} "
                         f"mirrors the public names of {symbol.file} (turn mirrors off to leave it)")
        return extended, notes


def _mirror_bindings(facts: GraphFacts, symbol: Symbol, corpus: Corpus) -> list[Symbol]:
    """The old name's own top-level binding in each mirror module of the symbol's module."""
    found = []
    for path, _shared in attribute_strings.mirror_modules(facts.context.graph(), symbol, corpus):
        found += [s for s in facts.context.outline(path).symbols if s.name == symbol.name and len(s.path) == 1]
    return found


class DynamicOverrides:
    """A member's overrides in classes built on a run-time value (a function's local or parameter)."""

    name = "dynamic_overrides"
    hazards = ("overrides in classes with run-time bases",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request, self.found = corpus, request, _symbol_facts(request)
        # A member: a class built on a run-time value may override it.
        self.subclasses: list[DynamicSubclass] = (
            dynamic_subclasses(corpus, self.found[1].name) if self.found is not None and len(self.found[1].path) > 1 else [])

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        if self.found is None:
            return edit, []
        facts, symbol = self.found
        wanted = {(t.file, t.position.line) for t in self.request.targets}
        return with_dynamic_overrides(facts.context.workspace, self.corpus, edit, self.subclasses, symbol.name,
                                      self.request.new_name, wanted, member_lookup.member_of(facts.context.graph(), symbol.name))


class AttributeLists:
    """A top-level class's attribute-name collections (``__slots__``, ``_fields``) naming a member."""

    name = "attribute_lists"
    hazards = ("attribute-name lists",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.corpus, self.request, self.found = corpus, request, _symbol_facts(request)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        if self.found is None or len(self.found[1].path) != 2:  # a member of a top-level class
            return edit, []
        symbol = self.found[1]
        return with_attribute_lists(self.corpus, edit, symbol.file, symbol.path[0].name, symbol.name, self.request.new_name)


class EntryPoints:
    """Entry points (``tool = "pkg.cli:main"``) naming the symbol are references: the installed
    command imports it by that name. One naming it through a module that re-exports it counts
    when the rename renamed that module's binding too."""

    name = "entry_points"
    hazards = ("packaging entry points",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        self.request, self.found = request, _symbol_facts(request)

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        if self.found is None:
            return edit, []
        from engine.refactor.python.module_mentions import entry_point_edits, entry_point_references

        facts, symbol = self.found
        new_name, context = self.request.new_name, facts.context
        references = entry_point_references(context.workspace)
        if not references:
            return edit, []
        project = context.graph().project
        renamed_in = {change.path for change in edit.operations
                      if isinstance(change, FileChange) and any(e.new_text == new_name for e in change.edits)}
        naming = [reference for reference in references
                  if (file := project.module_file(reference.module)) is not None
                  and (file == symbol.file or (file in renamed_in and reference.attrs[0] == symbol.path[0].name))]
        changes, places = entry_point_edits(context.workspace, naming, tuple(segment.name for segment in symbol.path), new_name, None)
        if not changes:
            return edit, []
        return merge([edit, WorkspaceEdit(tuple(changes))]), [f"entry points renamed too: {', '.join(places)}"]


class UnfollowedMirrors:
    """Without ``mirrors``: the mirror modules that bind the old name themselves, reported."""

    name = "unfollowed_mirrors"
    hazards = ("mirror modules left as they are",)

    def prepare(self, corpus: Corpus, request: RenameRequest) -> None:
        found = _symbol_facts(request)
        self.warnings = ([] if found is None or found[0].mirrors
                         else attribute_strings.mirror_warnings(found[0].context.graph(), found[1], corpus))

    def add(self, edit: WorkspaceEdit, source: Source) -> tuple[WorkspaceEdit, list[str]]:
        return edit, self.warnings

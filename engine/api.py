"""The one facade every front end calls. It takes engine types and returns engine values.

Front ends parse their input into engine types (an :class:`~engine.names.Address`,
a :class:`~engine.symbols.SymbolKind`), make one call here, and render what
comes back; no front end holds logic of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from typing import Callable

from engine.edits.apply import Transactions
from engine.edits.session import EditSession
from engine.edits.model import paths_of, WorkspaceEdit
from engine.errors import FileNotInWorkspace, GraftError, Refused, ServiceUnavailable, SymbolNotFound, UnsafePath, UsageError
from engine.extract import FileSymbols, SymbolExtractor
from engine.extract.reconcile import add_dropped, reconcile
from engine.graph import GraphQueries, IndexStats, ProjectIndex
from engine.graph.index import Progress
from engine.graph.queries import EdgeRef, OverviewEntry
from engine.languages import language_of
from engine.names import Address, PositionAddress, SymbolAddress, parse_address
from engine.navigate import NavigationResult, Navigator
from engine.navigation import Diagnostic
from engine.ports import LanguageServices, Tools
from engine.refactor.attribute_lists import with_attribute_lists
from engine.refactor.dynamic_bases import dynamic_subclasses, with_dynamic_overrides
from engine.refactor.inferred_receivers import FixtureMember
from engine.refactor import attribute_strings, keyword_arguments, member_lookup, move, move_other, rename, rename_file, symbol_edits
from engine.refactor.corpus import Corpus
from engine.refactor.import_check import check_imports
from engine.refactor.name_uses import name_uses
from engine.refactor.plan import RefactorPlan
from engine.positions import Position, Range, split_lines
from engine.resolve import ambiguous, match_name_path, not_found, symbol_at
from engine.settings import load_engine_settings
from engine.symbols import Confidence, Source, Symbol, SymbolKind
from engine.workspace import Skipped, SourceFile, Workspace


@dataclass(frozen=True)
class FindResult:
    matches: list[Symbol]
    files_searched: int
    skipped: list[Skipped]


@dataclass(frozen=True)
class SymbolText:
    symbol: Symbol
    file: SourceFile
    first_line: int
    """1-based number of the first line in ``lines``."""
    lines: list[str]


@dataclass(frozen=True)
class Explanation:
    """What a symbol is: its source, and its neighbours in the project graph."""

    text: SymbolText
    callers: list[EdgeRef]
    callees: list[EdgeRef]
    supertypes: list[EdgeRef]
    subtypes: list[EdgeRef]


@dataclass(frozen=True)
class SymbolsListing:
    files: list[FileSymbols]
    skipped: list[Skipped]


def _spanning(family: list[Symbol], text: str) -> Symbol:
    """One symbol covering a family of definitions that stand together (only blank and comment
    lines between them); refused when they do not, since deleting the span would take other code."""
    if len(family) == 1:
        return family[0]
    lines = split_lines(text)
    for before, after in zip(family, family[1:]):
        between = lines[before.range.last_line:after.range.start.line]
        if any(line.strip() and not line.lstrip().startswith("#") for line in between):
            raise Refused(
                f"the {len(family)} definitions of {family[0].name} do not stand together (other code lies between "
                f"lines {before.range.last_line} and {after.range.start.line + 1}); delete them one by one with "
                + ", ".join(m.address for m in family)
            )
    return replace(family[0], range=Range(family[0].range.start, family[-1].range.end))


class SourcePreference(str, Enum):
    """Where symbols may come from: ``auto`` is the server when it answers, else the syntax tree, else regex."""

    AUTO = "auto"
    LSP = "lsp"
    AST = "ast"
    REGEX = "regex"


class Engine:
    def __init__(
        self,
        workspace: Workspace,
        *,
        services: LanguageServices | None = None,
        tools: Tools | None = None,
        source: SourcePreference = SourcePreference.AST,
        extractor: SymbolExtractor | None = None,
    ) -> None:
        self.workspace = workspace
        self.services = services
        self.tools = tools
        self.source = source
        self.settings = load_engine_settings(workspace.root)
        self._extractor = extractor or SymbolExtractor()
        self._index: ProjectIndex | None = None
        self._index_stats: IndexStats | None = None
        self._edited_since_refresh: set[str] = set()
        """Files an apply or undo wrote that the graph has not re-read yet: it re-reads them when
        next asked, not while the edit's caller waits (83 files cost 1-3 s, mostly asking the
        server for their symbols again)."""
        self._served_outlines: dict[str, tuple[str, FileSymbols]] = {}
        """path → (sha256, the server's outline of that content): a refactoring asks for the same
        file's outline several times, and a server round trip each time costs more than the rest."""
        self.transactions = Transactions(workspace, dirty_check=tools.dirty_files if tools is not None else None)
        # A transaction interrupted by a crash is rolled back before anything else reads the files.
        # Also moves aside whatever under .graft cannot be trusted (a workspace can ship one).
        self.recovered = self.transactions.recover()

    def close(self) -> None:
        """Shut down whatever language servers this engine started, and close the index cache."""
        if self.services is not None:
            self.services.close()
        if self._index is not None:
            self._index.close()
            self._index = None

    # -- the project graph -----------------------------------------------------

    def index(self, progress: Progress | None = None) -> IndexStats:
        """Bring the project graph up to date with the disk (cold, incremental or warm)."""
        if self._index is None:
            # With a server preference, the graph's symbols are the server's where it answers.
            serve = self._served_symbols if self.source in (SourcePreference.AUTO, SourcePreference.LSP) and self.services else None
            self._index = ProjectIndex(self.workspace, progress=progress, served_symbols=serve)
        self._index.progress = progress
        self._edited_since_refresh.clear()  # a load compares every file with the disk anyway
        self._index_stats = self._index.load()
        return self._index_stats

    def graph(self) -> GraphQueries:
        """Queries over the project graph, indexing first if this engine has not yet, and
        re-reading first the files edited since it was last asked."""
        if self._index is None or self._index_stats is None:
            self.index()
        elif self._edited_since_refresh:
            edited = sorted(self._edited_since_refresh)
            self._edited_since_refresh.clear()
            self._index.refresh(edited)
        return GraphQueries(self._index.graph)  # type: ignore[union-attr]

    def _files_edited(self, paths: list[str]) -> None:
        self._edited_since_refresh.update(paths)

    def references(self, address: str) -> NavigationResult:
        """References to a symbol: the server's when it can answer, else the graph's, labelled."""
        return self._navigator().references(address)

    def definition(self, address: str) -> NavigationResult:
        """Where the name at ``FILE:LINE:COL`` is defined: the server's answer, else the graph's."""
        return self._navigator().definition(address)

    def diagnostics(self, path: str) -> list[Diagnostic]:
        """The language server's diagnostics for a file as it is on disk."""
        if self.services is None:
            raise ServiceUnavailable("diagnostics need a language server, and no language-server support is installed")
        return self.services.diagnostics(self.workspace.read(path)).value

    def _navigator(self) -> Navigator:
        use_server = self.source in (SourcePreference.AUTO, SourcePreference.LSP)
        return Navigator(self.workspace, self.graph(), self.services, use_server, self.source is SourcePreference.LSP)

    # -- edits -------------------------------------------------------------------

    def edits(self) -> EditSession:
        files_edited = self._files_edited if self._index is not None else None
        # Importers come from the graph when it is loaded (a refactoring loads it); a bare apply
        # compares the touched files alone rather than index the project for it.
        importers = (lambda paths: self.graph().importing_files(paths)) if self._index is not None else None
        return EditSession(self.workspace, self.transactions, self.services, self.tools, files_edited, importers)

    # -- symbol edits ------------------------------------------------------------

    def plan_replace(self, address: str, new_text: str, *, include_doc_comment: bool = False) -> RefactorPlan:
        symbol, source = self._target(address)
        return symbol_edits.plan_replace(symbol, source, new_text, include_doc_comment=include_doc_comment)

    def plan_insert(self, address: str, text: str, *, before: bool) -> RefactorPlan:
        symbol, source = self._target(address)
        return symbol_edits.plan_insert(symbol, source, text, before=before)

    def plan_delete(self, address: str) -> RefactorPlan:
        """Delete a symbol, refusing (with every place listed) while anything outside it refers to it.
        An overload stack or a property's accessors go together (one name in Python)."""
        family = self.resolve_binding(parse_address(address))
        source = self.workspace.read(family[0].file)
        symbol = _spanning(family, source.text)
        queries = self.graph()
        found = self.references(family[-1].address)
        outside = []
        for location in found.locations:
            inside = location.file == symbol.file and symbol.range.start.line <= location.range.start.line < symbol.range.last_line
            if not inside:
                enclosing = queries.project.enclosing_name(location.file, location.range.start.line + 1)
                where = f" (in {enclosing})" if enclosing else ""
                outside.append(f"{location.file}:{location.range.start.line + 1}{where}")
        if found.source is Source.AST and language_of(symbol.file) != "python":
            # The graph resolves uses by name only in Python; elsewhere it would miss them.
            raise ServiceUnavailable(
                f"cannot check the references to {symbol.address} without a language server for "
                f"{language_of(symbol.file) or 'this file'}; nothing was deleted"
            )
        if found.source is Source.AST:
            # The graph knows calls, imports and bases, not every read of a name (decorators,
            # default arguments, names passed along): any code use by name blocks the delete too.
            own = range(symbol.range.start.line, symbol.range.last_line)
            listed = {entry.split(" ")[0] for entry in outside}
            for path, line in name_uses(Corpus(self.workspace, list(queries.project.facts)), symbol.name, symbol.file, own):
                if f"{path}:{line}" not in listed:
                    listed.add(f"{path}:{line}")
                    enclosing = queries.project.enclosing_name(path, line)
                    outside.append(f"{path}:{line}" + (f" (in {enclosing})" if enclosing else "") + " [by name]")
        exports = queries.project.facts[symbol.file].exports if symbol.file in queries.project.facts else None
        if exports and len(symbol.path) == 1 and symbol.name in exports:
            outside.append(f"{symbol.file} (listed in __all__)")
        plan = symbol_edits.plan_delete(symbol, source, outside)
        note = f"references checked by {found.source.value} ({found.confidence.value})"
        return replace(plan, warnings=[*plan.warnings, note, *found.notes])

    def plan_rename(self, address: str, new_name: str, *, text: bool = False, mirrors: bool = True) -> RefactorPlan:
        """Rename the symbol an address names (or, for FILE:LINE:COL, the name at that position)."""
        parsed = parse_address(address)
        extend: rename.Extension | None = None
        fixtures: Callable[[Corpus], FixtureMember] | None = None
        if isinstance(parsed, PositionAddress) and parsed.column is not None:
            file, position = parsed.file, Position(parsed.line - 1, parsed.column - 1)
            line = split_lines(self.workspace.read(file).text)[position.line] if position.line >= 0 else ""
            match = next((m for m in re.finditer(r"[\w$]+", line) if m.start() <= position.column < m.end()), None)
            if match is None:
                raise SymbolNotFound(f"no name at {address}")
            old_name = match.group()
            rename.check_name(new_name, language_of(file))
            targets = [rename.RenameTarget(file, position)]
            dotted = None
            parameter = keyword_arguments.parameter_at(self.workspace, file, position) if language_of(file) == "python" else None
            if parameter is not None:
                queries = self.graph()
                def keywords(corpus: Corpus) -> Callable[[WorkspaceEdit], tuple[WorkspaceEdit, list[str]]]:
                    return lambda edit: keyword_arguments.keyword_call_sites(self.workspace, queries, parameter, new_name, edit)

                extend = keywords
        else:
            family = self.resolve_binding(parsed)
            symbol = family[-1]  # an overload stack's implementation, a property's last accessor
            old_name = symbol.name
            rename.check_name(new_name, language_of(symbol.file))
            rename.check_clash(family, self._siblings(symbol), new_name)
            rename.check_not_compiled(self.workspace, symbol.file)
            targets = [target for member in family for target in self._rename_targets(member)]
            dotted = self._dotted_path(symbol)
            if language_of(symbol.file) == "python":
                queries = self.graph()

                def name_uses(corpus: Corpus) -> Callable[[WorkspaceEdit], tuple[WorkspaceEdit, list[str]]]:
                    uses = attribute_strings.find_name_uses(queries, symbol, corpus)
                    twins = self._mirror_bindings(queries, symbol, corpus) if mirrors else []
                    twin_uses = [(twin, [attribute_strings.definition_use(twin, corpus),
                                         *attribute_strings.find_name_uses(queries, twin, corpus)]) for twin in twins]
                    unfollowed = [] if mirrors else attribute_strings.mirror_warnings(queries, symbol, corpus)
                    # A member: a class built on a run-time value may override it.
                    subclasses = dynamic_subclasses(corpus, symbol.name) if len(symbol.path) > 1 else []
                    wanted = {(t.file, t.position.line) for t in targets}

                    def add(edit: WorkspaceEdit) -> tuple[WorkspaceEdit, list[str]]:
                        extended, notes = attribute_strings.add_name_uses(edit, uses, new_name, corpus, symbol)
                        for twin, found in twin_uses:
                            extended, _twin_notes = attribute_strings.add_name_uses(extended, found, new_name, corpus, twin)
                            notes.append(f"mirror binding renamed too: {twin.file}:{twin.selection_range.start.line + 1} "
                                         f"mirrors the public names of {symbol.file} (pass --no-mirrors to leave it)")
                        extended, overrides = with_dynamic_overrides(
                            self.workspace, corpus, extended, subclasses, symbol.name, new_name, wanted, member_lookup.member_of(queries, symbol.name))
                        if len(symbol.path) == 2:  # a member of a top-level class
                            extended, listed = with_attribute_lists(corpus, extended, symbol.file, symbol.path[0].name, symbol.name, new_name)
                            overrides += listed
                        return extended, [*notes, *overrides, *unfollowed]

                    return add

                extend = name_uses
                fixtures = member_lookup.receiver_members(queries, old_name)
        if old_name == new_name:
            raise UsageError(f"{address} is already called {new_name}")
        use_server = self.source in (SourcePreference.AUTO, SourcePreference.LSP)
        if self.source is SourcePreference.LSP and self.services is None:
            raise ServiceUnavailable("no language-server support is installed (the lsp_pool package is missing)")
        return rename.plan_rename(
            self.workspace, self.services, use_server, targets, old_name, new_name, text=text, dotted=dotted, extend=extend,
            files=list(self.graph().project.facts), require_server=self.source is SourcePreference.LSP, fixtures=fixtures,
        )

    def plan_move(
        self, address: str, dest: str, *, create: bool = False, shim: bool = False, import_check: bool = True,
    ) -> RefactorPlan:
        """Move a top-level Python function, class or constant to another module (see engine.refactor.move);
        an overload stack moves whole. With ``import_check``, the source and destination are imported
        with the plan applied (in a scratch copy) and a move that breaks an import is refused."""
        symbol = self.resolve_binding(parse_address(address))[-1]
        if len(symbol.path) != 1:
            raise UsageError(f"{symbol.address} is not top-level; only top-level functions, classes and constants can move")
        if language_of(symbol.file) != "python":
            if shim:
                raise UsageError("--shim is for Python moves")
            use_server = self.source in (SourcePreference.AUTO, SourcePreference.LSP)
            return move_other.plan_other_move(self.workspace, self.services, use_server, symbol, dest, create=create)
        stub, twins = self._stub_twins(symbol)
        request = move.MoveRequest(symbol, dest, create=create, shim=shim, stub_moved=bool(twins))
        plan = move.plan_move(self.workspace, self.graph(), request)
        if twins:
            plan = self._with_stub_moved(plan, twins[-1], stub, self.workspace.resolve(dest)[0][:-3] + ".pyi")
        return self._import_checked(plan, [symbol.file, self.workspace.resolve(dest)[0]], f"moving {symbol.address} to {dest}") \
            if import_check else plan

    def plan_rename_file(self, old: str, new: str, *, import_check: bool = True) -> RefactorPlan:
        """Move a file and update its importers (the server's willRenameFiles, else LibCST for Python);
        with ``import_check``, the moved module and the Python files updated are imported as planned."""
        use_server = self.source in (SourcePreference.AUTO, SourcePreference.LSP)
        plan = rename_file.plan_rename_file(self.workspace, self.graph(), self.services, use_server, old, new)
        if not import_check or not plan.edit.touched or not old.endswith(".py"):
            return plan
        return self._import_checked(plan, [p for p in plan.edit.touched if p != self.workspace.resolve(old)[0]], f"renaming {old} to {new}")

    def _stub_twins(self, symbol: Symbol) -> tuple[str, list[Symbol]]:
        """The source's ``.pyi`` stub and its top-level declarations of the symbol's name (an overload stack: several)."""
        stub = symbol.file[:-3] + ".pyi"
        if not symbol.file.endswith(".py") or not (self.workspace.root / stub).is_file():
            return stub, []
        return stub, [s for s in self.outline(stub).symbols if s.name == symbol.name]

    def _with_stub_moved(self, plan: RefactorPlan, twin: Symbol, stub: str, dest_stub: str) -> RefactorPlan:
        """The move plus the stub declaration's own move into the destination's stub (made when
        missing, since the source has one). Importers are the main plan's (it rewrote the .pyi
        ones with the .py ones); only the two stubs come from this one."""
        stub_plan = move.plan_move(self.workspace, self.graph(), move.MoveRequest(twin, dest_stub, create=True))
        own = [op for op in stub_plan.edit.operations if set(paths_of(op)) <= {stub, dest_stub}]
        return replace(
            plan, edit=WorkspaceEdit((*plan.edit.operations, *own), plan.edit.annotations),
            warnings=[*plan.warnings, f"its stub declaration moved too: {stub} -> {dest_stub}", *stub_plan.warnings],
        )

    def _import_checked(self, plan: RefactorPlan, paths: list[str], what: str) -> RefactorPlan:
        checked = check_imports(self.workspace, self.graph(), self.tools, plan.edit, paths, what)
        return replace(plan, warnings=[*plan.warnings, checked.note]) if checked.note else plan

    def _dotted_path(self, symbol: Symbol) -> str | None:
        """``pkg.mod.Name`` (or ``pkg.mod.Class.method``) for a Python symbol, as strings name it."""
        if language_of(symbol.file) != "python":
            return None
        module = self.graph().project.module_name(symbol.file)
        return f"{module}.{'.'.join(s.name for s in symbol.path)}" if module else None

    def _rename_targets(self, symbol: Symbol) -> list[rename.RenameTarget]:
        """The symbol, the same method everywhere in its class hierarchy, and the stub twin of each."""
        declarations = [symbol]
        # An attribute set on self in a subclass is the base's attribute too: fields have a hierarchy as methods do.
        if symbol.kind in (SymbolKind.METHOD, SymbolKind.PROPERTY, SymbolKind.FIELD) and language_of(symbol.file) == "python":
            family = self.graph().hierarchy_methods(f"{symbol.file}:{symbol.name_path}")
            for ref in family:
                try:
                    found = self.resolve(parse_address(f"{ref.path}:{ref.name_path}"))
                except GraftError:
                    continue
                if found.address != symbol.address:
                    declarations.append(found)
        targets = []
        for declaration in declarations:
            targets.append(rename.RenameTarget(declaration.file, declaration.selection_range.start))
            stub = declaration.file[:-3] + ".pyi" if declaration.file.endswith(".py") else None
            if stub is not None and (self.workspace.root / stub).is_file():
                twins = [s for top in self._extractor.extract(self.workspace.read(stub)).symbols for s in top.walk()
                         if s.name_path == declaration.name_path]
                targets += [rename.RenameTarget(stub, twin.selection_range.start) for twin in twins]
        return targets

    def _mirror_bindings(self, queries: GraphQueries, symbol: Symbol, corpus: Corpus) -> list[Symbol]:
        """The old name's own top-level binding in each mirror module of the symbol's module."""
        found = []
        for path, _shared in attribute_strings.mirror_modules(queries, symbol, corpus):
            found += [s for s in self.outline(path).symbols if s.name == symbol.name and len(s.path) == 1]
        return found

    def _siblings(self, symbol: Symbol) -> list[Symbol]:
        listing = self.outline(symbol.file)
        parent_path = symbol.path[:-1]
        return [s for top in listing.symbols for s in top.walk() if s.path[:-1] == parent_path]

    def _target(self, address: str) -> tuple[Symbol, SourceFile]:
        symbol = self.resolve(parse_address(address))
        return symbol, self.workspace.read(symbol.file)

    def pyproject_text(self) -> str | None:
        path = self.workspace.root / "pyproject.toml"
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    # -- reading -------------------------------------------------------------

    def outline(self, path: str) -> FileSymbols:
        """The symbol tree of one file, from the best source the preference allows, labelled with it."""
        source = self.workspace.read(path)
        if self.source is SourcePreference.REGEX:
            return self._extractor.extract_with_regex(source)
        if self.source is SourcePreference.AST:
            return self._extractor.extract(source)
        known = self._served_outlines.get(source.path)
        if known is not None and known[0] == source.sha256:
            return known[1]
        notes: list[str] = []
        served = self._serve(source, notes)
        if served is not None:
            if len(self._served_outlines) >= 256:
                self._served_outlines.clear()
            self._served_outlines[source.path] = (source.sha256, served)
            return served
        fallback = self._extractor.extract(source)
        return replace(fallback, notes=notes + fallback.notes)

    def _served_symbols(self, source: SourceFile, syntactic: FileSymbols) -> FileSymbols | None:
        """For the index: the server's symbols for a file, or None to use the tree."""
        return self._serve(source, [], syntactic) if source.language is not None else None

    def _serve(self, source: SourceFile, notes: list[str], syntactic: FileSymbols | None = None) -> FileSymbols | None:
        """The server's symbols reconciled with the file's tree (``syntactic``: its symbols, when
        the caller has them), or None with the reason in ``notes`` (with ``--source lsp`` the
        reason is raised instead)."""
        required = self.source is SourcePreference.LSP
        if self.services is None:
            if required:
                raise ServiceUnavailable("no language-server support is installed (the lsp_pool package is missing)")
            notes.append("no language-server support is installed")
            return None
        try:
            served = self.services.document_symbols(source)
        except ServiceUnavailable as error:
            if required:
                raise
            notes.append(f"language server unavailable: {error.message}")
            return None
        if not served.symbols and not required:
            notes.append("the language server returned no symbols")
            return None
        syntactic = syntactic if syntactic is not None else self._extractor.extract(source)
        if syntactic.confidence is Confidence.HIGH or syntactic.source is not Source.AST:
            return replace(served, symbols=reconcile(served.symbols, syntactic.symbols))
        # Syntax errors: a server may silently drop what follows them, where the tree recovers.
        dropped = add_dropped(served.symbols, syntactic.symbols)
        merged_notes = [*served.notes, "the file has syntax errors"]
        if dropped:
            merged_notes.append(f"the server's outline lacked {len(dropped)} symbol(s) the syntax tree has, added from it "
                                f"(source ast): {', '.join(dropped[:8])}" + (" …" if len(dropped) > 8 else ""))
        return replace(served, symbols=reconcile(served.symbols, syntactic.symbols), confidence=Confidence.MEDIUM, notes=merged_notes)

    def symbols(self, under: str = ".") -> SymbolsListing:
        """The symbol trees of every source file under a folder, with the files skipped and why."""
        scan = self.workspace.scan(under)
        files: list[FileSymbols] = []
        skipped = list(scan.skipped)
        for path in scan.files:
            if language_of(path) is None:
                continue
            try:
                files.append(self.outline(path))
            except GraftError as error:
                skipped.append(Skipped(path, getattr(error, "reason", error.message)))
        return SymbolsListing(files, skipped)

    def find(self, address: Address, kind: SymbolKind | None = None) -> FindResult:
        """Every symbol an address names; workspace-wide when it names no file."""
        if isinstance(address, PositionAddress):
            found = symbol_at(self.outline(address.file), address)
            return FindResult([found], 1, [])
        listing = self._files_for(address)
        matches = match_name_path(listing.files, address.name_path, kind)
        if not matches:
            where = address.file or f"the workspace ({len(listing.files)} files)"
            wanted = str(address.name_path) + (f" of kind {kind.label}" if kind else "")
            raise not_found(listing.files, wanted, address.name_path, where)
        return FindResult(matches, len(listing.files), listing.skipped)

    def resolve(self, address: Address, kind: SymbolKind | None = None) -> Symbol:
        """Exactly one symbol, or a refusal that lists the candidates."""
        result = self.find(address, kind)
        if len(result.matches) > 1:
            raise ambiguous(str(address), result.matches)
        return result.matches[0]

    def overview(self, under: str = ".", depth: int = 1) -> list[OverviewEntry]:
        """The graph's map of a folder, the folder checked like any path a user gives: outside the
        workspace, through a symlink (not followed, so not indexed), or missing, it is refused
        rather than answered with an empty map."""
        relative, absolute = self.workspace.resolve(under)
        if absolute.is_symlink():
            raise UnsafePath(f"{relative} is a symlink; codegraft does not follow symlinked folders, so nothing under it is indexed")
        if not absolute.exists():
            raise FileNotInWorkspace(f"{relative} does not exist (paths are relative to the workspace root {self.workspace.root})")
        return self.graph().overview(relative, depth)

    def resolve_binding(self, address: Address) -> list[Symbol]:
        """What rename, move and delete act on: one symbol, or all the same-named definitions of
        one scope when the address names several without ``[n]`` (an ``@overload`` stack, a
        property's getter, setter and deleter, a function defined in both arms of an ``if``):
        in Python those are one name, and acting on one of them alone would break the others."""
        matches = self.find(address).matches
        first = matches[0]
        one_binding = all(
            m.file == first.file and m.name == first.name and m.path[:-1] == first.path[:-1] for m in matches
        )
        if len(matches) > 1 and not (one_binding and language_of(first.file) == "python"):
            raise ambiguous(str(address), matches)
        return sorted(matches, key=lambda m: m.range.start)

    def explain(self, address: Address) -> Explanation:
        """A symbol's source with what calls it, what it calls, its bases and subclasses."""
        found = self.read(address)
        queries = self.graph()
        key = f"{found.symbol.file}:{found.symbol.name_path}"
        return Explanation(found, queries.callers(key), queries.callees(key), queries.supertypes(key), queries.subtypes(key))

    def read(self, address: Address, kind: SymbolKind | None = None) -> SymbolText:
        """A symbol's source text, from the first decorator to the end of its body."""
        symbol = self.resolve(address, kind)
        source = self.workspace.read(symbol.file)
        lines = split_lines(source.text)
        start, end = symbol.range.start.line, symbol.range.last_line
        return SymbolText(symbol, source, start + 1, lines[start:end])

    # -- helpers -------------------------------------------------------------

    def _files_for(self, address: SymbolAddress) -> SymbolsListing:
        if address.file is not None:
            return SymbolsListing([self.outline(address.file)], [])
        return self.symbols(".")


"""The project graph: files and symbols as nodes, resolved relations as edges, each with its source.

networkx stays inside the graph package (this module, :mod:`engine.graph.edges`,
:mod:`engine.graph.python_names`, which resolves Python names for it, and
:mod:`engine.graph.queries`); callers get engine values. Node ids are ``f:<path>`` for files and ``s:<path>:<name path>``
for symbols. Edges are keyed by kind (``contains``, ``imports``, ``calls``,
``inherits``, ``references``, ``tested_by``) and carry ``source`` and
``confidence``: ``ast`` and ``high`` for what the syntax says outright (an
import that resolves to a file), ``ast`` and ``medium`` for syntactic calls
and bases resolved by name, which a dynamic program can defeat, and for method
calls through receivers whose class an annotation, a constructor call or an
annotated return says (what an annotation says, a program can break).
A method call whose receiver's type nothing says is no edge; :meth:`ProjectGraph.unresolved_calls`
counts those, so that answers can say what they may miss.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Iterator

import networkx as nx

from engine.graph.edges import SharedEdges
from engine.graph.facts import FileFacts, ImportFact, SymbolFact
from engine.graph.receivers import CallFact
from engine.graph.modules import ModuleIndex
from engine.graph.python_names import PythonNames, Target, file_node, symbol_node
from engine.languages import ImportStyle, profile
from engine.symbols import SymbolKind

__all__ = ["GRAPH_FORMAT", "ProjectGraph", "Target", "file_node", "symbol_node"]

#: Bump when ProjectGraph's pickled shape changes: older snapshots are then ignored.
GRAPH_FORMAT = 7


class ProjectGraph(PythonNames):
    def __init__(self, go_mod_texts: dict[str, str] | None = None) -> None:
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.facts: dict[str, FileFacts] = {}
        self._go_mod_texts = dict(go_mod_texts or {})
        self._modules = ModuleIndex([], self._go_mod_texts)
        self._symbols: dict[str, dict[str, SymbolFact]] = {}
        self._bindings: dict[str, dict[str, Target]] = {}
        """Per-file import bindings, kept while the files they depend on are unchanged."""
        self._resolved_imports: dict[str, list[tuple[ImportFact, list[tuple[str, Target]]]]] = {}
        self._members: dict[tuple[str, str], Target | None] = {}
        """What a name is in a module, memoised between changes: re-export chains are shared."""
        self._in_progress: set[tuple[str, str]] = set()
        self._met_loop = False
        self._overload_index: dict[str, tuple[dict[str, SymbolFact], dict[str, list[str]]]] = {}
        self._hierarchy: dict[tuple[str, str, str, bool, int], str | None] = {}
        """Where a class's method is found, memoised between changes: a project's calls ask the
        same few classes again and again, each lookup climbing their bases."""
        self._edge_counts: dict[str, int] | None = None
        """Edges per kind, counted once per version of the graph (and kept in its snapshot)."""
        self._edges = SharedEdges(self.graph)
        """Every edge is added and removed through it (engine/graph/edges.py)."""

    def release(self) -> None:
        """Empty the graph for good. The index freezes its objects out of the garbage collector
        (see ProjectIndex.load), and networkx graphs refer to themselves through their cached
        views: a discarded graph would never be collected, so its contents are dropped here."""
        self.graph.clear()
        self.facts, self._symbols = {}, {}
        self._edges.forget()
        self._forget_resolutions()

    def edge_counts(self) -> dict[str, int]:
        if self._edge_counts is None:
            self._edge_counts = dict(Counter(key for _u, _v, key in self.graph.edges(keys=True)))
        return dict(self._edge_counts)

    # -- building ------------------------------------------------------------

    def build(self, facts: Iterable[FileFacts]) -> None:
        self._edge_counts = None
        self.graph.clear()
        self._edges.forget()
        self._forget_resolutions()
        self.facts = {f.path: f for f in sorted(facts, key=lambda f: f.path)}
        self._symbols = {path: {s.name_path: s for s in f.symbols} for path, f in self.facts.items()}
        self._modules = ModuleIndex(self.facts, self._go_mod_texts)
        for facts_of_file in self.facts.values():
            self._add_nodes(facts_of_file)
        for path in self.facts:
            self._add_edges(path)

    def update(self, changed: Iterable[FileFacts], removed: Iterable[str] = ()) -> set[str]:
        """Replace some files' facts; returns the files whose edges were recomputed.

        Only the changed files and the files that import them are re-resolved; a new or
        deleted file also re-resolves every file with an unresolved import, since the new
        file may be what it was looking for.
        """
        self._edge_counts = None
        changed = list(changed)
        removed = set(removed)
        if not removed and all(f.path in self.facts and _interface(self.facts[f.path]) == _interface(f) for f in changed):
            # The usual edit: inside bodies. What other files can see of these files is unchanged,
            # so their edges into them stay; only the edited files' own edges are redone.
            for facts_of_file in changed:
                self._replace_in_place(facts_of_file)
            return {f.path for f in changed}
        touched = {f.path for f in changed} | removed
        added_or_removed = removed | {f.path for f in changed if f.path not in self.facts}
        dependants = {
            self._path_of(source)
            for path in touched
            if self.graph.has_node(file_node(path))
            for source in self._incoming_sources(path)
        }
        for path in touched:
            self._remove_file(path)
        for facts_of_file in changed:
            self.facts[facts_of_file.path] = facts_of_file
            self._symbols[facts_of_file.path] = {s.name_path: s for s in facts_of_file.symbols}
            self._add_nodes(facts_of_file)
        if added_or_removed:
            self._modules = ModuleIndex(self.facts, self._go_mod_texts)
            dependants |= {path for path, f in self.facts.items() if f.imports}
        recompute = ((dependants | {f.path for f in changed}) - removed) & set(self.facts)
        # Any change can alter what a name means in a module (a definition added or removed),
        # so memoised resolutions are dropped; they are cheap to redo for the files recomputed.
        self._forget_resolutions()
        for path in recompute:
            self._remove_outgoing(path)
        for path in recompute:
            self._add_edges(path)
        return recompute

    def _replace_in_place(self, facts: FileFacts) -> None:
        path = facts.path
        self.facts[path] = facts
        self._symbols[path] = {s.name_path: s for s in facts.symbols}
        self.graph.nodes[file_node(path)].update(source=facts.source, confidence=facts.confidence)
        for symbol in facts.symbols:
            self.graph.nodes[symbol_node(path, symbol.name_path)]["fact"] = symbol
        # Memoised imports carry line numbers, which may have moved.
        self._bindings.pop(path, None)
        self._resolved_imports.pop(path, None)
        self._remove_outgoing(path)
        self._add_edges(path)

    def _add_nodes(self, facts: FileFacts) -> None:
        graph = self.graph
        path = facts.path
        graph.add_node(file_node(path), type="file", path=path, language=facts.language,
                       source=facts.source, confidence=facts.confidence, is_test=facts.is_test)
        # All of a file's symbols in one call: networkx clears its view caches once per call.
        graph.add_nodes_from((symbol_node(path, s.name_path), {"type": "symbol", "path": path, "fact": s}) for s in facts.symbols)
        for symbol in facts.symbols:
            parent = file_node(path) if symbol.parent is None else symbol_node(path, symbol.parent)
            self._edges.link(parent, symbol_node(path, symbol.name_path), "contains", symbol.source, symbol.confidence)

    def _remove_file(self, path: str) -> None:
        doomed = [file_node(path), *(symbol_node(path, name) for name in self._symbols.get(path, {}))]
        self.graph.remove_nodes_from(doomed)
        self.facts.pop(path, None)
        self._symbols.pop(path, None)

    def _remove_outgoing(self, path: str) -> None:
        """Drop the resolved edges that start in ``path`` (its own ``contains`` edges stay)."""
        owned = [file_node(path), *(symbol_node(path, name) for name in self._symbols.get(path, {}))]
        doomed = [
            (u, v, k) for node in owned if self.graph.has_node(node)
            for u, v, k in self.graph.out_edges(node, keys=True) if k != "contains"
        ]
        doomed += [
            (u, v, k) for node in owned if self.graph.has_node(node)
            for u, v, k in self.graph.in_edges(node, keys=True) if k == "tested_by"
        ]
        self._edges.unlink(doomed)

    def _incoming_sources(self, path: str) -> Iterator[str]:
        for node in [file_node(path), *(symbol_node(path, name) for name in self._symbols.get(path, {}))]:
            if self.graph.has_node(node):
                for source, _target, kind in self.graph.in_edges(node, keys=True):
                    if kind != "contains":
                        yield source

    # -- resolving -----------------------------------------------------------

    def _add_edges(self, path: str) -> None:
        facts = self.facts[path]
        imports = _import_style(facts.language)
        if imports is ImportStyle.PYTHON:
            bindings = self._python_bindings(path)
            self._python_import_edges(path, bindings)
            self._python_call_edges(path, bindings)
            self._python_base_edges(path, bindings)
        elif imports is ImportStyle.ES_MODULES:
            for fact in facts.imports:
                target = self._modules.js_file(path, fact.module)
                if target is not None:
                    self._edge(file_node(path), file_node(target), "imports", fact.line)
        elif imports is ImportStyle.GO_PACKAGES:
            for fact in facts.imports:
                for target in self._modules.go_files(fact.module):
                    self._edge(file_node(path), file_node(target), "imports", fact.line)

    def _edge(self, source: str, target: str, kind: str, line: int, confidence: str = "high") -> None:
        """Add one edge of a kind between two nodes, at the first line that shows it."""
        # networkx's own tables, read directly: this runs for every resolved name of a project
        # (170,000 on Django's sdist), where has_node/has_edge and the node views cost more than the rest.
        nodes = self.graph._node
        if target not in nodes or source == target or kind in self.graph._adj.get(source, {}).get(target, ()):
            return
        self._edges.link(source, target, kind, "ast", confidence, line)
        if kind in ("imports", "calls", "inherits") and self.facts[nodes[source]["path"]].is_test:
            if not self.facts[nodes[target]["path"]].is_test:
                self._edges.link(target, source, "tested_by", "ast", confidence, line)

    def __getstate__(self) -> dict[str, object]:
        # Memoised resolutions are not worth their bytes in a snapshot; they are rebuilt on demand.
        state = dict(self.__dict__)
        state["_bindings"], state["_resolved_imports"], state["_members"] = {}, {}, {}
        state["_in_progress"], state["_met_loop"], state["_overload_index"] = set(), False, {}
        state["_hierarchy"] = {}
        state.pop("_lines", None)
        return state

    def _forget_resolutions(self) -> None:
        self._bindings.clear()
        self._resolved_imports.clear()
        self._members.clear()
        self._hierarchy.clear()
        # Each file's index holds that file's facts: a released graph must not keep them (see release).
        self.__dict__.pop("_lines", None)

    def _python_import_edges(self, path: str, bindings: dict[str, Target]) -> None:
        """A file imports the module it names, and each symbol it takes from it (at its definition)."""
        source = file_node(path)
        for fact, targets in self._resolved(path):
            if fact.names or fact.star:
                module_path = self._modules.python_file(self._modules.absolute(path, fact))
                if module_path is not None:
                    self._edge(source, file_node(module_path), "imports", fact.line)
            for _name, target in targets:
                self._edge(source, target.node, "imports", fact.line)

    def _python_call_edges(self, path: str, bindings: dict[str, Target]) -> None:
        # A file repeats its calls (a test's `self.assertEqual`): each distinct one is resolved once.
        resolved: dict[tuple[str | None, str, str | None], str | None] = {}
        for call in self.facts[path].calls:
            key = (call.caller, call.callee, call.receiver)
            if key in resolved:
                target = resolved[key]
            else:
                target = resolved[key] = self._resolve_call(path, call, bindings)
            if target is not None:
                caller = file_node(path) if call.caller is None else symbol_node(path, call.caller)
                self._edge(caller, target, "calls", call.line, confidence="medium")

    def _python_base_edges(self, path: str, bindings: dict[str, Target]) -> None:
        for base in self.facts[path].bases:
            target = self._resolve_python_name(path, base.base, None, bindings)
            if target is not None:
                self._edge(symbol_node(path, base.cls), target, "inherits", base.line, confidence="medium")

    def module_file(self, dotted: str) -> str | None:
        """The file of a Python module by its dotted name."""
        return self._modules.python_file(dotted)

    # -- used by navigation ----------------------------------------------------------

    def resolve_expression(self, path: str, expression: str, line: int) -> str | None:
        """The node a name written on a line of a Python file stands for, by the same rules as calls."""
        if self.facts.get(path) is None or _import_style(self.facts[path].language) is not ImportStyle.PYTHON:
            return None  # names resolve by Python's scoping rules only
        bindings = self._python_bindings(path)
        # A method call on the line says, with its receiver, which class's method the name is.
        for call in self._lines_of(path).calls.get(line, ()):
            if call.callee == expression and call.receiver is not None:
                return self._resolve_call(path, call, bindings)
        if expression.startswith("?"):
            return None
        return self._resolve_python_name(path, expression, self._innermost_code(path, line), bindings)

    def add_references(self, target: str, places: list[tuple[str, int]], confidence: str) -> None:
        """Record a server's references as ``references`` edges from the enclosing symbol (or file)."""
        self._edge_counts = None
        for path, line in places:
            if path not in self.facts:
                continue
            source = self._innermost_code(path, line)
            node = symbol_node(path, source) if source is not None else file_node(path)
            if node != target and not self.graph.has_edge(node, target, key="references"):
                self._edges.link(node, target, "references", "lsp", confidence, line)

    def module_name(self, path: str) -> str | None:
        """The dotted module name of a Python file, by its package chain."""
        return self._modules.module_of.get(path)

    def module_name_for(self, path: str) -> str | None:
        """The dotted name a Python file has, or would have once it exists."""
        if path in self._modules.module_of or path in self.facts:
            return self._modules.module_of.get(path)
        return ModuleIndex([*self.facts, path]).module_of.get(path)

    def module_level_imports(self, path: str) -> set[str]:
        """The files a Python file imports when it is itself imported (not inside functions)."""
        files: set[str] = set()
        if path not in self.facts:
            return files
        for fact, targets in self._resolved(path):
            if fact.scope is not None:
                continue
            module_path = self._modules.python_file(self._modules.absolute(path, fact))
            if module_path is not None:
                files.add(module_path)
            files.update(target.path for _name, target in targets)
        files.discard(path)
        return files

    def enclosing_name(self, path: str, line: int) -> str | None:
        """Name path of the innermost symbol of any kind around a line, for messages."""
        found = self.enclosing_symbol(path, line)
        return found.name_path if found is not None else None

    def enclosing_symbol(self, path: str, line: int) -> SymbolFact | None:
        """The innermost symbol of any kind around a 1-based line, or None at module level."""
        facts = self.facts.get(path)
        if facts is None:
            return None
        inside = [s for s in facts.symbols if s.line <= line <= s.end_line]
        return max(inside, key=lambda s: (s.line, -s.end_line)) if inside else None

    def _innermost_code(self, path: str, line: int) -> str | None:
        inside = [s for s in self._lines_of(path).code if s.line <= line <= s.end_line]
        return max(inside, key=lambda s: s.line).name_path if inside else None

    def _lines_of(self, path: str) -> _LinesOfFile:
        """The file's calls by line and its functions, for the current facts of the file: a
        rename resolves hundreds of names, each on a line of a file with thousands of calls."""
        facts = self.facts[path]
        # Made on first use (a snapshot read back has none) and never written to a snapshot.
        known: dict[str, _LinesOfFile] = self.__dict__.setdefault("_lines", {})
        found = known.get(path)
        if found is None or found.facts is not facts:
            if len(known) >= _MOST_FILES_BY_LINE:
                known.clear()
            found = known[path] = _LinesOfFile(facts)
        return found


_MOST_FILES_BY_LINE = 512
"""Files whose lines are kept (:meth:`ProjectGraph._lines_of`): about what a wide rename touches."""
_CODE_KINDS = (SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR)


class _LinesOfFile:
    """A file's calls by line, and the symbols that hold code (a name's scope), of one version of its facts."""

    __slots__ = ("facts", "calls", "code")

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.calls: dict[int, list[CallFact]] = {}
        for call in facts.calls:
            self.calls.setdefault(call.line, []).append(call)
        self.code = [s for s in facts.symbols if s.kind in _CODE_KINDS]


def _interface(facts: FileFacts) -> tuple[object, ...]:
    """What other files can depend on in a file: its symbols, exports, imports (which re-export) and bases."""
    return (
        facts.language,
        facts.is_test,
        tuple(sorted((s.name_path, s.kind, s.parent or "") for s in facts.symbols)),
        facts.exports,
        tuple((i.module, i.level, i.names, i.alias, i.star, i.scope) for i in facts.imports),
        # Other files' calls through receivers resolve by what this file's functions return,
        # and their calls of inherited methods by this file's classes' bases.
        tuple((s.name_path, s.returns, s.returns_element) for s in facts.symbols if s.returns or s.returns_element),
        tuple((b.cls, b.base) for b in facts.bases),
    )


def _import_style(language: str | None) -> ImportStyle:
    """How a file's imports (and, for Python, its names) resolve: its language profile says."""
    kind = profile(language)
    return kind.imports if kind is not None else ImportStyle.NONE

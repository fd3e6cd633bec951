"""The project graph: files and symbols as nodes, resolved relations as edges, each with its source.

networkx stays inside this module and :mod:`engine.graph.queries`; callers get
engine values. Node ids are ``f:<path>`` for files and ``s:<path>:<name path>``
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
from dataclasses import dataclass
from typing import Iterable, Iterator

import networkx as nx

from engine.graph.edges import SharedEdges
from engine.graph.facts import FileFacts, ImportFact, SymbolFact
from engine.graph.receivers import UNKNOWN_RECEIVER, CallFact
from engine.graph.modules import ModuleIndex
from engine.symbols import SymbolKind
from engine.languages import ImportStyle, profile

_RESOLVE_DEPTH = 8
#: Bump when ProjectGraph's pickled shape changes: older snapshots are then ignored.
GRAPH_FORMAT = 7
_TYPE_KINDS = frozenset({SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE})


def file_node(path: str) -> str:
    return f"f:{path}"


def symbol_node(path: str, name_path: str) -> str:
    return f"s:{path}:{name_path}"


@dataclass(frozen=True)
class Target:
    """What a name bound in a file stands for: a file (a module) or a symbol in a file."""

    path: str
    name_path: str | None = None

    @property
    def node(self) -> str:
        return file_node(self.path) if self.name_path is None else symbol_node(self.path, self.name_path)


class ProjectGraph:
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

    def _path_of(self, node: str) -> str:
        return self.graph.nodes[node]["path"]

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
        return state

    def _forget_resolutions(self) -> None:
        self._bindings.clear()
        self._resolved_imports.clear()
        self._members.clear()
        self._hierarchy.clear()

    def _resolved(self, path: str) -> list[tuple[ImportFact, list[tuple[str, Target]]]]:
        """Each import of a file with the names it binds, resolved once per change."""
        cached = self._resolved_imports.get(path)
        if cached is None:
            cached = [(fact, self._import_targets(path, fact)) for fact in self.facts[path].imports]
            self._resolved_imports[path] = cached
        return cached

    def _python_bindings(self, path: str) -> dict[str, Target]:
        """Names a Python file binds by import at module level, resolved to files and symbols."""
        cached = self._bindings.get(path)
        if cached is not None:
            return cached
        bindings: dict[str, Target] = {}
        for fact, targets in self._resolved(path):
            if fact.scope is None:  # a function-local import binds nothing at module level
                bindings.update(targets)
        self._bindings[path] = bindings
        return bindings

    def _import_targets(self, path: str, fact: ImportFact) -> list[tuple[str, Target]]:
        module = self._modules.absolute(path, fact)
        if not fact.names and not fact.star:
            module_path = self._modules.python_file(module)
            if module_path is None:
                return []
            # `import a.b` binds `a`; `import a.b as c` binds `c` to a.b itself.
            if fact.alias:
                return [(fact.alias, Target(module_path))]
            head = self._modules.python_file(module.split(".")[0])
            return [(module, Target(module_path)), *([(module.split(".")[0], Target(head))] if head else [])]
        module_path = self._modules.python_file(module)
        found: list[tuple[str, Target]] = []
        if fact.star:
            if module_path is not None:
                for name in self._public_names(module_path):
                    target = self._member(module_path, name)
                    if target is not None:
                        found.append((name, target))
            return found
        for name, alias in fact.names:
            submodule = self._modules.python_file(f"{module}.{name}" if module else name)
            target = Target(submodule) if submodule is not None else (
                self._member(module_path, name) if module_path is not None else None
            )
            if target is not None:
                found.append((alias or name, target))
        return found

    def _member(self, module_path: str, name: str) -> Target | None:
        """What ``name`` is in a module: its own top-level symbol, or what it re-exports.

        Re-export chains can loop (two modules star-importing each other). A lookup that
        meets itself answers None for that branch, and nothing computed on a path that met
        a loop is memoised, so answers never depend on the order files are resolved in.
        """
        key = (module_path, name)
        if key in self._members:
            return self._members[key]
        if key in self._in_progress:
            self._met_loop = True
            return None
        outer_met_loop, self._met_loop = self._met_loop, False
        self._in_progress.add(key)
        try:
            found = self._find_member(module_path, name)
        finally:
            self._in_progress.discard(key)
        if not self._met_loop:
            self._members[key] = found
        self._met_loop = self._met_loop or outer_met_loop
        return found

    def _find_member(self, module_path: str, name: str) -> Target | None:
        symbols = self._symbols.get(module_path, {})
        if name in symbols:
            return Target(module_path, name)
        overloads = [n for n in symbols if n.startswith(f"{name}[") and "/" not in n]
        if overloads:
            return Target(module_path, overloads[-1])
        for fact in self.facts[module_path].imports:
            if fact.scope is not None:
                continue
            if fact.star or any((alias or imported) == name for imported, alias in fact.names) or fact.alias == name:
                for bound, target in self._import_targets(module_path, fact):
                    if bound == name:
                        return target
        return None

    def _public_names(self, module_path: str) -> list[str]:
        facts = self.facts[module_path]
        if facts.exports is not None:
            return list(facts.exports)
        return [s.name for s in facts.symbols if s.parent is None and not s.name.startswith("_")]

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

    def _resolve_call(self, path: str, call: CallFact, bindings: dict[str, Target]) -> str | None:
        """The node a call reaches: through its receiver's class when the receiver is a value
        (a name it shadows is not consulted), else by name."""
        if call.receiver is None:
            return self._resolve_python_name(path, call.callee, call.caller, bindings)
        owner = self._receiver_class(path, call.receiver, call.caller, bindings)
        if owner is None or owner == UNKNOWN_RECEIVER:
            return None
        owner_path, owner_name = owner[2:].split(":", 1)
        return self._method_in_hierarchy(owner_path, owner_name, call.callee.rsplit(".", 1)[-1], include_self=True)

    def _receiver_class(self, path: str, receiver: str, caller: str | None, bindings: dict[str, Target]) -> str | None:
        """The class node a receiver form (see CallFact.receiver) holds; UNKNOWN_RECEIVER when
        its type is unknown (or a project function it comes from does not say what it returns);
        None when it is a type outside the project (``str``, ``pathlib.Path``)."""
        if receiver == UNKNOWN_RECEIVER:
            return UNKNOWN_RECEIVER
        element = receiver.endswith("()[]")
        if not element and not receiver.endswith("()"):
            return self._class_named(path, receiver, caller, bindings)
        called = self._resolve_python_name(path, receiver[:-4] if element else receiver[:-2], caller, bindings)
        if called is None:
            return None  # a library's function or class: whatever it returns is not the project's
        fact = self._fact_of(called)
        if fact is None:
            return None  # a module called: not a value of the project's
        if fact.kind in _TYPE_KINDS:
            return None if element else called  # a class called is its instance
        annotation = fact.returns_element if element else fact.returns
        if annotation is None:
            return UNKNOWN_RECEIVER  # a project function that does not say what it returns
        called_path = self._path_of(called)
        if annotation in ("Self", "typing.Self", "typing_extensions.Self") and fact.parent is not None:
            owner = self._symbols[called_path].get(fact.parent)
            return symbol_node(called_path, owner.name_path) if owner is not None and owner.kind in _TYPE_KINDS else None
        # A return annotation is written in its own module's scope.
        return self._class_named(called_path, annotation, None, self._python_bindings(called_path))

    def _class_named(self, path: str, expression: str, caller: str | None, bindings: dict[str, Target]) -> str | None:
        found = self._resolve_python_name(path, expression, caller, bindings)
        fact = self._fact_of(found) if found is not None else None
        return found if fact is not None and fact.kind in _TYPE_KINDS else None

    def _fact_of(self, node: str) -> SymbolFact | None:
        """A symbol node's fact; None for a file node (a module a name stands for)."""
        data = self.graph.nodes[node] if self.graph.has_node(node) else {}
        fact: SymbolFact | None = data.get("fact")  # networkx node data is untyped
        return fact

    def unresolved_calls(self, methods: Iterable[str]) -> dict[str, list[tuple[str, int]]]:
        """For each method name, (file, line) of its calls on receivers whose type is unknown
        (``x.total()`` with ``x`` an unannotated parameter): what a caller or impact answer
        about a method of that name may miss. One pass over the calls, whatever the names."""
        wanted = set(methods)
        found: dict[str, set[tuple[str, int]]] = {}
        for path, facts in self.facts.items():
            bindings: dict[str, Target] | None = None
            for call in facts.calls:
                name = call.callee.rsplit(".", 1)[-1]
                if call.receiver is None or name not in wanted or "." not in call.callee:
                    continue
                bindings = bindings if bindings is not None else self._python_bindings(path)
                if self._receiver_class(path, call.receiver, call.caller, bindings) == UNKNOWN_RECEIVER:
                    found.setdefault(name, set()).add((path, call.line))
        return {name: sorted(places) for name, places in found.items()}

    def _python_base_edges(self, path: str, bindings: dict[str, Target]) -> None:
        for base in self.facts[path].bases:
            target = self._resolve_python_name(path, base.base, None, bindings)
            if target is not None:
                self._edge(symbol_node(path, base.cls), target, "inherits", base.line, confidence="medium")

    def _resolve_python_name(self, path: str, expression: str, caller: str | None, bindings: dict[str, Target]) -> str | None:
        """The node a called or inherited expression names, by Python's scoping, without types."""
        symbols = self._symbols[path]
        if expression.startswith(("self.", "cls.", "super().")):
            method = expression.split(".", 1)[1]
            if "." in method or caller is None:
                return None
            owner = self._enclosing_class(path, caller)
            if owner is None:
                return None
            start = owner if not expression.startswith("super().") else None
            return self._method_in_hierarchy(path, owner, method, include_self=start is not None)
        if expression.startswith("?"):
            return None
        head, _, rest = expression.partition(".")
        if not rest:
            # Enclosing function scopes first (a nested helper), then the module, then imports.
            scope = caller
            while scope is not None:
                nested = f"{scope}/{head}"
                if nested in symbols and symbols[scope].kind not in _TYPE_KINDS:
                    return symbol_node(path, nested)
                scope = symbols[scope].parent if scope in symbols else None
            if head in symbols and symbols[head].parent is None:
                return symbol_node(path, head)
            target = bindings.get(head)
            return target.node if target is not None and target.name_path is not None else None
        # Dotted: a module alias followed by members (`util.round_cents`, `os.path.join`).
        for split in range(expression.count("."), 0, -1):
            prefix, member = expression.rsplit(".", split)[0], expression.split(".")[-split:]
            bound = bindings.get(prefix)
            if bound is None:
                continue
            if bound.name_path is None:
                found = self._member(bound.path, member[0])
                if found is None:
                    # `pkg.sub.name` after `import pkg`: a submodule reached as an attribute.
                    package = self._modules.module_of.get(bound.path)
                    sub = self._modules.python_file(f"{package}.{member[0]}") if package else None
                    return self.resolve_in_module(sub, ".".join(member[1:])) if sub and len(member) > 1 else None
                if len(member) == 1:
                    return found.node
                if found.name_path is None:
                    # `pkg.keys.f` where pkg's __init__ binds its submodule (`from . import keys`).
                    return self.resolve_in_module(found.path, ".".join(member[1:]))
                nested = f"{found.name_path}/{'/'.join(member[1:])}"
                return symbol_node(found.path, nested) if nested in self._symbols.get(found.path, {}) else None
            nested = f"{bound.name_path}/{'/'.join(member)}"
            if len(member) == 1 and self._symbols.get(bound.path, {}).get(bound.name_path) is not None \
                    and self._symbols[bound.path][bound.name_path].kind in _TYPE_KINDS:
                return self._method_in_hierarchy(bound.path, bound.name_path, member[0], include_self=True)
            return self.node_named(bound.path, nested)
        if head in symbols and symbols[head].kind in _TYPE_KINDS:
            if "." not in rest:
                # A class's member, its own or inherited; of several same-named ones (an overload
                # stack, a property's accessors), the last: the one Python binds.
                return self._method_in_hierarchy(path, head, rest, include_self=True)
            return self.node_named(path, f"{head}/{rest.replace('.', '/')}")
        return None

    def resolve_in_module(self, module_path: str, dotted: str) -> str | None:
        """The node ``module.<dotted>`` names (``dotted`` one name, or a class and its member)."""
        head, _, rest = dotted.partition(".")
        found = self._member(module_path, head)
        if found is None:
            return None
        if found.name_path is None:
            # A submodule the module binds: the rest is looked up in it.
            return self.resolve_in_module(found.path, rest) if rest and found.path != module_path else None
        if not rest:
            return found.node
        owner = self._symbols.get(found.path, {}).get(found.name_path)
        if owner is not None and owner.kind in _TYPE_KINDS and "." not in rest:
            return self._method_in_hierarchy(found.path, found.name_path, rest, include_self=True)
        return self.node_named(found.path, f"{found.name_path}/{rest.replace('.', '/')}")

    def module_file(self, dotted: str) -> str | None:
        """The file of a Python module by its dotted name."""
        return self._modules.python_file(dotted)

    def node_named(self, path: str, name_path: str) -> str | None:
        """The node of a name path in a file; for a name several same-named siblings share, the last."""
        names = self._symbols.get(path, {})
        if name_path in names:
            return symbol_node(path, name_path)
        overloads = self._overloads(path, names).get(name_path)
        return symbol_node(path, overloads[-1]) if overloads else None

    def _overloads(self, path: str, names: dict[str, SymbolFact]) -> dict[str, list[str]]:
        """For each prefix that a ``[`` follows in some name path of the file, those name paths in
        order (``C/m`` → ``C/m[0]``, ``C/m[1]``): what scanning every name for the prefix found,
        once per version of the file's symbols (a symbols table is replaced, never mutated)."""
        cached = self._overload_index.get(path)
        if cached is not None and cached[0] is names:
            return cached[1]
        index: dict[str, list[str]] = {}
        for name in names:
            start = name.find("[")
            while start != -1:
                index.setdefault(name[:start], []).append(name)
                start = name.find("[", start + 1)
        self._overload_index[path] = (names, index)
        return index

    def _enclosing_class(self, path: str, name_path: str) -> str | None:
        symbols = self._symbols[path]
        current = symbols.get(name_path)
        while current is not None and current.parent is not None:
            parent = symbols[current.parent]
            if parent.kind in _TYPE_KINDS:
                return parent.name_path
            current = parent
        return None

    def _method_in_hierarchy(self, path: str, cls: str, method: str, *, include_self: bool, depth: int = 0) -> str | None:
        key = (path, cls, method, include_self, depth)
        if key in self._hierarchy:
            return self._hierarchy[key]
        # As in _member: what was found on a path that met a re-export loop is not kept, so that
        # answers never depend on the order the files are resolved in.
        outer_met_loop, self._met_loop = self._met_loop, False
        found = self._find_in_hierarchy(path, cls, method, include_self, depth)
        if not self._met_loop:
            self._hierarchy[key] = found
        self._met_loop = self._met_loop or outer_met_loop
        return found

    def _find_in_hierarchy(self, path: str, cls: str, method: str, include_self: bool, depth: int) -> str | None:
        if include_self:
            candidate = f"{cls}/{method}"
            names = self._symbols.get(path, {})
            if candidate in names:
                return symbol_node(path, candidate)
            overloads = self._overloads(path, names).get(candidate)
            if overloads:
                return symbol_node(path, overloads[-1])
        if depth > _RESOLVE_DEPTH:
            return None
        facts = self.facts[path]
        bindings = None
        for base in facts.bases:
            if base.cls != cls:
                continue
            bindings = bindings if bindings is not None else self._python_bindings(path)
            target = self._resolve_python_name(path, base.base, None, bindings)
            if target is None:
                continue
            base_path, base_name = target[2:].split(":", 1)
            found = self._method_in_hierarchy(base_path, base_name, method, include_self=True, depth=depth + 1)
            if found is not None:
                return found
        return None

    # -- used by navigation ----------------------------------------------------------

    def resolve_expression(self, path: str, expression: str, line: int) -> str | None:
        """The node a name written on a line of a Python file stands for, by the same rules as calls."""
        if self.facts.get(path) is None or _import_style(self.facts[path].language) is not ImportStyle.PYTHON:
            return None  # names resolve by Python's scoping rules only
        bindings = self._python_bindings(path)
        # A method call on the line says, with its receiver, which class's method the name is.
        for call in self.facts[path].calls:
            if call.line == line and call.callee == expression and call.receiver is not None:
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
        inside = [
            s for s in self.facts[path].symbols
            if s.line <= line <= s.end_line and s.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR)
        ]
        return max(inside, key=lambda s: s.line).name_path if inside else None


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

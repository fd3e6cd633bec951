"""How the names a Python file uses resolve against the project: the resolving half of
:class:`engine.graph.build.ProjectGraph`, which mixes it in.

A name resolves by Python's scoping, without types: enclosing functions, then the module, then
what the file imports (followed through re-exports, never in a loop); a method call by its
receiver's class (what the file says the receiver holds) and that class's bases. What is found is
memoised per version of the graph: ``ProjectGraph`` empties the memos whenever a change can alter
what a name means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import networkx as nx

from engine.graph.facts import FileFacts, ImportFact, SymbolFact
from engine.graph.modules import ModuleIndex
from engine.graph.receivers import UNKNOWN_RECEIVER, CallFact
from engine.symbols import SymbolKind

RESOLVE_DEPTH = 8
"""How many bases deep a method is looked for (inheritance can loop)."""
TYPE_KINDS = frozenset({SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE})


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


class PythonNames:
    """The resolving methods; the state they read is :class:`ProjectGraph`'s."""

    graph: nx.MultiDiGraph
    facts: dict[str, FileFacts]
    _symbols: dict[str, dict[str, SymbolFact]]
    _modules: ModuleIndex
    _bindings: dict[str, dict[str, Target]]
    _resolved_imports: dict[str, list[tuple[ImportFact, list[tuple[str, Target]]]]]
    _members: dict[tuple[str, str], Target | None]
    _in_progress: set[tuple[str, str]]
    _met_loop: bool
    _overload_index: dict[str, tuple[dict[str, SymbolFact], dict[str, list[str]]]]
    _hierarchy: dict[tuple[str, str, str, bool, int], str | None]

    def _path_of(self, node: str) -> str:
        return self.graph.nodes[node]["path"]

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
        if fact.kind in TYPE_KINDS:
            return None if element else called  # a class called is its instance
        annotation = fact.returns_element if element else fact.returns
        if annotation is None:
            return UNKNOWN_RECEIVER  # a project function that does not say what it returns
        called_path = self._path_of(called)
        if annotation in ("Self", "typing.Self", "typing_extensions.Self") and fact.parent is not None:
            owner = self._symbols[called_path].get(fact.parent)
            return symbol_node(called_path, owner.name_path) if owner is not None and owner.kind in TYPE_KINDS else None
        # A return annotation is written in its own module's scope.
        return self._class_named(called_path, annotation, None, self._python_bindings(called_path))

    def _class_named(self, path: str, expression: str, caller: str | None, bindings: dict[str, Target]) -> str | None:
        found = self._resolve_python_name(path, expression, caller, bindings)
        fact = self._fact_of(found) if found is not None else None
        return found if fact is not None and fact.kind in TYPE_KINDS else None

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
                if nested in symbols and symbols[scope].kind not in TYPE_KINDS:
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
                    and self._symbols[bound.path][bound.name_path].kind in TYPE_KINDS:
                return self._method_in_hierarchy(bound.path, bound.name_path, member[0], include_self=True)
            return self.node_named(bound.path, nested)
        if head in symbols and symbols[head].kind in TYPE_KINDS:
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
        if owner is not None and owner.kind in TYPE_KINDS and "." not in rest:
            return self._method_in_hierarchy(found.path, found.name_path, rest, include_self=True)
        return self.node_named(found.path, f"{found.name_path}/{rest.replace('.', '/')}")

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
            if parent.kind in TYPE_KINDS:
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
        if depth > RESOLVE_DEPTH:
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

"""The base-class methods a Python method overrides: the base class calls its own method by name
(``self._wrap_chunks(...)`` in ``textwrap.TextWrapper``), so deleting an override changes what
the base does, although no reference to the override itself is written anywhere.

The project's bases come from the graph (its ``inherits`` edges, transitively); every base
written in the class statement is also resolved by jedi, which follows a library or standard
library class and its own bases. A base that neither resolves is returned as such: the caller
must not take "no override found" for an answer then.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.graph.facts import FileFacts
from engine.graph.queries import GraphQueries
from engine.refactor.python.jedi_rename import jedi_lock, jedi_script
from engine.symbols import Symbol, SymbolKind
from engine.workspace import Workspace


@dataclass(frozen=True)
class Overridden:
    """``Base.method`` and where it is: a workspace file, else a module name."""

    method: str
    where: str

    def __str__(self) -> str:
        return f"{self.method} ({self.where})"


@dataclass(frozen=True)
class BaseMethods:
    overridden: list[Overridden]
    unresolved: list[str]
    """Bases of the class, as written, that neither the graph nor jedi could follow."""


def overridden_methods(workspace: Workspace, graph: GraphQueries, method: Symbol) -> BaseMethods:
    """What ``method`` overrides in the bases of its class; empty for anything but a method."""
    facts = graph.project.facts.get(method.file)
    owner = _owning_class(facts, method) if facts is not None else None
    if facts is None or owner is None:
        return BaseMethods([], [])
    written = [base.base for base in facts.bases if base.cls == owner]
    if not written:
        return BaseMethods([], [])
    found = _in_project(graph, method.file, owner, method.name)
    resolved_by_graph = {edge.target.name_path.rsplit("/", 1)[-1] for edge in graph.supertypes(f"{method.file}:{owner}")
                         if edge.target.name_path is not None}
    from_jedi, unresolved = _through_jedi(workspace, method, written)
    for overridden in from_jedi:
        if overridden not in found:
            found.append(overridden)
    return BaseMethods(found, [base for base in unresolved if base.rsplit(".", 1)[-1] not in resolved_by_graph])


def _owning_class(facts: FileFacts, method: Symbol) -> str | None:
    """The name path of the class ``method`` is defined in directly, or None."""
    line = method.selection_range.start.line + 1
    fact = next((f for f in facts.symbols if f.name == method.name and f.name_line == line), None)
    if fact is None or fact.parent is None:
        return None
    parent = next((f for f in facts.symbols if f.name_path == fact.parent), None)
    return fact.parent if parent is not None and parent.kind is SymbolKind.CLASS else None


def _in_project(graph: GraphQueries, path: str, owner: str, name: str) -> list[Overridden]:
    """Same-named methods in the project's classes above ``owner`` (the graph's inherits edges)."""
    found: list[Overridden] = []
    seen = {f"{path}:{owner}"}
    pending = [f"{path}:{owner}"]
    while pending:
        for edge in graph.supertypes(pending.pop()):
            base = edge.target
            if base.address in seen or base.name_path is None:
                continue
            seen.add(base.address)
            pending.append(base.address)
            if graph.nodes_for(f"{base.path}:{base.name_path}/{name}"):
                found.append(Overridden(f"{base.name_path.replace('/', '.')}.{name}", base.path))
    return found


def _through_jedi(workspace: Workspace, method: Symbol, written: list[str]) -> tuple[list[Overridden], list[str]]:
    """Each written base's ``name`` as jedi follows it, from a probe line added at the end of
    the class body (where the class statement's names are in scope)."""
    text = workspace.read(method.file).text
    lines = text.splitlines()
    def_line = lines[method.selection_range.start.line]
    indent = def_line[: len(def_line) - len(def_line.lstrip())]
    # After the method's own last line: still inside the class body, at the body's indentation.
    at = method.range.last_line
    probes = [f"{indent}{base}.{method.name}" for base in written]
    probed = "\n".join([*lines[:at], *probes, *lines[at:]]) + "\n"
    found: list[Overridden] = []
    unresolved: list[str] = []
    with jedi_lock:
        script = jedi_script(workspace, method.file, probed)
        for offset, base in enumerate(written):
            line = at + offset + 1
            column = len(indent) + len(base) + 1
            try:
                names = script.goto(line, column, follow_imports=True)
                if not names and not script.infer(line, len(indent) + len(base) - 1):
                    unresolved.append(base)
                    continue
            except Exception:  # noqa: BLE001 - jedi raises its own errors on code it cannot follow
                unresolved.append(base)
                continue
            for name in names:
                full = str(name.full_name or "")
                if full.startswith("builtins.object."):
                    continue  # every class has object's methods; overriding them is no contract with a base
                module = str(name.module_name or "")
                label = full[len(module) + 1:] if module and full.startswith(module + ".") else full
                overridden = Overridden(label, _where(workspace.root, name.module_path, module))
                if overridden not in found:
                    found.append(overridden)
    return found, unresolved


def _where(root: Path, module_path: Path | None, module: str) -> str:
    if module_path is not None:
        try:
            return Path(module_path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass  # outside the workspace: the module's name says where
    return module or "an unknown module"

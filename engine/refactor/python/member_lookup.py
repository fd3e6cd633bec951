"""The graph's answers about class members that the rename passes ask for: where a class's member
is declared (its own or inherited), and what a receiver in a test or method holds."""

from __future__ import annotations

from typing import Callable

from engine.graph.queries import GraphQueries
from engine.refactor.corpus import Corpus
from engine.refactor.python.inferred_receivers import FixtureMember
from engine.refactor.python.pytest_fixtures import FixtureValues
from engine.symbols import SymbolKind


def member_of(queries: GraphQueries, name: str) -> Callable[[str, int], tuple[str, int] | None]:
    """(file, 0-based line of a class's name) → where its member ``name`` is declared, its own or inherited."""
    graph, project = queries.graph, queries.project

    def declared(path: str, line: int) -> tuple[str, int] | None:
        facts = project.facts.get(path)
        cls = next((s for s in facts.symbols if s.name_line == line + 1 and s.kind in (SymbolKind.CLASS, SymbolKind.STRUCT)), None) if facts else None
        found = project.resolve_in_module(path, f"{cls.name_path}.{name}") if cls is not None and cls.parent is None else None
        if found is None or not graph.has_node(found):
            return None
        return graph.nodes[found]["path"], graph.nodes[found]["fact"].name_line - 1

    return declared

def receiver_members(queries: GraphQueries, old_name: str) -> Callable[[Corpus], FixtureMember]:
    """How a rename of member ``old_name`` learns what a test's fixture parameter holds."""
    graph, project = queries.graph, queries.project

    def resolve_class(path: str, expression: str, line: int) -> str | None:
        node = project.resolve_expression(path, expression, line)
        fact = graph.nodes[node].get("fact") if node is not None and graph.has_node(node) else None
        return node if fact is not None and fact.kind in (SymbolKind.CLASS, SymbolKind.STRUCT) else None

    def class_location(node: str) -> tuple[str, str] | None:
        fact = graph.nodes[node]["fact"]
        return (graph.nodes[node]["path"], fact.name_path) if fact.parent is None else None

    def for_corpus(corpus: Corpus) -> FixtureMember:
        values = FixtureValues(corpus, resolve_class, class_location, project.module_file)

        def member(path: str, line: int, receiver: str) -> tuple[str, int] | None:
            if receiver in ("self", "cls"):
                # The enclosing class's member, its own or inherited (a subclass writing
                # `self.message_args = ...` in its __init__ sets the base's class attribute).
                found = project.resolve_expression(path, f"self.{old_name}", line)
                return (graph.nodes[found]["path"], graph.nodes[found]["fact"].name_line - 1) if found and graph.has_node(found) else None
            held = values.held(path, line, receiver)
            if held is None:
                return None
            if held.kind == "module":
                found = project.resolve_in_module(held.cls, old_name)
            else:
                found = project.resolve_in_module(graph.nodes[held.cls]["path"], f"{graph.nodes[held.cls]['fact'].name_path}.{old_name}")
            if found is None or not graph.has_node(found):
                return None
            return graph.nodes[found]["path"], graph.nodes[found]["fact"].name_line - 1

        return member

    return for_corpus

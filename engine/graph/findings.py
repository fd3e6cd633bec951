"""Findings over the whole project graph: import cycles, entry points and dead-code candidates.
Dead code is only ever a list of candidates: a dynamic program can reach what no syntax shows.
Part of :class:`engine.graph.queries.GraphQueries`."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable

import networkx as nx

from engine.graph.build import file_node, symbol_node
from engine.graph.facts import SymbolFact
from engine.graph.hierarchy import ClassHierarchy
from engine.graph.nodes import NodeRef, sees_uses
from engine.symbols import SymbolKind

USE_KINDS = ("imports", "calls", "inherits")
TEST_NAME = re.compile(r"^(test|Test)")
_ENTRY_DECORATORS = re.compile(
    r"(^|\.)(command|group|callback)\(|(^|\.)(route|get|post|put|patch|delete|websocket|api_route)\("
)


@dataclass(frozen=True)
class Cycle:
    files: tuple[str, ...]
    edges: tuple[tuple[str, str, int | None], ...]


@dataclass(frozen=True)
class Finding:
    """An entry point or a dead-code candidate, with the reason."""

    node: NodeRef
    reason: str


class ProjectFindings(ClassHierarchy):
    """Cycles, entry points and dead code (GraphQueries's base)."""

    def cycles(self) -> list[Cycle]:
        """Import cycles between files: strongly connected components, with the edges inside them."""
        files = nx.DiGraph()
        for u, v, k, d in self.graph.edges(keys=True, data=True):
            if k == "imports" and u.startswith("f:") and v.startswith("f:"):
                files.add_edge(u[2:], v[2:], line=d.get("line"))
        found = []
        for component in nx.strongly_connected_components(files):
            if len(component) < 2:
                continue
            members = tuple(sorted(component))
            edges = tuple(sorted((u, v, files.edges[u, v]["line"]) for u, v in files.subgraph(component).edges))
            found.append(Cycle(members, edges))
        return sorted(found, key=lambda c: c.files)

    def entry_points(self, pyproject_text: str | None = None) -> list[Finding]:
        found: list[Finding] = []
        for path, facts in sorted(self.project.facts.items()):
            if facts.has_main:
                found.append(Finding(self.ref(file_node(path)), 'runs as a script (if __name__ == "__main__")'))
            if PurePosixPath(path).name == "__main__.py":
                found.append(Finding(self.ref(file_node(path)), "package entry (__main__.py, python -m)"))
            for symbol in facts.symbols:
                for decorator in symbol.decorators:
                    if _ENTRY_DECORATORS.search(decorator):
                        found.append(Finding(self.ref(symbol_node(path, symbol.name_path)), f"decorated @{decorator}"))
                        break
            argparse_users = {c.caller for c in facts.calls if c.callee.endswith("ArgumentParser") and c.caller}
            for caller in sorted(argparse_users):
                found.append(Finding(self.ref(symbol_node(path, caller)), "builds an argparse command line"))
        found += self._console_scripts(pyproject_text)
        return found

    def _console_scripts(self, pyproject_text: str | None) -> list[Finding]:
        if not pyproject_text:
            return []
        try:
            scripts = tomllib.loads(pyproject_text).get("project", {}).get("scripts", {})
        except tomllib.TOMLDecodeError:
            return []
        found = []
        for command, target in sorted(scripts.items()):
            module, _, function = str(target).partition(":")
            path = self.project._modules.python_file(module)
            if path is not None and function and self.graph.has_node(symbol_node(path, function)):
                found.append(Finding(self.ref(symbol_node(path, function)), f"console script `{command}`"))
        return found

    def dead_code(self, pyproject_text: str | None = None, read: Callable[[str], str] | None = None) -> list[Finding]:
        """Symbols nothing uses by syntax: candidates only, for a person to check. Never a stub's
        declaration (``.pyi``: it describes, it is not called); an ``@overload`` stack lives or dies
        as one (uses resolve to its implementation); and with ``read`` (a file's text), a
        top-level name that any other line of the project reads (``Unit.X``) is not a candidate."""
        entry = {f.node.address for f in self.entry_points(pyproject_text)}
        exported = {
            (path, name) for path, facts in self.project.facts.items() for name in (facts.exports or ())
        }
        used_after_a_dot = set().union(*(facts.attributes for facts in self.project.facts.values()))
        if read is not None:
            texts: dict[str, str] = {}
            read_once = read
            read = lambda path: texts[path] if path in texts else texts.setdefault(path, read_once(path))  # noqa: E731
        found = []
        for path, facts in sorted(self.project.facts.items()):
            if facts.is_test or not sees_uses(facts.language) or path.endswith(".pyi"):
                continue
            families: dict[str, list[SymbolFact]] = {}
            for symbol in facts.symbols:
                families.setdefault(re.sub(r"\[\d+\]", "", symbol.name_path), []).append(symbol)
            for members in families.values():
                symbol = members[-1]  # of an overload stack, the implementation
                if not _judged(symbol) or (path, symbol.name) in exported or any(f"{path}:{m.name_path}" in entry for m in members):
                    continue
                if symbol.parent is not None and symbol.name in used_after_a_dot:
                    continue  # a method or property some `x.name` of unknown type may reach
                if any(self._used(symbol_node(path, member.name_path)) for member in members):
                    continue
                if read is not None and symbol.parent is None and self._read_elsewhere(symbol.name, path, {m.name_line for m in members}, read):
                    continue
                found.append(Finding(self.ref(symbol_node(path, symbol.name_path)), "no import, call or subclass reaches it"))
        return found

    def _used(self, node: str) -> bool:
        if any(k in USE_KINDS or k == "tested_by" for _u, _v, k in self.graph.in_edges(node, keys=True)):
            return True
        return any(k in USE_KINDS for n in self._owned(node)[1:] for _u, _v, k in self.graph.in_edges(n, keys=True))

    def _read_elsewhere(self, name: str, path: str, own_lines: set[int], read: Callable[[str], str]) -> bool:
        """Whether any line but the definitions' names the symbol (an attribute access such as
        ``units.Unit.X``, a name passed along): the graph records calls, imports and bases only."""
        word = re.compile(rf"(?<!\w){re.escape(name)}\b")
        for other, facts in self.project.facts.items():
            if not sees_uses(facts.language) or other.endswith(".pyi"):
                continue
            text = read(other)
            if name not in text:
                continue
            for match in word.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                if other != path or line not in own_lines:
                    return True
        return False

    def dead_code_notes(self) -> list[str]:
        """What a dead-code answer did not examine: files of languages whose uses the graph does not follow."""
        unseen = sorted({facts.language for facts in self.project.facts.values()
                         if facts.language is not None and not sees_uses(facts.language)})
        if not unseen:
            return []
        counted = [f"{sum(1 for f in self.project.facts.values() if f.language == language)} {language}" for language in unseen]
        return [f"not examined: {', '.join(counted)} file(s): the graph follows no uses in those languages, so nothing "
                "there can be judged unused"]


def _judged(symbol: SymbolFact) -> bool:
    """Whether a symbol can be a dead-code candidate at all."""
    if symbol.kind not in (SymbolKind.FUNCTION, SymbolKind.CLASS, SymbolKind.METHOD):
        return False
    name = symbol.name
    return not (name.startswith("__") and name.endswith("__")) and not TEST_NAME.match(name)

"""Which files see which in the project graph: a file's importers, a Go package's other files,
and how far an edit's effects can reach. Part of :class:`engine.graph.queries.GraphQueries`."""

from __future__ import annotations

import networkx as nx

from engine.graph.build import ProjectGraph
from engine.graph.facts import FileFacts
from engine.languages import ImportStyle, profile


class FileReach:
    """The file-level relations of the graph (GraphQueries's base)."""

    project: ProjectGraph
    graph: nx.MultiDiGraph

    def _owned(self, node: str) -> list[str]:
        """A node and everything it contains (a file's symbols, a class's methods)."""
        # Walked by hand: networkx's descendants over a filtered view counts the whole view's
        # nodes through the filter on every call, which made each call cost the graph's size; and
        # through the adjacency itself, since ``succ``'s views cost more than the walk.
        owned, pending, seen = [node], [node], {node}
        successors = self.graph._adj
        while pending:
            for child, kinds in successors[pending.pop()].items():
                if "contains" in kinds and child not in seen:
                    seen.add(child)
                    owned.append(child)
                    pending.append(child)
        return owned

    def importing_files(self, paths: list[str]) -> list[str]:
        """Files that import (from) any of ``paths``, those left out: where a missed reference shows."""
        wanted = set(paths)
        found: set[str] = set()
        # Read off the adjacency (each source's dict of kinds) rather than through in_edges: its
        # view, made for every symbol of the file, cost more than the answer (the apply's check asks
        # this for every importer it walks).
        predecessors = self.graph._pred
        for path in paths:
            node = f"f:{path}"
            if node not in predecessors:
                continue
            for owned in self._owned(node):
                for source, kinds in predecessors[owned].items():
                    if "imports" in kinds:
                        importer = source[2:].split(":", 1)[0]
                        if importer not in wanted:
                            found.add(importer)
        return sorted(found)

    def _package_siblings(self, paths: list[str]) -> list[str]:
        """The other files of the packages of ``paths`` where a package is its folder and its files
        see one another without importing (Go): a definition renamed in one breaks the others and
        the package's own tests, which no import edge reaches."""
        folders = {_folder(p) for p in paths if _import_style(self.project.facts.get(p)) is ImportStyle.GO_PACKAGES}
        if not folders:
            return []
        return [p for p, facts in self.project.facts.items()
                if _folder(p) in folders and _import_style(facts) is ImportStyle.GO_PACKAGES]

    def content_hashes(self) -> dict[str, str]:
        """Every indexed file's content hash, as the graph last read it."""
        return {path: facts.sha256 for path, facts in self.project.facts.items()}

    def importers_unknown(self, paths: list[str]) -> list[str]:
        """Those of ``paths`` in a language whose imports the graph does not follow (C, C++,
        Rust, Java, C#...): who reads them is not known here."""
        return [p for p in paths if (facts := self.project.facts.get(p)) is not None and facts.language is not None
                and _import_style(facts) is ImportStyle.NONE]

    def dependents(self, paths: list[str]) -> list[str]:
        """The files that see ``paths`` directly: their importers, and in Go the other files of
        their packages, which see them without an import."""
        return sorted({*self.importing_files(paths), *self._package_siblings(paths)} - set(paths))

    def importers_by_distance(self, paths: list[str], limit: int) -> tuple[list[str], int]:
        """Every file that imports ``paths``, directly or through other importers (a test that
        reaches a module through a re-exporting package included; in Go, the other files of the
        package), nearest first, at most ``limit`` of them; and how many more there were past it."""
        found: list[str] = []
        seen = set(paths)
        layer = sorted(set(paths))
        beyond = 0
        while layer:
            following = sorted({p for p in self.dependents(layer) if p not in seen})
            seen.update(following)
            room = max(limit - len(found), 0)
            found += following[:room]
            beyond += len(following[room:])
            layer = following
        return found, beyond


def _import_style(facts: FileFacts | None) -> ImportStyle:
    kind = profile(facts.language) if facts is not None else None
    return kind.imports if kind is not None else ImportStyle.NONE


def _folder(path: str) -> str:
    return path.rpartition("/")[0]

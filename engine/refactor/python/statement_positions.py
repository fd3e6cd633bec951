"""LibCST's positions of a module's nodes, worked out one top-level statement at a time when a
node of it is first asked for.

LibCST's PositionProvider writes the whole module out, counting lines and columns, and that was a
third of the metadata a plan resolves; a plan reads the positions of the statement it changes
and of a few others (a callee, its calls). A node's position depends only on the code before it:
inside a top-level statement (which starts a line, at column 0) it is the position LibCST gives it
in a module of that statement alone, moved down by the lines the statements before it take. Those
lines are counted as LibCST counts them (``\\r\\n``, ``\\r`` or ``\\n``) in each statement's code.
The module itself and its header and footer comments take the whole module's positions, resolved
once if they are ever asked for. Asking for every node (iterating, ``len``) resolves every statement.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

_NEWLINE = re.compile(r"\r\n?|\n")
"""The line breaks LibCST's position provider counts (libcst.metadata.position_provider.NEWLINE_RE)."""


class StatementPositions(Mapping[cst.CSTNode, CodeRange]):
    def __init__(self, module: cst.Module, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self._module = module
        self._parents = parents
        self._known: dict[cst.CSTNode, CodeRange] = {}
        self._resolved: set[cst.CSTNode] = set()  # the top-level statements whose nodes are in _known
        self._first_lines: dict[cst.CSTNode, int] | None = None
        self._whole = False
        self._lock = threading.Lock()  # a plan's passes and a server's thread may both read one tree

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._known.get(node)
        if found is None:
            self._resolve_for(node)
            return self._known[node]  # KeyError: LibCST gives this node no position
        return found

    def __contains__(self, node: object) -> bool:
        if node in self._known:
            return True
        if not isinstance(node, cst.CSTNode):
            return False
        self._resolve_for(node)
        return node in self._known

    def __iter__(self) -> Iterator[cst.CSTNode]:
        self._resolve_whole()
        return iter(self._known)

    def __len__(self) -> int:
        self._resolve_whole()
        return len(self._known)

    def first_lines(self) -> dict[cst.CSTNode, int]:
        """Each top-level statement's first line (1-based, its leading comments and blank lines
        included), as LibCST counts lines."""
        if self._first_lines is None:
            module, line = self._module, 1
            first: dict[cst.CSTNode, int] = {}
            for header in module.header:
                line += len(_NEWLINE.findall(module.code_for_node(header)))
            for statement in module.body:
                first[statement] = line
                line += len(_NEWLINE.findall(module.code_for_node(statement)))
            self._first_lines = first
        return self._first_lines

    def _resolve_for(self, node: cst.CSTNode) -> None:
        if self._whole:
            return
        top = node
        parent = self._parents.get(top)
        while parent is not None and parent is not self._module:
            top, parent = parent, self._parents.get(parent)
        if parent is None or top not in self.first_lines():  # the module, a header or footer line, or not of this tree
            if parent is None and node is not self._module:
                return  # a node of no tree this mapping knows: no position, as in LibCST's mapping
            self._resolve_whole()
            return
        if top not in self._resolved:
            self._resolve_statement(top)

    def _resolve_statement(self, statement: cst.CSTNode) -> None:
        # The statement alone, below as many lines as come before it in the file (one line of
        # backslash continuations, which LibCST counts as the lines they end), so that LibCST's
        # own positions come out as the whole module's with no node's range made again.
        down = self.first_lines()[statement] - 1
        above = (cst.EmptyLine(indent=False, whitespace=cst.SimpleWhitespace("\\\n" * (down - 1))),) if down else ()
        alone = self._module.with_changes(header=above, body=(statement,), footer=())
        found = _positions(alone)
        with self._lock:
            if statement not in self._resolved and not self._whole:
                self._known.update(found)
                for node in (alone, *above, *(part for line in above for part in (line.whitespace, line.newline))):
                    self._known.pop(node, None)
                self._resolved.add(statement)

    def _resolve_whole(self) -> None:
        if self._whole:
            return
        found = _positions(self._module)
        with self._lock:
            self._known = dict(found)
            self._whole = True


def _positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """LibCST's PositionProvider's answer for ``module``, asked of the provider itself: resolved
    through a MetadataWrapper, a provider that is not batchable is followed by a batched walk of
    the whole tree even when no provider is in the batch."""
    return cast(Mapping[cst.CSTNode, CodeRange], PositionProvider()._gen(MetadataWrapper(module, unsafe_skip_copy=True)))

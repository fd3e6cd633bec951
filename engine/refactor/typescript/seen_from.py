"""Which files can name what a file declares: the file, its importers, and, through those that
re-export it (barrels), theirs. A file that spells a class's name and an interface's, but imports
neither file, names others of those names (zod's v3 classes and v4 interfaces share them), so the
structural-fit checks (engine.refactor.typescript.implementers, met_interfaces) take as the file
naming both only one that sees both files. A TypeScript script (a file with no top-level
``import`` or ``export``, such as a ``.d.ts`` of global declarations) declares its names for every
file of the project, as ``declare global { … }`` does inside a module: every file sees them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.refactor.typescript.clashes import ParsedFiles

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_SCRIPTS = (".ts", ".tsx")
"""Where a file without ``import`` or ``export`` is a script whose declarations are global (a
JavaScript file without them may be a CommonJS module, which its importers ``require``)."""
_MODULE_STATEMENTS = frozenset({"import_statement", "export_statement"})
_RE_EXPORT = re.compile(r"\bexport\s*(?:\*|type\s*\{[^}]*\}\s*from|\{[^}]*\}\s*from)")
"""``export * from``, ``export { X } from``: a file through which importers see another's names."""


class Seeing:
    """``seeing(path)``: the files that see ``path``'s declarations, worked out once per path."""

    def __init__(self, context: PlanContext, parsed: ParsedFiles) -> None:
        self._importing = context.graph().importing_files
        self._everything = context.workspace_files
        self._parsed = parsed
        self._seen: dict[str, set[str]] = {}
        self._all: set[str] | None = None

    def __call__(self, path: str) -> set[str]:
        if path not in self._seen and self._script(path):
            self._seen[path] = self._every_file()
        if path not in self._seen:
            seen, frontier = {path}, [path]
            while frontier:
                importers = [importer for importer in self._importing(frontier) if importer not in seen]
                seen.update(importers)
                frontier = [importer for importer in importers if self._re_exports(importer)]
            self._seen[path] = seen
        return self._seen[path]

    def declared(self, path: str, everywhere: bool) -> set[str]:
        """The files that see a declaration of ``path``: every file for one ``everywhere`` (in ``declare global``)."""
        return self._every_file() if everywhere else self(path)

    def _every_file(self) -> set[str]:
        if self._all is None:
            self._all = set(self._everything())
        return self._all

    def _script(self, path: str) -> bool:
        tree = self._parsed.get(path) if path.endswith(_SCRIPTS) else None
        return tree is not None and not any(child.type in _MODULE_STATEMENTS for child in tree[1].named_children)

    def _re_exports(self, path: str) -> bool:
        source = self._parsed.source(path)
        return source is not None and "export" in source.text and _RE_EXPORT.search(source.text) is not None

"""Which files can name what a file declares: the file, its importers, and, through those that
re-export it (barrels), theirs. A file that spells a class's name and an interface's, but imports
neither file, names others of those names (zod's v3 classes and v4 interfaces share them), so the
structural-fit checks (engine.refactor.typescript.implementers, met_interfaces) take as the file
naming both only one that sees both files.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.refactor.typescript.clashes import ParsedFiles

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_RE_EXPORT = re.compile(r"\bexport\s*(?:\*|type\s*\{[^}]*\}\s*from|\{[^}]*\}\s*from)")
"""``export * from``, ``export { X } from``: a file through which importers see another's names."""


class Seeing:
    """``seeing(path)``: the files that see ``path``'s declarations, worked out once per path."""

    def __init__(self, context: PlanContext, parsed: ParsedFiles) -> None:
        self._importing = context.graph().importing_files
        self._parsed = parsed
        self._seen: dict[str, set[str]] = {}

    def __call__(self, path: str) -> set[str]:
        if path not in self._seen:
            seen, frontier = {path}, [path]
            while frontier:
                importers = [importer for importer in self._importing(frontier) if importer not in seen]
                seen.update(importers)
                frontier = [importer for importer in importers if self._re_exports(importer)]
            self._seen[path] = seen
        return self._seen[path]

    def _re_exports(self, path: str) -> bool:
        source = self._parsed.source(path)
        return source is not None and "export" in source.text and _RE_EXPORT.search(source.text) is not None

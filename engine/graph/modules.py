"""Which file an import names: Python modules (absolute, relative, packages, namespace packages),
TypeScript/JavaScript relative paths, and Go package paths under a ``go.mod``."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Iterable

from engine.graph.facts import ImportFact

_JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_GO_MODULE = re.compile(r"^module\s+(\S+)", re.MULTILINE)


class ModuleIndex:
    def __init__(self, paths: Iterable[str], go_mod_texts: dict[str, str] | None = None) -> None:
        self.paths = set(paths)
        self.python: dict[str, str] = {}
        """Dotted module name → file; a file may be known under several names (its package chain
        and its root-relative path, so that namespace packages and src/ layouts both resolve)."""
        self.module_of: dict[str, str] = {}
        """File → its canonical dotted name (by its package chain)."""
        # Plain string work (no pathlib): this runs over every file of the project on each build.
        packages = {_parent(p) for p in self.paths if _name(p) == "__init__.py"}
        for path in sorted(self.paths):
            if not path.endswith((".py", ".pyi")):
                continue
            chain = _package_chain_name(path, packages)
            if chain:
                self.module_of[path] = chain
                self._add(chain, path)
            rooted = _dotted(path)
            if rooted:
                self._add(rooted, path)
        # Namespace packages and src/ layouts: a module is also known by the tails of its path
        # that start below a folder which is not a package, unless a nearer name already won.
        for path in sorted(self.paths):
            rooted = _dotted(path) if path.endswith((".py", ".pyi")) else None
            if not rooted:
                continue
            parts = rooted.split(".")
            folders = path.split("/")
            for start in range(1, len(parts)):
                if "/".join(folders[:start]) not in packages:
                    self.python.setdefault(".".join(parts[start:]), path)
        self.go_modules = {
            str(PurePosixPath(path).parent): match.group(1)
            for path, text in (go_mod_texts or {}).items()
            if (match := _GO_MODULE.search(text))
        }

    def _add(self, name: str, path: str) -> None:
        existing = self.python.get(name)
        # A module file wins over a stub; both win over nothing.
        if existing is None or (existing.endswith(".pyi") and path.endswith(".py")):
            self.python[name] = path

    # -- Python ----------------------------------------------------------------

    def absolute(self, importer: str, fact: ImportFact) -> str:
        """The dotted module an import's module part names, relative imports resolved."""
        if fact.level == 0:
            return fact.module
        package = self.module_of.get(importer, _dotted(importer) or "").split(".")
        if not _name(importer).startswith("__init__."):
            package = package[:-1]
        base = package[: len(package) - (fact.level - 1)] if fact.level > 1 else package
        return ".".join([*base, *([fact.module] if fact.module else [])])

    def python_file(self, module: str) -> str | None:
        return self.python.get(module)

    # -- TypeScript / JavaScript --------------------------------------------------

    def js_file(self, importer: str, specifier: str) -> str | None:
        if not specifier.startswith("."):
            return None  # a package from node_modules
        base = PurePosixPath(importer).parent / specifier
        normal = _normalise(base)
        if normal is None:
            return None
        candidates = [normal] if PurePosixPath(normal).suffix in _JS_EXTENSIONS else []
        candidates += [normal + ext for ext in _JS_EXTENSIONS] + [f"{normal}/index{ext}" for ext in _JS_EXTENSIONS]
        # `./x.js` in TypeScript source names `./x.ts`.
        if normal.endswith(".js"):
            candidates += [normal[:-3] + ext for ext in (".ts", ".tsx")]
        return next((c for c in candidates if c in self.paths), None)

    # -- Go ------------------------------------------------------------------------

    def go_files(self, import_path: str) -> list[str]:
        for directory, module in self.go_modules.items():
            if import_path == module or import_path.startswith(module + "/"):
                relative = import_path[len(module):].lstrip("/")
                folder = str(PurePosixPath(directory) / relative) if relative else directory
                folder = "" if folder == "." else folder
                return sorted(
                    p for p in self.paths
                    if str(PurePosixPath(p).parent) in (folder, folder or ".") and p.endswith(".go") and not p.endswith("_test.go")
                )
        return []


def _parent(path: str) -> str:
    """``PurePosixPath(path).parent`` for the clean relative paths a scan lists."""
    return path.rpartition("/")[0] or "."


def _name(path: str) -> str:
    return path.rpartition("/")[2]


def _without_suffix(path: str) -> str:
    folder, slash, name = path.rpartition("/")
    dot = name.rfind(".")
    return folder + slash + (name[:dot] if dot > 0 else name)


def _dotted(path: str) -> str | None:
    parts = _without_suffix(path).split("/")
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def _package_chain_name(path: str, packages: set[str]) -> str | None:
    """``src/pkg/sub/mod.py`` with ``pkg`` and ``sub`` packages → ``pkg.sub.mod``."""
    name = _name(path)
    parts = [] if name.startswith("__init__.") else [_name(_without_suffix(path))]
    folder = _parent(path)
    while folder in packages:
        parts.insert(0, _name(folder))
        folder = _parent(folder)
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def _normalise(path: PurePosixPath) -> str | None:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)

"""The workspace's tsconfig and jsconfig files, read as tsserver reads them: which project owns a file.

tsserver answers a rename or references only from the projects it has loaded, and it loads a
project only for an open file: the configured project of the nearest ``tsconfig.json`` (else
``jsconfig.json``) above the file when that config (or one it references) includes the file,
else an inferred project of the open files and what they import. A config of another name
(``tests/tsconfig.tests.json``) is never found that way, so its files are loose to tsserver
unless a discoverable config includes them (shared/design/REFACTORING-HAZARDS.md, TypeScript).

The file sets follow the TypeScript handbook: ``files``, ``include`` (default ``**/*``) and
``exclude`` (default ``node_modules``, ``bower_components``, ``jspm_packages`` and ``outDir``),
each relative to the config that states it and inherited through ``extends``; JavaScript files
only with ``allowJs`` (a jsconfig's default). Files a project reaches only through its imports
are not counted: such a file is called loose and shown to the server itself, which costs an
open document and never misses a use.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable

_CONFIG_NAME = re.compile(r"(?:^|/)(?:ts|js)config(?:\.[^/]*)?\.json$")
_DISCOVERABLE = ("tsconfig.json", "jsconfig.json")
_TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts")
_JS_EXTENSIONS = (".js", ".jsx", ".mjs", ".cjs")
_DEFAULT_EXCLUDES = ("node_modules", "bower_components", "jspm_packages")


@dataclass(frozen=True)
class ProjectConfig:
    """One config file and the file set it states (workspace-relative, POSIX paths)."""

    path: str
    files: tuple[str, ...] | None
    include: tuple[str, ...] | None
    exclude: tuple[str, ...]
    allow_js: bool
    references: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=(), compare=False)
    maps_paths: bool = field(default=False, compare=False)
    """Whether it resolves imports through ``paths`` or ``baseUrl`` (its own or inherited): an
    inferred project, without them, resolves its files' imports elsewhere."""

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.path)

    @property
    def discoverable(self) -> bool:
        """Whether tsserver finds this config by itself, looking up from an open file."""
        return posixpath.basename(self.path) in _DISCOVERABLE

    @cached_property
    def _include_patterns(self) -> list[re.Pattern[str]]:
        if self.include is None:
            return [] if self.files is not None else [_glob(self.folder, "**/*")]
        return [_glob("", entry) for entry in self.include]

    @cached_property
    def _exclude_patterns(self) -> list[re.Pattern[str]]:
        return [_glob("", entry, prefix=True) for entry in self.exclude]

    def includes(self, path: str) -> bool:
        """Whether ``path`` is one of the config's own files (not one reached through imports)."""
        if self.files is not None and path in self.files:
            return True
        if not path.endswith(_TS_EXTENSIONS + (_JS_EXTENSIONS if self.allow_js else ())):
            return False
        if "/node_modules/" in f"/{path}":
            return False
        if not any(pattern.fullmatch(path) for pattern in self._include_patterns):
            return False
        return not any(pattern.fullmatch(path) for pattern in self._exclude_patterns)


class ProjectConfigs:
    """Every tsconfig/jsconfig of a workspace, and which of them tsserver would put a file in."""

    def __init__(self, listing: list[str], read: Callable[[str], str | None]) -> None:
        self._read = read
        self._paths = _config_paths(listing)
        self._raw: dict[str, dict[str, object] | None] = {}
        self._texts: dict[str, str | None] = {}
        """Each config file read, as it read: what :meth:`still_holds` compares."""
        self._owners: dict[str, ProjectConfig | None] = {}
        self.configs: dict[str, ProjectConfig] = {path: self._config(path) for path in self._paths}

    def still_holds(self, listing: list[str], read: Callable[[str], str | None]) -> bool:
        """Whether these are still the workspace's configs: the same config files, each of them
        (and each one they extend) reading as it read."""
        return _config_paths(listing) == self._paths and all(read(path) == text for path, text in self._texts.items())

    def owner(self, path: str) -> ProjectConfig | None:
        """The config whose project tsserver puts ``path`` in when it is opened, or None when
        the file is loose (an inferred project: only the open files and what they import)."""
        try:
            return self._owners[path]
        except KeyError:
            found = self._owners[path] = self._owner(path)  # the configs fix it: asked again on every plan
            return found

    def _owner(self, path: str) -> ProjectConfig | None:
        folder = posixpath.dirname(path)
        while True:
            for name in _DISCOVERABLE:
                candidate = self.configs.get(posixpath.join(folder, name) if folder else name)
                if candidate is not None:
                    # The nearest config decides, whether or not it includes the file: tsserver
                    # looks into its references (a solution-style root), then gives up.
                    return self._through_references(candidate, path, set())
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def _through_references(self, config: ProjectConfig, path: str, seen: set[str]) -> ProjectConfig | None:
        if config.path in seen:
            return None
        seen.add(config.path)
        if config.includes(path):
            return config
        for reference in config.references:
            referenced = self.configs.get(reference)
            found = self._through_references(referenced, path, seen) if referenced is not None else None
            if found is not None:
                return found
        return None

    def undiscovered_mapping(self, path: str) -> ProjectConfig | None:
        """For a file tsserver loads no configured project for (``owner`` None): a config of
        another name (``tsconfig.tests.json``) that includes it and maps import paths. tsserver
        puts such a file in an inferred project, without those paths, so its imports resolve to
        other files (the package's built output) and its uses of the project's names go unseen."""
        if self.owner(path) is not None:
            return None
        for config in self.configs.values():
            if not config.discoverable and config.maps_paths and config.includes(path):
                return config
        return None

    def problems(self) -> list[str]:
        return [problem for config in self.configs.values() for problem in config.problems]

    # -- reading ---------------------------------------------------------------

    def _json(self, path: str) -> dict[str, object] | None:
        if path not in self._raw:
            text = self._texts[path] = self._read(path)
            try:
                loaded = json.loads(jsonc_text(text)) if text is not None else None
            except ValueError:
                loaded = None
            self._raw[path] = loaded if isinstance(loaded, dict) else None
        return self._raw[path]

    def _config(self, path: str) -> ProjectConfig:
        problems: list[str] = []
        chain = self._chain(path, problems, set())
        folder = posixpath.dirname(path)
        files: tuple[str, ...] | None = None
        include: tuple[str, ...] | None = None
        exclude: tuple[str, ...] | None = None
        options: dict[str, object] = {}
        for defining in chain:  # the base first: each config overrides what it states
            data = self._json(defining) or {}
            base = posixpath.dirname(defining)
            stated = {key: _strings(data.get(key)) for key in ("files", "include", "exclude")}
            if stated["files"] is not None:
                files = tuple(_joined(base, entry) for entry in stated["files"])
            if stated["include"] is not None:
                include = tuple(_joined(base, entry) for entry in stated["include"])
            if stated["exclude"] is not None:
                exclude = tuple(_joined(base, entry) for entry in stated["exclude"])
            compiler = data.get("compilerOptions")
            if isinstance(compiler, dict):
                for key, value in compiler.items():
                    options[key] = _joined(base, value) if key == "outDir" and isinstance(value, str) else value
        if exclude is None:
            exclude = tuple(_joined(folder, name) for name in _DEFAULT_EXCLUDES)
            if isinstance(options.get("outDir"), str):
                exclude += (str(options["outDir"]),)
        allow_js = bool(options.get("allowJs", posixpath.basename(path).startswith("jsconfig")))
        own = self._json(path) or {}
        references = []
        listed = own.get("references")
        for reference in listed if isinstance(listed, list) else []:
            target = reference.get("path") if isinstance(reference, dict) else None
            if isinstance(target, str):
                joined = _joined(folder, target)
                references.append(joined if joined.endswith(".json") else posixpath.join(joined, "tsconfig.json"))
        if self._json(path) is None:
            problems.append(f"{path} could not be read as JSON: its project is not known")
        return ProjectConfig(path, files, include, exclude, allow_js, tuple(references), tuple(problems),
                             maps_paths="paths" in options or "baseUrl" in options)

    def _chain(self, path: str, problems: list[str], seen: set[str]) -> list[str]:
        """``path`` and the configs it extends, the furthest base first."""
        if path in seen:
            return []
        seen.add(path)
        data = self._json(path) or {}
        extends = data.get("extends")
        bases = [extends] if isinstance(extends, str) else [e for e in extends if isinstance(e, str)] if isinstance(extends, list) else []
        chain: list[str] = []
        for base in bases:
            if not base.startswith((".", "/")):
                continue  # a package's config (node_modules): compiler options only, no file set of the project's
            target = _joined(posixpath.dirname(path), base)
            target = target if target.endswith(".json") else f"{target}.json"
            if self._json(target) is None:
                problems.append(f"{path} extends {base}, which could not be read")
                continue
            chain += self._chain(target, problems, seen)
        return [*chain, path]


def _config_paths(listing: list[str]) -> list[str]:
    return sorted(p for p in listing if _CONFIG_NAME.search(p) and "/node_modules/" not in f"/{p}")


def _strings(value: object) -> list[str] | None:
    """A config's list of paths or patterns, None when it states none."""
    return [str(entry) for entry in value] if isinstance(value, list) else None


def _joined(folder: str, entry: str) -> str:
    return posixpath.normpath(posixpath.join(folder, entry)).removeprefix("./") if entry else folder


def _glob(folder: str, pattern: str, *, prefix: bool = False) -> re.Pattern[str]:
    """A tsconfig wildcard as a regular expression over workspace-relative paths. In ``include``,
    a last segment without a wildcard or an extension is a folder (all of it); an ``exclude``
    entry (``prefix``) also excludes everything below what it names."""
    joined = _joined(folder, pattern)
    segments = [] if joined in ("", ".") else joined.split("/")
    last = segments[-1] if segments else ""
    if not prefix and "*" not in last and "?" not in last and "." not in last:
        segments += ["**", "*"]
    regex = ""
    for number, segment in enumerate(segments):
        if segment == "**":
            regex += "(?:[^/]+/)*" if number < len(segments) - 1 else ".*"
            continue
        regex += "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment)
        regex += "/" if number < len(segments) - 1 else ""
    return re.compile(regex + ("(?:/.*)?" if prefix else ""))


def root_compiler_options(root: Path) -> dict[str, object] | None:
    """The ``compilerOptions`` of the workspace's root tsconfig.json (else jsconfig.json); None
    when there is neither, or the first found cannot be read or has none."""
    for name in ("tsconfig.json", "jsconfig.json"):
        path = root / name
        if not path.is_file():
            continue
        try:
            data = json.loads(jsonc_text(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None
        options = data.get("compilerOptions") if isinstance(data, dict) else None
        return options if isinstance(options, dict) else None
    return None


def jsonc_text(text: str) -> str:
    """JSON with comments and trailing commas (what tsc accepts) as plain JSON."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end == -1 else end + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))

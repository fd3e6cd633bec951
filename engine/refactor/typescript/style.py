"""The project's own style, for what tsserver writes (a move's new imports and moved code).

tsserver formats what it writes with the options its client gives it (4 spaces by default) and
writes import specifiers by its ``importModuleSpecifierPreference`` ("shortest" by default, which
with a ``baseUrl`` gives ``'_internals/utils'``, a path a test runner without path mapping cannot
resolve). So it is given:
- the indentation of the file it edits, read from the file's own indented lines, else from
  ``.editorconfig`` (``indent_style``, ``indent_size``), else from the prettier config
  (``.prettierrc``, ``.prettierrc.json``, ``package.json``'s ``prettier``: ``useTabs``,
  ``tabWidth``);
- "relative" specifiers unless the project's own imports between its files mostly use its path
  aliases (``baseUrl``, ``paths``): "non-relative" then.
Quotes and semicolons tsserver already takes from the file it edits.
"""

from __future__ import annotations

import configparser
import json
import re
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatch
from math import gcd
from pathlib import Path, PurePosixPath

from engine.refactor.typescript.configs import root_compiler_options

_SPECIFIER = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"'\n]+)["']""")
_SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_SAMPLED_FILES = 300
_SAMPLED_BYTES = 16384


@dataclass(frozen=True)
class Indentation:
    size: int
    tabs: bool
    source: str
    """Where it was read: the file, .editorconfig or the prettier config."""


def indentation(root: Path, relative: str, text: str) -> Indentation | None:
    """How ``relative`` (its ``text``) is indented, or None when nothing says."""
    return _from_lines(text) or _from_editorconfig(root, relative) or _from_prettier(root)


def _from_lines(text: str) -> Indentation | None:
    widths: Counter[int] = Counter()
    tabs = spaces = 0
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if not stripped or stripped.startswith(("*", "//")) or len(stripped) == len(line):
            continue  # blank, a comment's continuation, or not indented
        lead = line[: len(line) - len(stripped)]
        if lead.startswith("\t"):
            tabs += 1
        elif "\t" not in lead:
            spaces += 1
            widths[len(lead)] += 1
    if tabs > spaces:
        return Indentation(1, True, "the file")
    if not widths:
        return None
    unit = 0
    for width in widths:
        unit = gcd(unit, width)
    return Indentation(unit, False, "the file") if unit in (2, 3, 4, 8) else None


def _from_editorconfig(root: Path, relative: str) -> Indentation | None:
    size: int | None = None
    tabs: bool | None = None
    folder = PurePosixPath(relative).parent
    chain = [folder, *folder.parents]
    for directory in reversed(chain):  # the outermost first: nearer files override
        path = root / directory / ".editorconfig"
        if not path.is_file():
            continue
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string("[__top__]\n" + path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, configparser.Error):
            continue
        if parser.get("__top__", "root", fallback="").lower() == "true":
            size, tabs = None, None
        name = PurePosixPath(relative).relative_to(directory).as_posix() if str(directory) != "." else relative
        for section in parser.sections():
            if section == "__top__" or not _editorconfig_match(section, name):
                continue
            style = parser.get(section, "indent_style", fallback=None)
            if style in ("tab", "space"):
                tabs = style == "tab"
            width = parser.get(section, "indent_size", fallback=None)
            if width is not None and width.isdigit():
                size = int(width)
    if tabs is None and size is None:
        return None
    return Indentation(size or (1 if tabs else 2), bool(tabs), ".editorconfig")


def _editorconfig_match(section: str, name: str) -> bool:
    expanded = [section]
    braces = re.search(r"\{([^}]*)\}", section)
    if braces:
        expanded = [section[:braces.start()] + option + section[braces.end():] for option in braces.group(1).split(",")]
    for pattern in expanded:
        if "/" not in pattern.lstrip("/"):
            if fnmatch(PurePosixPath(name).name, pattern):
                return True
        elif fnmatch(name, pattern.lstrip("/").replace("**", "*")):
            return True
    return False


def _from_prettier(root: Path) -> Indentation | None:
    config: object = None
    for name in (".prettierrc", ".prettierrc.json"):
        path = root / name
        if path.is_file():
            try:
                config = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                config = _prettier_yaml(path)
            break
    if config is None and (root / "package.json").is_file():
        try:
            manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            manifest = None
        config = manifest.get("prettier") if isinstance(manifest, dict) else None
    if not isinstance(config, dict) or not ({"tabWidth", "useTabs"} & set(config)):
        return None
    tabs = config.get("useTabs") is True
    width = config.get("tabWidth")
    return Indentation(width if isinstance(width, int) else 2, tabs, "the prettier config")


def _prettier_yaml(path: Path) -> dict[str, object] | None:
    """The flat ``key: value`` form of a YAML .prettierrc."""
    found: dict[str, object] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        key, _, value = line.partition(":")
        value = value.strip()
        if key.strip() and value:
            found[key.strip()] = int(value) if value.isdigit() else value == "true" if value in ("true", "false") else value
    return found


def import_specifier_preference(root: Path) -> str:
    """"relative", unless the project's imports of its own files mostly go through its path
    aliases ("non-relative"). A sample of the project's source files is read (their heads)."""
    aliases = _alias_roots(root)
    relative = aliased = 0
    for path in _sample_sources(root):
        try:
            with (root / path).open("rb") as handle:
                head = handle.read(_SAMPLED_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        for specifier in _SPECIFIER.findall(head):
            if specifier.startswith("."):
                relative += 1
            elif specifier.split("/")[0] in aliases:
                aliased += 1
    return "non-relative" if aliased > relative else "relative"


def path_aliases(root: Path) -> dict[str, str]:
    """The root config's ``paths`` aliases that the project's own imports use more than bare
    ``baseUrl`` specifiers: each alias pattern (``@lib/*``) with the workspace-relative folder
    pattern it maps to (``src/lib/*``), the first target of each; {} when its imports do not
    mostly go through them."""
    options = root_compiler_options(root)
    paths = options.get("paths") if options is not None else None
    if not isinstance(paths, dict):
        return {}
    base = options.get("baseUrl") if options is not None else None
    folder = PurePosixPath(base) if isinstance(base, str) else PurePosixPath(".")
    aliases = {key: str(folder / targets[0]) for key, targets in paths.items()
               if isinstance(key, str) and key.count("*") == 1 and isinstance(targets, list) and targets
               and isinstance(targets[0], str) and targets[0].count("*") == 1}
    through_paths = bare = 0
    for path in _sample_sources(root):
        try:
            with (root / path).open("rb") as handle:
                head = handle.read(_SAMPLED_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        for specifier in _SPECIFIER.findall(head):
            if specifier.startswith("."):
                continue
            if any(specifier.startswith(key.split("*")[0]) for key in aliases):
                through_paths += 1
            elif isinstance(base, str) and (root / base / specifier.split("/")[0]).exists():
                bare += 1
    return aliases if through_paths > bare else {}


def _sample_sources(root: Path) -> list[str]:
    """Up to a few hundred of the project's TypeScript and JavaScript files, outside
    ``node_modules`` and hidden folders, nearest the root first."""
    found: list[str] = []
    folders = [root]
    while folders and len(found) < _SAMPLED_FILES:
        folder = folders.pop(0)
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "node_modules" or entry.is_symlink():
                continue
            if entry.is_dir():
                folders.append(entry)
            elif entry.name.endswith(_SOURCE_SUFFIXES):
                found.append(entry.relative_to(root).as_posix())
    return found[:_SAMPLED_FILES]


def _alias_roots(root: Path) -> set[str]:
    """First segments a non-relative specifier of the project's own files starts with: the
    folders and files under ``baseUrl``, and the ``paths`` keys of the root tsconfig/jsconfig."""
    options = root_compiler_options(root)
    if options is None:
        return set()
    paths = options.get("paths")
    found = {key.split("/")[0] for key in (paths if isinstance(paths, dict) else {}) if isinstance(key, str)}
    base = options.get("baseUrl")
    if isinstance(base, str) and (root / base).is_dir():
        found |= {entry.name.split(".")[0] for entry in (root / base).iterdir() if entry.name != "node_modules"}
    return found - {"", "*"}
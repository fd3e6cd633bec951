"""Stale references after a rename or move, found by resolving imports and attributes.

The judge of benchmarks/bench_real_projects.py asks: after the refactoring, does any code
still reach the OLD symbol? A text search cannot answer that (``from .a import (\\n g,\\n
f,\\n)`` spans lines; ``import pkg.a as m`` then ``m.f`` never spells ``pkg.a.f``), so every
``*.py`` file is parsed and its imports are resolved to dotted modules:

- ``from M import old [as x]`` (absolute, or relative with the dots resolved against the
  importing file's package; parenthesised lists report the alias's own line);
- ``import M [as x]`` / ``from pkg import M [as x]``, then ``x.old`` or ``M.old``;
- ``from M import *`` and a bare ``old`` in a file that does not bind ``old`` itself;
- the string ``"M.old"`` (``mock.patch`` targets) and ``__all__`` listing ``old`` in an M
  that no longer binds it.

M is a *stale module*: the symbol's defining module (rename) or source module (move), plus
every package ``__init__`` that re-exported the name before the refactoring (computed from
the pristine texts). A moved name's re-exporter is stale only if it no longer provides the
name afterwards: re-pointing ``pkg/__init__.py`` at the destination keeps ``from pkg import f``
correct. Nothing here imports the engine: the judge must not share the engine's mistakes.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SKIPPED_PARTS = frozenset({".graft", "__pycache__", ".ropeproject", ".git", ".tox", ".venv"})
"""Folders no refactoring tool writes user code into."""


# -- addresses and module names -----------------------------------------------------


def module_name(path: str, pythonpath: str = ".") -> str:
    """The dotted module a project-relative file defines: ``src/pkg/a.py`` with pythonpath
    ``src`` → ``pkg.a``; ``pkg/__init__.py`` → ``pkg``. Files outside pythonpath (a ``tests``
    folder beside ``src``) are named from the project root, which is what relative imports
    in them resolve against."""
    parts = PurePosixPath(path).with_suffix("").parts
    prefix = PurePosixPath(pythonpath).parts
    if prefix and parts[: len(prefix)] == prefix:
        parts = parts[len(prefix):]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def split_address(address: str) -> tuple[str, str]:
    """``file:Seg/Seg`` or ``file:LINE[:COL]`` → (file, the part after the first colon)."""
    file, _, rest = address.partition(":")
    return file, rest


def _position_line(rest: str) -> int | None:
    """The line of a ``LINE[:COL]`` address part, None for a symbol path."""
    pieces = rest.split(":")
    return int(pieces[0]) if pieces and all(p.isdigit() for p in pieces) else None


# -- module-level bindings ----------------------------------------------------------


def module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at import time: the body, and inside if/try/with, not def/class."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.AsyncWith)):
            yield from module_level(statement.body)
            yield from module_level(getattr(statement, "orelse", []))  # with-blocks have none
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody, *(h.body for h in statement.handlers)):
                yield from module_level(block)


def _assigned_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _assigned_names(element)
    elif isinstance(target, ast.Starred):
        yield from _assigned_names(target.value)


def definition_lines(tree: ast.Module, name: str) -> list[int]:
    """Lines of the module-level def/class/assignment of ``name`` (imports do not count: a
    moved name's source may import it back, that is not a definition)."""
    lines = []
    for statement in module_level(tree.body):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and statement.name == name:
            lines.append(statement.lineno)
        elif isinstance(statement, ast.Assign):
            lines += [n.lineno for t in statement.targets for n in _assigned_names(t) if n.id == name]
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == name:
            lines.append(statement.lineno)
    return lines


def _imported_as(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, ast.alias]]:
    """(bound name, alias) of every alias an import statement binds."""
    for alias in node.names:
        if alias.name != "*":
            yield alias.asname or alias.name.split(".")[0], alias


def binds_at_module_level(tree: ast.Module, name: str) -> bool:
    """Whether ``module.name`` exists after import: defined or imported at module level."""
    if definition_lines(tree, name):
        return True
    return any(bound == name for statement in module_level(tree.body)
               if isinstance(statement, (ast.Import, ast.ImportFrom)) for bound, _ in _imported_as(statement))


def parse(text: str | bytes) -> ast.Module | None:
    """The tree, or None for files no tool could have edited as Python (test data with
    deliberate syntax errors, other encodings)."""
    try:
        with warnings.catch_warnings():
            # The project's invalid escapes ("\\.") are its business, not the judge's output.
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


# -- import resolution --------------------------------------------------------------


def resolve_from(importer: str, is_package: bool, level: int, module: str | None) -> str | None:
    """The absolute module of ``from <level dots><module> import ...`` in ``importer``."""
    if level == 0:
        return module
    package = importer.split(".") if importer else []
    if not is_package:
        package = package[:-1]
    if level - 1 > len(package):
        return None  # beyond the top-level package: Python refuses it too
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, *([module] if module else [])]) or None


@dataclass(frozen=True)
class PyFile:
    path: str
    """Project-relative, POSIX."""
    module: str
    is_package: bool
    tree: ast.Module

    def source_of(self, node: ast.ImportFrom) -> str | None:
        return resolve_from(self.module, self.is_package, node.level, node.module)


def python_files(root: Path, pythonpath: str) -> Iterator[PyFile]:
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if SKIPPED_PARTS & set(relative.parts):
            continue
        tree = parse(path.read_bytes())  # bytes: ast honours a coding cookie
        if tree is not None:
            posix = relative.as_posix()
            yield PyFile(posix, module_name(posix, pythonpath), relative.name == "__init__.py", tree)


def pristine_files(pristine: Mapping[str, str], pythonpath: str) -> Iterator[PyFile]:
    for path, text in sorted(pristine.items()):
        tree = parse(text) if path.endswith(".py") else None
        if tree is not None:
            yield PyFile(path, module_name(path, pythonpath), PurePosixPath(path).name == "__init__.py", tree)


# -- which modules are stale --------------------------------------------------------


def re_exporters(pristine: Mapping[str, str], home: str, name: str, pythonpath: str) -> dict[str, str]:
    """{package: its __init__ path} of every package that handed out ``home.name`` under the
    same name before the refactoring, directly or through another re-exporter."""
    inits = [f for f in pristine_files(pristine, pythonpath) if f.is_package]
    exporters: dict[str, str] = {}
    providers = {home}
    grown = True
    while grown:  # a fixed point: pkg re-exports from pkg.sub, which re-exports from pkg.sub.a
        grown = False
        for init in inits:
            if init.module not in providers and _re_exports(init, providers, name):
                exporters[init.module] = init.path
                providers.add(init.module)
                grown = True
    return exporters


def _re_exports(init: PyFile, providers: set[str], name: str) -> bool:
    for statement in module_level(init.tree.body):
        if isinstance(statement, ast.ImportFrom) and init.source_of(statement) in providers:
            for alias in statement.names:
                if alias.name == name and alias.asname in (None, name):
                    return True
                # A star import hands out public names only (ignoring __all__ subtleties).
                if alias.name == "*" and not name.startswith("_"):
                    return True
    return False


def is_module_level_symbol(text: str | None, name: str, address_rest: str) -> bool:
    """Whether a rename's target is the module attribute ``name`` (so importers reach it),
    not a method, parameter or local that merely shares the spelling."""
    tree = parse(text) if text is not None else None
    if tree is None:
        return False
    line = _position_line(address_rest)
    if line is None:
        # ``/name`` is the absolute form of a top-level name path (``name`` alone may match deeper).
        return "/" not in address_rest.removeprefix("/") and bool(definition_lines(tree, name))
    return line in definition_lines(tree, name)


def stale_modules(root: Path, case: Mapping[str, object], pristine: Mapping[str, str], pythonpath: str) -> set[str]:
    """The modules through which the old name must no longer be reached (empty when the
    renamed thing is not a module attribute: its leftovers are the token check's job)."""
    file, rest = split_address(str(case["address"]))
    old = str(case["old"])
    if case["op"] == "move":
        home = str(case.get("module") or module_name(file, pythonpath))
    elif is_module_level_symbol(pristine.get(file), old, rest):
        home = module_name(file, pythonpath)
    else:
        return set()
    exporters = re_exporters(pristine, home, old, pythonpath)
    if case["op"] == "move":
        modules = {f.module: f for f in python_files(root, pythonpath)}
        exporters = {m: p for m, p in exporters.items() if not _still_provides(modules.get(m), old, modules)}
    return {home, *exporters}


def _still_provides(file: PyFile | None, name: str, modules: Mapping[str, PyFile], depth: int = 0) -> bool:
    """Whether a module binds ``name`` after the refactoring: itself, or through a star import of
    a module that provides it publicly (``from .more import *`` in more_itertools' __init__, with
    the name in more's ``__all__`` or public and unlisted)."""
    if file is None:
        return False
    if binds_at_module_level(file.tree, name):
        return True
    if depth > 4:
        return False
    for statement in module_level(file.tree.body):
        if isinstance(statement, ast.ImportFrom) and any(a.name == "*" for a in statement.names):
            source = modules.get(file.source_of(statement) or "")
            if source is not None and _star_exports(source.tree, name) and _still_provides(source, name, modules, depth + 1):
                return True
    return False


def _star_exports(tree: ast.Module, name: str) -> bool:
    """Whether ``from M import *`` hands out ``name``: listed in M's ``__all__``, or public when
    M has none."""
    for statement in module_level(tree.body):
        listing = _all_listing(statement)
        if listing is not None:
            return any(isinstance(n, ast.Constant) and n.value == name for n in ast.walk(listing))
    return not name.startswith("_")


# -- one file's stale references ----------------------------------------------------


def _module_aliases(file: PyFile) -> dict[str, str]:
    """Local name → dotted module (or module attribute) it was imported as, anywhere in the
    file: ``import a.b`` binds ``a``; ``import a.b as m`` binds ``m`` to ``a.b``; ``from p
    import m`` binds ``m`` to ``p.m``. Flow-insensitive on purpose: a stale import inside a
    function is as broken as one at the top."""
    aliases: dict[str, str] = {}
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and (source := file.source_of(node)):
            for bound, alias in _imported_as(node):
                aliases[bound] = f"{source}.{alias.name}"
    return aliases


def _dotted(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """The module path an expression like ``m`` or ``pkg.a`` stands for, via imports."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def _binds_locally(tree: ast.Module, name: str) -> bool:
    """Whether the file gives ``name`` a meaning of its own (so a bare use is not the star
    import's)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(b == name for b, _ in _imported_as(node)):
            return True
    return False


def _import_from_hits(file: PyFile, stale: set[str], old: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(file.tree):
        if isinstance(node, ast.ImportFrom) and (source := file.source_of(node)) in stale:
            for alias in node.names:
                if alias.name == old:
                    # alias.lineno: inside a parenthesised list, the line of the name itself.
                    yield alias.lineno, f"from {source} import {old}" + (f" as {alias.asname}" if alias.asname else "")


def _attribute_hits(file: PyFile, stale: set[str], old: str) -> Iterator[tuple[int, str]]:
    aliases = _module_aliases(file)
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Attribute) and node.attr == old and (base := _dotted(node.value, aliases)) in stale:
            yield node.lineno, f"{ast.unparse(node)} ({base}.{old})"


def _star_hits(file: PyFile, stale: set[str], old: str) -> Iterator[tuple[int, str]]:
    sources = [s for n in ast.walk(file.tree) if isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names)
               and (s := file.source_of(n)) in stale]
    if not sources or _binds_locally(file.tree, old):
        return
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Name) and node.id == old:
            yield node.lineno, f"{old} via from {sources[0]} import *"


def _string_hits(file: PyFile, stale: set[str], old: str) -> Iterator[tuple[int, str]]:
    """Dotted-path strings (``mock.patch("pkg.a.f")``, import strings); prose is left alone."""
    paths = {f"{module}.{old}" for module in stale}
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in paths or any(node.value.startswith(p + ".") for p in paths):
                yield node.lineno, f"string {node.value!r}"


def _all_hits(file: PyFile, stale: set[str], old: str) -> Iterator[tuple[int, str]]:
    """``__all__`` naming ``old`` in a stale module that no longer binds it: ``from M import *``
    would raise AttributeError."""
    if file.module not in stale or binds_at_module_level(file.tree, old):
        return
    for statement in module_level(file.tree.body):
        listing = _all_listing(statement)
        for node in ast.walk(listing) if listing is not None else ():
            if isinstance(node, ast.Constant) and node.value == old:
                yield node.lineno, f"__all__ lists {old!r}"


def _all_listing(statement: ast.stmt) -> ast.expr | None:
    """The value of ``__all__ = ...`` / ``__all__ += ...`` / ``__all__: list[str] = ...``."""
    value: ast.expr | None
    if isinstance(statement, ast.Assign):
        targets, value = statement.targets, statement.value
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        targets, value = [statement.target], statement.value
    else:
        return None
    return value if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) else None


CHECKS = (_import_from_hits, _attribute_hits, _star_hits, _string_hits, _all_hits)


def stale_references(root: Path, case: Mapping[str, object], pristine: Mapping[str, str], pythonpath: str = ".") -> list[str]:
    """Every ``file:line: what`` in the refactored project at ``root`` that still refers to the
    old symbol of ``case`` (a rename or move from benchmarks/real_projects.toml)."""
    old = str(case["old"])
    stale = stale_modules(root, case, pristine, pythonpath)
    if not stale:
        return []
    found: set[tuple[str, int, str]] = set()
    for file in python_files(root, pythonpath):
        for check in CHECKS:
            found |= {(file.path, line, what) for line, what in check(file, stale, old)}
    return [f"{path}:{line}: {what}" for path, line, what in sorted(found)]


def move_verdict(root: Path, case: Mapping[str, object]) -> str:
    """'' when the moved name's definition left the source and is now in the destination."""
    source, _ = split_address(str(case["address"]))
    dest, old = str(case["dest"]), str(case["old"])
    in_source, in_dest = (_defines(root / path, old) for path in (source, dest))
    if in_source and in_dest:
        return f"copied, not moved: {old} is still defined in {source} and now also in {dest}"
    if in_source:
        return f"not moved: {old} is still defined in {source} and not in {dest}"
    if not in_dest:
        return f"lost: {old} is defined in neither {source} nor {dest}"
    return ""


def _defines(path: Path, name: str) -> bool:
    tree = parse(path.read_bytes()) if path.is_file() else None
    return tree is not None and bool(definition_lines(tree, name))


# -- file renames -------------------------------------------------------------------


def _under(module: str | None, old: str) -> bool:
    return module is not None and (module == old or module.startswith(old + "."))


def _module_import_hits(file: PyFile, old: str) -> Iterator[tuple[int, str]]:
    """``import old[.x] [as m]``, ``from old[.x] import ...`` (any dots), and ``from pkg import
    base`` where ``pkg.base`` is the old module."""
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _under(alias.name, old):
                    yield alias.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            source = file.source_of(node)
            if _under(source, old):
                yield node.lineno, f"from {source} import ..."
                continue
            for alias in node.names:
                if source is not None and _under(f"{source}.{alias.name}", old):
                    yield alias.lineno, f"from {source} import {alias.name}"


def _module_attribute_hits(file: PyFile, old: str) -> Iterator[tuple[int, str]]:
    """``pkg.old`` reached through an import of ``pkg`` (the old module as an attribute)."""
    aliases = _module_aliases(file)
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Attribute) and _dotted(node, aliases) == old and not _under(_dotted(node.value, aliases), old):
            yield node.lineno, f"{ast.unparse(node)} ({old})"


def _module_string_hits(file: PyFile, old: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(file.tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _under(node.value, old):
            yield node.lineno, f"string {node.value!r}"


def stale_module_references(root: Path, old_module: str, pythonpath: str = ".") -> list[str]:
    """Every ``file:line: what`` in the project at ``root`` that still reaches the module a
    rename-file renamed away (imports in every form, attributes through its package, dotted
    strings such as ``mock.patch`` targets)."""
    found: set[tuple[str, int, str]] = set()
    for file in python_files(root, pythonpath):
        for check in (_module_import_hits, _module_attribute_hits, _module_string_hits):
            found |= {(file.path, line, what) for line, what in check(file, old_module)}
    return [f"{path}:{line}: {what}" for path, line, what in sorted(found)]


def rename_file_verdict(root: Path, case: Mapping[str, object]) -> str:
    """'' when the file left its old path and is at the new one."""
    old, new = str(case["address"]), str(case["dest"])
    at_old, at_new = (root / old).is_file(), (root / new).is_file()
    if at_old and at_new:
        return f"copied, not renamed: {old} is still there and {new} exists too"
    if at_old:
        return f"not renamed: {old} is still there and {new} does not exist"
    if not at_new:
        return f"lost: neither {old} nor {new} exists"
    return ""

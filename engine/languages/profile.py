"""The one record per language: what codegraft knows about it and what it can do with it.

Code that differs by language asks the file's profile (``profile_of(path)``) instead of
comparing language-id strings, so a language is added by one module of this package: its
profile, and its tree-sitter rules when a grammar wheel exists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Callable

from engine.languages.spec import LanguageRules


class ImportStyle(str, Enum):
    """How the project graph resolves the language's imports to files."""

    NONE = "none"
    """No import edges (the language's files stand alone in the graph)."""
    PYTHON = "python"
    """Dotted modules, packages, relative imports, re-exports: name resolution by Python scoping."""
    ES_MODULES = "es-modules"
    """Relative specifiers with extension and index rules (TypeScript, JavaScript)."""
    GO_PACKAGES = "go-packages"
    """Import paths under the module that go.mod declares; a package is its folder."""


class SymbolMoves(str, Enum):
    """How a top-level symbol moves to another file."""

    SERVER = "server"
    """Only through the language server's move (refused without one)."""
    PYTHON = "python"
    """codegraft's own: the code, its imports, every importer rewritten, import-checked."""
    SAME_PACKAGE = "same-package"
    """Within one package (a folder) as text, imports carried; across packages only through the server."""


class FileMoves(str, Enum):
    """How a file is renamed or moved with its importers updated."""

    SERVER = "server"
    """Through the server's willRenameFiles (refused without one)."""
    PYTHON = "python"
    """codegraft's own import rewriting (every import form, stubs along)."""
    SAME_FOLDER_FREE = "same-folder-free"
    """Within its folder nothing refers to the file name (a Go package is its folder); elsewhere the server."""


@dataclass(frozen=True)
class BlankLines:
    """Blank lines an insert puts around a definition."""

    top_level: int = 1
    nested: int = 1
    between_statements: int | None = None
    """Between two plain statements (constants sit together in Python: 0); None: as definitions."""


@dataclass(frozen=True)
class Grammar:
    """Where the tree-sitter grammar comes from: a wheel's module and its language function."""

    module: str
    function: str = "language"


_C_LIKE_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SCRIPT_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
"""JavaScript's identifiers: ``$`` is a letter there."""


def c_like_identifier(name: str) -> bool:
    return _C_LIKE_IDENTIFIER.fullmatch(name) is not None


@dataclass(frozen=True)
class Language:
    id: str
    """LSP languageId (``python``, ``typescriptreact``, ...)."""
    family: str
    """Languages that share rules, servers and import resolution (TypeScript and JavaScript are one)."""
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()
    keywords: frozenset[str] = frozenset()
    """Reserved words: never a valid new name."""
    contextual_keywords: frozenset[str] = frozenset()
    """Names in most places and keywords in some: valid names, but swapping one in or out can
    change how a line parses."""
    is_identifier: Callable[[str], bool] = c_like_identifier
    grammar: Grammar | None = None
    """None: symbols come from regular expressions only."""
    rules: LanguageRules | None = None
    imports: ImportStyle = ImportStyle.NONE
    blank_lines: BlankLines = BlankLines()
    definition_start: re.Pattern[str] | None = None
    """A line that starts a definition (with ``blank_lines.between_statements``: tells an inserted
    definition from a plain statement)."""
    leading_comment: str | None = None
    """A line comment that, right above a definition, describes it: it goes wherever the definition goes."""
    graph_sees_uses: bool = False
    """Whether the project graph resolves uses by name (a safe delete may then trust it without a server)."""
    one_name_definitions: bool = False
    """Whether same-named definitions of one scope are one binding (an ``@overload`` stack, a
    property's accessors, a function defined in both arms of an ``if``): acted on together."""
    symbol_moves: SymbolMoves = SymbolMoves.SERVER
    file_moves: FileMoves = FileMoves.SERVER
    identifier_token: re.Pattern[str] | None = None
    """An identifier as the syntax check's shortcut knows it: an edit that only swaps such tokens
    (none of them a keyword) cannot change whether a file parses. None: edited files are always parsed."""
    interpreter_parses: bool = False
    """Whether the syntax check asks the language's own parser (Python's ``compile``) instead of
    tree-sitter: tree-sitter recovers from what the interpreter rejects, such as an unexpected
    indent, and flags some lines it accepts."""


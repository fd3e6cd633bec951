"""Which language a file is in, decided by its name. A table, not a chain of ifs."""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class LanguageInfo:
    id: str
    """LSP languageId (``python``, ``typescriptreact``, ...)."""
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()


LANGUAGES: tuple[LanguageInfo, ...] = (
    LanguageInfo("python", (".py", ".pyi", ".pyw")),
    LanguageInfo("typescript", (".ts", ".mts", ".cts")),
    LanguageInfo("typescriptreact", (".tsx",)),
    LanguageInfo("javascript", (".js", ".mjs", ".cjs")),
    LanguageInfo("javascriptreact", (".jsx",)),
    LanguageInfo("go", (".go",)),
    LanguageInfo("rust", (".rs",)),
    LanguageInfo("c", (".c", ".h")),
    LanguageInfo("cpp", (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp")),
    LanguageInfo("java", (".java",)),
    # Languages without a bundled grammar: symbols come from regular expressions.
    LanguageInfo("ruby", (".rb", ".rake"), ("Rakefile", "Gemfile")),
    LanguageInfo("kotlin", (".kt", ".kts")),
    LanguageInfo("php", (".php",)),
    LanguageInfo("csharp", (".cs",)),
    LanguageInfo("swift", (".swift",)),
    LanguageInfo("scala", (".scala",)),
    LanguageInfo("lua", (".lua",)),
    LanguageInfo("shellscript", (".sh", ".bash")),
)

_BY_EXTENSION = {ext: info.id for info in LANGUAGES for ext in info.extensions}
_BY_FILENAME = {name: info.id for info in LANGUAGES for name in info.filenames}


@lru_cache(maxsize=1 << 16)
def language_of(path: str) -> str | None:
    """LSP languageId for a workspace path, or None when codegraft does not know the language.
    Plain string work (no pathlib), cached: whole-project passes ask it for every file."""
    name = path.rstrip("/").rpartition("/")[2]
    by_name = _BY_FILENAME.get(name)
    if by_name is not None:
        return by_name
    dot = name.rfind(".")
    if dot <= 0 or dot == len(name) - 1:
        return None  # no suffix, or a dot file such as .bashrc, as pathlib's suffix says
    return _BY_EXTENSION.get(name[dot:].lower())


_TYPESCRIPT_KEYWORDS = frozenset(
    "break case catch class const continue debugger default delete do else enum export extends false finally for"
    " function if import in instanceof new null return super switch this throw true try typeof var void while with"
    " let static yield await implements interface package private protected public".split()
)
KEYWORDS: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.kwlist),  # soft keywords (match, case, type) are valid names
    "typescript": _TYPESCRIPT_KEYWORDS,
    "typescriptreact": _TYPESCRIPT_KEYWORDS,
    "javascript": _TYPESCRIPT_KEYWORDS,
    "javascriptreact": _TYPESCRIPT_KEYWORDS,
    "go": frozenset(
        "break case chan const continue default defer else fallthrough for func go goto if import interface map"
        " package range return select struct switch type var".split()
    ),
    "rust": frozenset(
        "as break const continue crate else enum extern false fn for if impl in let loop match mod move mut pub ref"
        " return self Self static struct super trait true type unsafe use where while async await dyn".split()
    ),
}
"""Reserved words: never a valid new name."""

_TYPESCRIPT_CONTEXTUAL = frozenset(
    "abstract accessor any as asserts async declare from get global infer is keyof module namespace never of out"
    " override readonly require satisfies set type unique unknown".split()
)
CONTEXTUAL_KEYWORDS: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.softkwlist) | {"type"},  # `type X = ...` is 3.12's, whatever runs codegraft
    "typescript": _TYPESCRIPT_CONTEXTUAL,
    "typescriptreact": _TYPESCRIPT_CONTEXTUAL,
    "javascript": _TYPESCRIPT_CONTEXTUAL,
    "javascriptreact": _TYPESCRIPT_CONTEXTUAL,
    "go": frozenset(),
    "rust": frozenset({"union", "macro_rules", "raw", "safe"}),
}
"""Words that are names in most places and keywords in some: valid names, but swapping
one in or out can change how a line parses."""

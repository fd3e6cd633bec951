"""Which language a file is in, decided by its name. A table, not a chain of ifs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath


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


def language_of(path: str) -> str | None:
    """LSP languageId for a workspace path, or None when codegraft does not know the language."""
    pure = PurePosixPath(path)
    by_name = _BY_FILENAME.get(pure.name)
    if by_name is not None:
        return by_name
    return _BY_EXTENSION.get(pure.suffix.lower())

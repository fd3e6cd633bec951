"""Which language a file is in, and that language's profile (engine/languages/profile.py).

Every module of this package other than ``profile`` and ``spec`` contributes a ``PROFILES``
tuple, so a language is added by adding one module: its profile, and its tree-sitter rules
when a grammar wheel exists.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from engine.languages.profile import BlankLines, FileMoves, Grammar, ImportStyle, Language, SymbolMoves

__all__ = ["LANGUAGES", "BlankLines", "FileMoves", "Grammar", "ImportStyle", "Language", "SymbolMoves", "language_of", "profile", "profile_of"]

_NOT_PROFILES = frozenset({"profile", "spec", "go_builds"})
"""Modules here that define no language: the profiles' types, and rules they share (Go's build constraints)."""


def _discover() -> tuple[Language, ...]:
    found: list[Language] = []
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name in _NOT_PROFILES:
            continue
        profiles = getattr(importlib.import_module(f"{__name__}.{module.name}"), "PROFILES", None)
        if not isinstance(profiles, tuple) or not all(isinstance(p, Language) for p in profiles):
            raise TypeError(f"engine/languages/{module.name}.py must define PROFILES, a tuple of Language")
        found += profiles
    ids = [p.id for p in found]
    if len(ids) != len(set(ids)):
        raise TypeError(f"a language is defined twice: {sorted(i for i in ids if ids.count(i) > 1)}")
    return tuple(found)


LANGUAGES: tuple[Language, ...] = _discover()
_BY_ID = {language.id: language for language in LANGUAGES}
_BY_EXTENSION = {ext: language for language in LANGUAGES for ext in language.extensions}
_BY_FILENAME = {name: language for language in LANGUAGES for name in language.filenames}


@lru_cache(maxsize=1 << 16)
def profile_of(path: str) -> Language | None:
    """The profile of a workspace path's language, or None when codegraft does not know it.
    Plain string work (no pathlib), cached: whole-project passes ask it for every file."""
    name = path.rstrip("/").rpartition("/")[2]
    by_name = _BY_FILENAME.get(name)
    if by_name is not None:
        return by_name
    dot = name.rfind(".")
    if dot <= 0 or dot == len(name) - 1:
        return None  # no suffix, or a dot file such as .bashrc, as pathlib's suffix says
    return _BY_EXTENSION.get(name[dot:].lower())


def language_of(path: str) -> str | None:
    """LSP languageId for a workspace path, or None."""
    found = profile_of(path)
    return found.id if found is not None else None


def profile(language_id: str | None) -> Language | None:
    """The profile of a languageId (as a server or a SourceFile names it), or None."""
    return _BY_ID.get(language_id) if language_id is not None else None

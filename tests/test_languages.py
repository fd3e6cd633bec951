"""Language profiles (engine/languages/): one record per language, found by discovery, so a
language is added by one module of that package."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import engine.languages as languages
from engine.extract.treesitter import load_grammar
from engine.languages import LANGUAGES, FileMoves, ImportStyle, SymbolMoves, language_of, profile, profile_of

TINY = {"python": b"def f():\n    return 1\n", "csharp": b"class A { void M() {} }\n", "go": b"package a\nfunc F() {}\n"}


@pytest.mark.parametrize("language", [p for p in LANGUAGES if p.grammar is not None], ids=lambda p: p.id)
def test_every_grammar_loads_and_has_rules(language: languages.Language) -> None:
    assert language.rules is not None
    shared = profile(language.rules.language_id)  # JSX shares JavaScript's rules
    assert shared is not None and shared.family == language.family
    assert language.grammar is not None
    tree = __import__("tree_sitter").Parser(load_grammar(language.grammar)).parse(TINY.get(language.id, b""))
    assert not tree.root_node.has_error


def test_extensions_name_one_language_each_and_lookups_agree() -> None:
    extensions = [ext for p in LANGUAGES for ext in p.extensions]
    assert len(extensions) == len(set(extensions))
    for language in LANGUAGES:
        for ext in language.extensions:
            assert language_of(f"pkg/file{ext}") == language.id and profile_of(f"pkg/file{ext}") is language
    assert language_of("Makefile") is None and profile("no-such-language") is None


def test_typescript_and_javascript_are_one_family() -> None:
    family = {p.id for p in LANGUAGES if p.family == "typescript"}
    assert family == {"typescript", "typescriptreact", "javascript", "javascriptreact"}
    assert {p.imports for p in LANGUAGES if p.family == "typescript"} == {ImportStyle.ES_MODULES}


def test_capabilities_are_what_the_refactorings_rely_on() -> None:
    python, go, csharp = profile("python"), profile("go"), profile("csharp")
    assert python is not None and go is not None and csharp is not None
    assert python.graph_sees_uses and python.one_name_definitions and python.symbol_moves is SymbolMoves.PYTHON
    assert go.symbol_moves is SymbolMoves.SAME_PACKAGE and go.file_moves is FileMoves.SAME_FOLDER_FREE
    assert not csharp.graph_sees_uses and csharp.symbol_moves is SymbolMoves.SERVER
    assert python.is_identifier("naïve") and not python.is_identifier("$x")
    assert not go.is_identifier("a-b") and not go.is_identifier("9x")
    assert "class" in python.keywords and "match" in python.contextual_keywords


def test_a_new_profile_module_is_discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What adding a language takes: one module with PROFILES in the package's folder."""
    (tmp_path / "zzlang.py").write_text(
        "from engine.languages.profile import Language\n"
        "PROFILES = (Language('zz', 'zz', ('.zz',)),)\n"
    )
    monkeypatch.setattr(languages, "__path__", [*languages.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "engine.languages.zzlang", raising=False)
    found = {p.id: p for p in languages._discover()}
    assert found["zz"].extensions == (".zz",) and set(found) == {p.id for p in LANGUAGES} | {"zz"}
    sys.modules.pop("engine.languages.zzlang", None)
    importlib.invalidate_caches()


def test_a_module_without_profiles_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "zzbroken.py").write_text("PROFILES = ['not a profile']\n")
    monkeypatch.setattr(languages, "__path__", [*languages.__path__, str(tmp_path)])
    with pytest.raises(TypeError, match="zzbroken.py must define PROFILES"):
        languages._discover()
    sys.modules.pop("engine.languages.zzbroken", None)

"""Per-language tree-sitter rule tables, and where each grammar comes from."""

from __future__ import annotations

from engine.extract.rules.clike import C_RULES, CPP_RULES
from engine.extract.rules.go import GO_RULES
from engine.extract.rules.java import JAVA_RULES
from engine.extract.rules.python import PYTHON_RULES
from engine.extract.rules.rust import RUST_RULES
from engine.extract.rules.typescript import JAVASCRIPT_RULES, TSX_RULES, TYPESCRIPT_RULES
from engine.extract.spec import LanguageRules

RULES: dict[str, LanguageRules] = {
    "python": PYTHON_RULES,
    "typescript": TYPESCRIPT_RULES,
    "typescriptreact": TSX_RULES,
    "javascript": JAVASCRIPT_RULES,
    "javascriptreact": JAVASCRIPT_RULES,
    "go": GO_RULES,
    "rust": RUST_RULES,
    "c": C_RULES,
    "cpp": CPP_RULES,
    "java": JAVA_RULES,
}

#: languageId → (grammar wheel module, function returning the language pointer).
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "typescriptreact": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
    "javascriptreact": ("tree_sitter_javascript", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "java": ("tree_sitter_java", "language"),
}

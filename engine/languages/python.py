"""Python: functions, classes, methods, module variables and constants, class fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

import keyword
import re


from engine.languages.spec import Definition, LanguageRules, Where, body_field, name_field
from engine.languages.profile import ASCII_IDENTIFIER, BlankLines, FileMoves, Grammar, ImportStyle, Language, SymbolMoves
from engine.symbols import SymbolKind

if TYPE_CHECKING:  # annotations only: the profiles are read by the thin CLI client, which loads no grammar
    from tree_sitter import Node


def _assigned_names(node: Node) -> list[tuple[tuple[str, ...], Node]]:
    """Names bound by ``x = ...``, ``x: T = ...``, ``a, b = ...`` and ``x = y = ...`` statements."""
    assignment = node.named_children[0] if node.named_child_count == 1 else None
    found: list[tuple[tuple[str, ...], Node]] = []
    while assignment is not None and assignment.type == "assignment":
        left = assignment.child_by_field_name("left")
        if left is not None:
            if left.type == "identifier":
                found.append(((), left))
            elif left.type in ("pattern_list", "tuple_pattern"):
                found.extend(((), item) for item in left.named_children if item.type == "identifier")
        assignment = assignment.child_by_field_name("right")
    return found


def _variable_kind(node: Node, name: Node, kind: SymbolKind, parent: SymbolKind | None) -> SymbolKind:
    if parent is not None and parent is not SymbolKind.MODULE:
        return SymbolKind.FIELD
    text = (name.text or b"").decode()
    if text.isupper() and any(ch.isalpha() for ch in text):
        return SymbolKind.CONSTANT
    return kind


def _docstring(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is None or body.named_child_count == 0:
        return None
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_child_count == 1 and first.named_children[0].type == "string":
        return first
    return None


PYTHON_RULES = LanguageRules(
    language_id="python",
    definitions={
        "function_definition": Definition(
            SymbolKind.FUNCTION, name_field(), body_field(), in_type=SymbolKind.METHOD, body_is_code=True
        ),
        "class_definition": Definition(SymbolKind.CLASS, name_field(), body_field()),
        "expression_statement": Definition(
            SymbolKind.VARIABLE, _assigned_names, where=Where.DECLARATIONS, refine=_variable_kind
        ),
    },
    wrappers={"decorated_definition": "definition"},
    descend=frozenset(
        {
            "block", "if_statement", "elif_clause", "else_clause", "for_statement", "while_statement",
            "try_statement", "except_clause", "except_group_clause", "finally_clause", "with_statement",
            "match_statement", "case_clause",
        }
    ),
    doc_comment_types=frozenset(),
    docstring=_docstring,
    constructor_names=frozenset({"__init__"}),
)


PROFILES = (
    Language(
        "python", "python", (".py", ".pyi", ".pyw"),
        keywords=frozenset(keyword.kwlist),  # soft keywords (match, case, type) are valid names
        contextual_keywords=frozenset(keyword.softkwlist) | {"type"},  # `type X = ...` is 3.12's, whatever runs codegraft
        is_identifier=str.isidentifier, identifier_token=ASCII_IDENTIFIER, grammar=Grammar("tree_sitter_python"), rules=PYTHON_RULES,
        imports=ImportStyle.PYTHON, blank_lines=BlankLines(top_level=2, nested=1, between_statements=0),  # PEP 8
        definition_start=re.compile(r"^\s*(@|def |async def |class )"), leading_comment="#",
        graph_sees_uses=True, one_name_definitions=True,
        symbol_moves=SymbolMoves.PYTHON, file_moves=FileMoves.PYTHON, interpreter_parses=True,
    ),
)

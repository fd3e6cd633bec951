"""Where a file declares interfaces and type aliases, at any depth: a module's statements, a
namespace's (``namespace N { interface I {…} }``, which tree-sitter puts inside an expression
statement), a ``declare module``'s or ``declare global``'s, a function's, an arrow function's or a
method's body, any block.

Walking a whole tree for them would visit every node of the file (most of them inside
expressions), so the declarations are found from their keywords instead: each ``interface`` or
``type`` that stands as a word before a name is looked up in the tree (the node there, and whether
it begins a declaration), and the places are kept by the file's path and content, so a file is
scanned again only once it changed.
"""

from __future__ import annotations

from tree_sitter import Node

from engine.refactor.kept_by_content import KeptByContent

DECLARATIONS = frozenset({"interface_declaration", "type_alias_declaration"})
_KEYWORDS = (b"interface", b"type")
_SPACE = frozenset(b" \t\r\n")
_PART_OF_A_NAME = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.")
_STARTS: KeptByContent[tuple[tuple[int, int], ...]] = KeptByContent(4096)
"""Each file's declaration keywords (start and end byte), by path and content."""


def declarations(root: Node, text: bytes, key: tuple[str, str] | None = None) -> list[Node]:
    """The interface and type alias declarations under ``root`` (the tree of ``text``), in the
    order of the file; ``key`` ((path, sha256)) keeps where they are for that content."""
    starts = _STARTS.get(key, lambda: _keyword_places(root, text)) if key is not None else _keyword_places(root, text)
    found = []
    for start, end in starts:
        keyword = root.descendant_for_byte_range(start, end)
        declaration = keyword.parent if keyword is not None else None
        if declaration is not None and declaration.type in DECLARATIONS:
            found.append(declaration)
    return found


def _keyword_places(root: Node, text: bytes) -> tuple[tuple[int, int], ...]:
    """Each keyword that begins a declaration: a word ``interface`` or ``type`` followed by space,
    whose node in the tree is the first token of an interface or type alias declaration (not a word
    in a comment, a string, a property or ``import type``)."""
    places = []
    for word in _KEYWORDS:
        start = text.find(word)
        while start >= 0:
            end = start + len(word)
            if end < len(text) and text[end] in _SPACE and (start == 0 or text[start - 1] not in _PART_OF_A_NAME):
                keyword = root.descendant_for_byte_range(start, end)
                declaration = keyword.parent if keyword is not None else None
                if declaration is not None and declaration.type in DECLARATIONS and declaration.start_byte == start:
                    places.append((start, end))
            start = text.find(word, end)
    return tuple(sorted(places))

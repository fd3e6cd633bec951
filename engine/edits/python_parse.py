"""Python's own parse of a file's bytes, shared by an apply's check scope and its syntax check.

Both read the text an edit would write: the scope (engine.edits.check_scope) for its top-level
statements, the syntax check (engine.edits.syntax) for whether it parses. The parse is one
``compile(..., ast.PyCF_ONLY_AST)`` of the bytes, as the interpreter would read the file, kept for
the last few contents so that the second asker does not parse the same bytes again.
"""

from __future__ import annotations

import ast
import re
import threading
from collections import OrderedDict
from typing import cast

_KEPT_CONTENTS = 4
"""An apply's before and after, and the next apply's: more is memory for nothing."""
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)
"""A line declaring the source's encoding (PEP 263), looked for in the first two lines."""

_parsed: OrderedDict[bytes, ast.Module | SyntaxError | ValueError] = OrderedDict()
_lock = threading.Lock()


def python_module(data: bytes, path: str) -> ast.Module | SyntaxError | ValueError:
    """The module ``data`` (a UTF-8 byte order mark left out) parses to, or the error Python's
    parser raises (ValueError: a NUL byte). ``path`` only words the error; an error kept for the
    same bytes asked under another path names the first."""
    text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    with _lock:
        kept = _parsed.get(text)
        if kept is not None:
            _parsed.move_to_end(text)
            return kept
    found: ast.Module | SyntaxError | ValueError
    try:
        found = cast(ast.Module, compile(text, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True))
    except (SyntaxError, ValueError) as error:
        found = error
    with _lock:
        _parsed[text] = found
        while len(_parsed) > _KEPT_CONTENTS:
            _parsed.popitem(last=False)
    return found


def declares_encoding(data: bytes) -> bool:
    """Whether the first two lines declare the source's encoding: then Python decodes the bytes
    by it, not as UTF-8, and a parse of the UTF-8 text may differ from the interpreter's."""
    return _COOKIE.search(b"\n".join(data.split(b"\n", 2)[:2])) is not None

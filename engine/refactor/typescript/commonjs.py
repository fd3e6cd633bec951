"""CommonJS modules, which tsserver's "Move to file" does not write correctly.

Given a CommonJS source or destination (``module.exports = {...}``, ``exports.x = ...``,
``require(...)``), tsserver's move exports the moved code with ``exports.name = name`` and
imports it with a destructured ``require``: appended after a ``module.exports = {...}``
assignment those exports are lost (the object replaced ``exports``), the helpers the moved
code uses are exported from the source and required back into the destination (a require
cycle, and a second declaration when the destination has its own), and every test goes red
(qs 6.14.0, benchmarks/real_projects_ts.toml). Such a move is refused before the server is
asked; ES modules and TypeScript files are unaffected.
"""

from __future__ import annotations

import re

_COMMENT_OR_STRING = re.compile(r"//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`", re.S)
_COMMONJS = re.compile(r"(?<![\w$.])(?:module\s*\.\s*exports|exports\s*\.\s*[\w$]+\s*=|require\s*\()")
_SCRIPT_SUFFIXES = (".js", ".cjs", ".jsx")


def is_commonjs(path: str, text: str) -> bool:
    """Whether a JavaScript file exports or imports the CommonJS way (in code, not in comments
    or strings). ``.mjs`` files and TypeScript files are ES modules here."""
    if not path.endswith(_SCRIPT_SUFFIXES):
        return False
    code = _COMMENT_OR_STRING.sub(lambda match: "''" if match.group().startswith(("'", '"', "`")) else " ", text)
    return _COMMONJS.search(code) is not None


def commonjs_move_problem(source: tuple[str, str], dest: tuple[str, str | None]) -> str | None:
    """Why a move between these files (path, text; the destination's text None when it is new)
    cannot be left to tsserver, or None when it can."""
    found = [path for path, text in (source, dest) if text is not None and is_commonjs(path, text)]
    if not found:
        return None
    return (f"{' and '.join(found)} {'is a CommonJS module' if len(found) == 1 else 'are CommonJS modules'}: "
            "the server's move writes `exports.name = ...` and destructured requires, which a `module.exports = {...}` "
            "assignment discards and which can make a require cycle; nothing was changed. Move the code by hand, "
            "or convert the files to ES modules first")

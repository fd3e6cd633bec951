"""Every place a Python name is read in code, by name alone: the safety net of a safe delete.

The project graph records calls, imports and bases, not every read (a decorator, a default
argument, a name passed along). Without a language server, a safe delete must not trust it
alone: any code token spelling the name outside the symbol counts as a possible use.
Strings and comments do not count; definitions of other symbols with the same name and
keyword arguments (``name=``) do not either. Homonyms make this refuse more than it must,
never less.
"""

from __future__ import annotations

import io
import tokenize

from engine.refactor.corpus import Corpus


def name_uses(corpus: Corpus, name: str, own_file: str, own_lines: range) -> list[tuple[str, int]]:
    """(path, 1-based line) of every code token ``name`` outside ``own_lines`` (0-based) of ``own_file``."""
    found = []
    for path in corpus.mentioning(name, "python"):
        data = corpus.bytes_of(path)
        if data is None:
            continue
        try:
            tokens = list(tokenize.tokenize(io.BytesIO(data).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            continue
        for index, token in enumerate(tokens):
            if token.type != tokenize.NAME or token.string != name:
                continue
            line = token.start[0]
            if path == own_file and (line - 1) in own_lines:
                continue
            before = tokens[index - 1].string if index else ""
            after = tokens[index + 1].string if index + 1 < len(tokens) else ""
            if before in ("def", "class") or (after == "=" and before in ("(", ",")):
                continue
            found.append((path, line))
    return found

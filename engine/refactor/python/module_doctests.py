"""Doctest examples that import a renamed module (``>>> from boltons import ioutils`` then
``>>> ioutils.SpooledBytesIO()`` in the module's own docstrings): code inside strings, which the
import rewriter does not parse. boltons' suite ran them and failed after a rename-file.

Rewritten on example lines only (``>>> `` and ``... ``): ``import old``, ``from old[.sub] import``,
``from package import last [as x]``, and, after such an unaliased import in the same file,
``last.attribute``; dotted ``old.x`` anywhere on those lines.
"""

from __future__ import annotations

import re

_EXAMPLE = re.compile(r"^(\s*(?:>>>|\.\.\.) )(.*)$")


def rewrite_doctest_imports(text: str, old: str, new: str) -> str:
    """``text`` with its doctest examples' uses of module ``old`` pointed at ``new``."""
    old_package, _, old_last = old.rpartition(".")
    new_package, _, new_last = new.rpartition(".")
    if old_last not in text:
        return text
    dotted = re.compile(rf"(?<![\w.]){re.escape(old)}(?![\w])")
    taken = re.compile(rf"^(\s*from\s+){re.escape(old_package)}(\s+import\s+.*?)(?<![\w.]){re.escape(old_last)}(?![\w])")
    bare = re.compile(rf"(?<![\w.]){re.escape(old_last)}\.")
    imported_bare = False
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        example = _EXAMPLE.match(line.rstrip("\r\n"))
        if example is None:
            continue
        prompt, code = example.groups()
        ending = line[len(line.rstrip("\r\n")):]
        rewritten = dotted.sub(new, code)
        if old_package and old_package == new_package:
            match = taken.match(rewritten)
            if match is not None:
                rewritten = taken.sub(lambda m: f"{m.group(1)}{old_package}{m.group(2)}{new_last}", rewritten)
                imported_bare = imported_bare or not re.search(rf"{re.escape(new_last)}\s+as\s+\w", rewritten)
            elif imported_bare:
                rewritten = bare.sub(f"{new_last}.", rewritten)
        if rewritten != code:
            lines[index] = prompt + rewritten + ending
    return "".join(lines)

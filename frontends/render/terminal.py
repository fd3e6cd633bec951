"""Human output made safe for a terminal.

A file name is the workspace's to choose, and may hold escape sequences (``\\x1b[2J`` clears
the screen, ``\\x1b]0;…\\x07`` sets the window title, others rewrite what was printed before).
Every human answer names files (diff headers, listings, warnings), so the CLI passes every
text it prints through :func:`printable`: C0 controls other than tab and newline, DEL and the
C1 controls are shown as ``\\xNN``. JSON needs none of this: its own escaping applies.

Standard library only, and not even ``re``: the thin client prints with it too.
"""

from __future__ import annotations

_ESCAPED = {code: f"\\x{code:02x}" for code in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}


class Painted(str):
    """Text already made printable whose colours (escape sequences of codegraft's own) are meant."""


def printable(text: str) -> str:
    """``text`` with every control character but tab and newline shown as ``\\xNN``."""
    if isinstance(text, Painted):
        return text
    return text.translate(_ESCAPED)

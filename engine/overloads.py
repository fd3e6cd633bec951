"""Overload sets: same-named siblings that are signatures of one implementation.

A Python ``@typing.overload`` stack, or TypeScript overload signatures, declare one callable
several times; only the last definition (the implementation) has a body that runs. An address
without ``[n]`` that names such a set means the implementation, so reading, references,
definition and impact answer for it and list the signatures beside it. A set without an
implementation (a ``.pyi`` stub file, an ambient ``declare``) has nothing to prefer, so it stays
ambiguous and ``name[n]`` picks one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.positions import split_lines
from engine.symbols import Symbol

_OVERLOAD_DECORATOR = re.compile(r"^\s*@\s*(?:[\w.]+\.)?overload\b")
_TYPESCRIPT_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


@dataclass(frozen=True)
class OverloadSet:
    implementation: Symbol
    signatures: list[Symbol]
    """The overload stubs, in source order (each addressed alone by its ``name[n]``)."""

    def note(self, asked: str) -> str:
        listed = "; ".join(f"{stub.address} ({signature_text(stub)})" for stub in self.signatures)
        return (f"{asked} is an overload set: answered for its implementation {self.implementation.address}; "
                f"{len(self.signatures)} overload signature(s): {listed}")


def overload_set(matches: list[Symbol], text: str) -> OverloadSet | None:
    """The overload set ``matches`` form (siblings of one scope in one file, whose text is
    ``text``), or None: when they are not siblings, when none or more than one has a body (a
    stub file, a property's getter and setter, a function defined in both arms of an ``if``)."""
    if len(matches) < 2:
        return None
    first = matches[0]
    if any(m.file != first.file or m.name != first.name or m.path[:-1] != first.path[:-1] for m in matches):
        return None
    lines = split_lines(text)
    stubs = [m for m in matches if _is_signature(m, lines)]
    bodies = [m for m in matches if m not in stubs]
    if len(bodies) != 1 or not stubs:
        return None
    return OverloadSet(bodies[0], sorted(stubs, key=lambda s: s.range.start))


def signature_text(symbol: Symbol) -> str:
    return symbol.signature or symbol.name


def _is_signature(symbol: Symbol, lines: list[str]) -> bool:
    if symbol.file.endswith(".py") or symbol.file.endswith(".pyi"):
        decorators = lines[symbol.range.start.line:symbol.selection_range.start.line]
        return any(_OVERLOAD_DECORATOR.match(line) for line in decorators)
    if symbol.file.endswith(_TYPESCRIPT_SUFFIXES):
        # An overload signature ends at its ';' (or line end); an implementation ends with its body's '}'.
        last = lines[symbol.range.last_line - 1] if symbol.range.last_line - 1 < len(lines) else ""
        end = symbol.range.end.column if symbol.range.end.line == symbol.range.last_line - 1 else len(last)
        return not last[:end].rstrip().rstrip(";").rstrip().endswith("}")
    return False

"""The symbol model shared by every source (language server, syntax tree, regex)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Iterator

from engine.positions import Range


class SymbolKind(IntEnum):
    """LSP's SymbolKind vocabulary, with LSP's numeric values."""

    FILE = 1
    MODULE = 2
    NAMESPACE = 3
    PACKAGE = 4
    CLASS = 5
    METHOD = 6
    PROPERTY = 7
    FIELD = 8
    CONSTRUCTOR = 9
    ENUM = 10
    INTERFACE = 11
    FUNCTION = 12
    VARIABLE = 13
    CONSTANT = 14
    STRING = 15
    NUMBER = 16
    BOOLEAN = 17
    ARRAY = 18
    OBJECT = 19
    KEY = 20
    NULL = 21
    ENUM_MEMBER = 22
    STRUCT = 23
    EVENT = 24
    OPERATOR = 25
    TYPE_PARAMETER = 26

    @property
    def label(self) -> str:
        """Lower-case name used in CLI output and JSON (``enum_member``)."""
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> "SymbolKind":
        try:
            return cls[label.strip().upper().replace("-", "_")]
        except KeyError:
            known = ", ".join(k.label for k in cls)
            raise ValueError(f"unknown symbol kind {label!r}; known kinds: {known}") from None


#: Kinds that can hold methods and fields; used to attach out-of-line methods.
TYPE_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.ENUM}
)


class Source(str, Enum):
    """Where a symbol came from, best first."""

    LSP = "lsp"
    AST = "ast"
    REGEX = "regex"
    TEXT = "text"
    """No symbol facts at all: a plain file edit (never a symbol's source)."""


class Confidence(str, Enum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


@dataclass(frozen=True)
class Segment:
    """One step of a name path: a name and, among same-named siblings, its 0-based index."""

    name: str
    index: int | None = None

    def __str__(self) -> str:
        return self.name if self.index is None else f"{self.name}[{self.index}]"


@dataclass(eq=False)
class Symbol:
    """A definition in a file.

    ``range`` covers the whole definition including decorators, attributes
    and annotations; ``selection_range`` covers the identifier. ``path`` is
    filled in by :func:`engine.extract.finalize` once all siblings are known,
    because an overload index depends on them. ``scope`` names a logical
    parent that is not a physical one (a Go method's receiver type declared
    in another file, a C++ ``Foo::bar`` defined out of line).
    """

    name: str
    kind: SymbolKind
    file: str
    range: Range
    selection_range: Range
    source: Source
    confidence: Confidence
    signature: str = ""
    doc_range: Range | None = None
    children: list["Symbol"] = field(default_factory=list)
    scope: tuple[str, ...] = ()
    path: tuple[Segment, ...] = ()
    needs_anchor: bool = False
    """True when a deeper symbol's path ends with this one's (a Java class ``Ledger`` and its
    constructor ``Ledger/Ledger``), so that only ``/Ledger`` names this one alone."""

    @property
    def name_path(self) -> str:
        return "/".join(str(segment) for segment in self.path) or self.name

    @property
    def address(self) -> str:
        """A ready-to-paste address that resolves to exactly this symbol."""
        return f"{self.file}:{'/' if self.needs_anchor else ''}{self.name_path}"

    def walk(self) -> Iterator["Symbol"]:
        """This symbol and all its descendants, in source order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def to_json(self, *, with_children: bool = True) -> dict[str, object]:
        data: dict[str, object] = {
            "name": self.name,
            "name_path": self.name_path,
            "address": self.address,
            "kind": self.kind.label,
            "kind_id": int(self.kind),
            "file": self.file,
            "line": self.range.first_line,
            "end_line": self.range.last_line,
            "column": self.range.start.column + 1,
            "selection": {
                "line": self.selection_range.first_line,
                "column": self.selection_range.start.column + 1,
                "end_column": self.selection_range.end.column + 1,
            },
            "doc": None
            if self.doc_range is None
            else {"line": self.doc_range.first_line, "end_line": self.doc_range.last_line},
            "signature": self.signature,
            "source": self.source.value,
            "confidence": self.confidence.value,
        }
        if with_children:
            data["children"] = [child.to_json() for child in self.children]
        return data


def walk_all(symbols: list[Symbol]) -> Iterator[Symbol]:
    for symbol in symbols:
        yield from symbol.walk()

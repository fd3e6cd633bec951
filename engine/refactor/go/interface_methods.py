"""Deleting a Go method that an interface may call through.

A Go type implements an interface by having its methods; nothing names the interface. A call
through the interface (``sort.Sort(v)`` calling ``v.Less``) is no reference to the concrete
method, so a method with no references may still be needed: deleting go-spew's
``valuesSorter.Less`` broke the build at ``sort.Sort``. A method whose name is a method of an
interface declared in the workspace, or of a standard library interface (``Less`` of
sort.Interface, ``String`` of fmt.Stringer, ...), is refused, with the interfaces named.
"""

from __future__ import annotations

import re

from engine.errors import Refused
from engine.refactor.corpus import Corpus

_NOT_CODE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`|'(?:\\.|[^'\\\n])*'", re.S)
_INTERFACE = re.compile(r"\btype\s+(\w+)\s+interface\s*\{(.*?)\}", re.S)
_METHOD_SPEC = re.compile(r"^\s*(\w+)\s*\(", re.M)
_METHOD_DECLARATION = re.compile(r"^func\s*\(")

STANDARD_INTERFACES: dict[str, tuple[str, ...]] = {
    "Len": ("sort.Interface", "heap.Interface"), "Less": ("sort.Interface", "heap.Interface"),
    "Swap": ("sort.Interface", "heap.Interface"), "Push": ("heap.Interface",), "Pop": ("heap.Interface",),
    "String": ("fmt.Stringer",), "GoString": ("fmt.GoStringer",), "Format": ("fmt.Formatter",),
    "Error": ("error",), "Unwrap": ("errors.Unwrap",), "Is": ("errors.Is",), "As": ("errors.As",),
    "Read": ("io.Reader",), "Write": ("io.Writer",), "Close": ("io.Closer",), "Seek": ("io.Seeker",),
    "ReadFrom": ("io.ReaderFrom",), "WriteTo": ("io.WriterTo",), "WriteString": ("io.StringWriter",),
    "ReadByte": ("io.ByteReader",), "WriteByte": ("io.ByteWriter",), "ReadRune": ("io.RuneReader",),
    "ServeHTTP": ("http.Handler",), "MarshalJSON": ("json.Marshaler",), "UnmarshalJSON": ("json.Unmarshaler",),
    "MarshalText": ("encoding.TextMarshaler",), "UnmarshalText": ("encoding.TextUnmarshaler",),
    "MarshalBinary": ("encoding.BinaryMarshaler",), "UnmarshalBinary": ("encoding.BinaryUnmarshaler",),
    "Scan": ("sql.Scanner",), "Value": ("driver.Valuer",), "Sum": ("hash.Hash",), "Sum64": ("hash.Hash64",),
    "Reset": ("hash.Hash",), "Size": ("hash.Hash",), "BlockSize": ("hash.Hash",), "Set": ("flag.Value",),
    "Get": ("flag.Getter",), "LogValue": ("slog.LogValuer",), "Deadline": ("context.Context",),
    "Done": ("context.Context",), "Err": ("context.Context",),
}
"""Methods of the standard library's interfaces that a type commonly meets without naming them."""


class MayImplementInterface(Refused):
    """The Go method's name is a method of an interface: calls through it are not references."""

    code = "may_implement_interface"


def is_method(text: str, line: int) -> bool:
    """Whether the declaration starting on 0-based ``line`` is a method (a function with a receiver)."""
    lines = text.split("\n")
    return line < len(lines) and _METHOD_DECLARATION.match(lines[line]) is not None


def refuse_if_an_interface_may_call(corpus: Corpus, address: str, name: str) -> None:
    interfaces = list(STANDARD_INTERFACES.get(name, ()))
    for path in corpus.mentioning(name, "go"):
        code = _NOT_CODE.sub(" ", corpus.source(path).text)
        interfaces += [f"{interface.group(1)} ({path})" for interface in _INTERFACE.finditer(code)
                       if name in {m.group(1) for m in _METHOD_SPEC.finditer(interface.group(2))}]
    if interfaces:
        raise MayImplementInterface(
            f"{address} is refused: {name} is a method of {', '.join(interfaces[:5])}"
            f"{' …' if len(interfaces) > 5 else ''}, and a call through an interface is no reference to it, so the type "
            f"may need it to implement one (sort.Sort calls Less). Nothing was deleted; if no interface needs it, delete "
            f"it by hand and build")

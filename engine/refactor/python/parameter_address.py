"""A Python parameter addressed by name path: ``file.py:func/param`` or ``Class/method/param``.

Parameters are not symbols of the outline, so such an address names nothing there; when its
parent names a function or method, the address is the parameter's declaration position, and
the rename by position (the parameter's own path: keyword call sites, overload signatures)
runs from it. A function without that parameter is refused with the parameters it has.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import NoSuchParameter, SymbolNotFound
from engine.languages import language_of
from engine.names import NamePath, SymbolAddress
from engine.positions import Position, split_lines
from engine.symbols import Symbol, SymbolKind

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_FUNCTIONS = (SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR)


@dataclass(frozen=True)
class ParameterPosition:
    file: str
    position: Position
    """0-based line, code-point column of the parameter's name in the ``def``."""


def parameter_position(context: PlanContext, address: SymbolAddress) -> ParameterPosition | None:
    """Where the parameter an address names is declared; None when the address names a symbol
    (or is not a Python ``func/param`` path), so the caller resolves it as usual."""
    segments = address.name_path.segments
    if len(segments) < 2 or segments[-1].index is not None:
        return None
    try:
        context.resolve_binding(address)
        return None  # a symbol of that name path: it wins over a parameter
    except SymbolNotFound as missing:
        not_a_symbol = missing
    parent = SymbolAddress(address.file, NamePath(segments[:-1], address.name_path.anchored))
    try:
        family = context.resolve_binding(parent)
    except SymbolNotFound:
        raise not_a_symbol from None
    function = family[-1]  # an overload stack's implementation: its parameters are the ones bodies use
    if function.kind not in _FUNCTIONS or language_of(function.file) != "python":
        raise not_a_symbol
    name = segments[-1].name
    parameters = _parameters(context.workspace.read(function.file).text, function)
    if name not in parameters:
        listed = ", ".join(parameters) or "none"
        raise NoSuchParameter(
            f"{function.address} has no parameter {name!r}; its parameters: {listed}",
            [f"{function.address}/{other}" for other in parameters],
        )
    return ParameterPosition(function.file, parameters[name])


def _parameters(text: str, function: Symbol) -> dict[str, Position]:
    """The function's parameters in order, each at its name (code-point columns, as addresses count)."""
    def_line = function.selection_range.start.line + 1
    tree = ast.parse(text)
    lines = split_lines(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno == def_line and node.name == function.name:
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *([arguments.vararg] if arguments.vararg else []),
                     *arguments.kwonlyargs, *([arguments.kwarg] if arguments.kwarg else [])]
            # ast counts columns in UTF-8 bytes.
            return {arg.arg: Position(arg.lineno - 1, len(lines[arg.lineno - 1].encode("utf-8")[:arg.col_offset].decode("utf-8")))
                    for arg in every}
    return {}

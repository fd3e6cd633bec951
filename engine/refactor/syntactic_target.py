"""The symbol a span-only operation (``insert-before``, ``insert-after``, ``replace``) acts on,
from the file's syntax tree when the tree settles it exactly, so that no language server starts.

Those operations need one thing: the lines of one declaration in one file. Under ``--source
auto`` the outline behind an address is the server's reconciled with the tree's, and for a
Python declaration its range is the tree's anyway (engine.extract.reconcile takes the longer of
the two, and the tree's includes the decorators). What the server adds to a Python outline are
more symbols: attributes bound through ``self.name = …``, which can make an address that the tree
finds once name two things. So the tree answers only when Python's own parser finds exactly one
binding of the name where the server could list one (the whole file for a bare name, since a
name path matches as a suffix; the parent's body otherwise), the file has no syntax errors, and
the address names a file (in Go, where gopls lists nothing the tree does not, the tree's one match,
unless a field the tree does not list may have the name; in TypeScript, JavaScript, C and C++, the
tree's one match when nothing else in the file declares the name). Otherwise the server is asked as before, and a name the tree finds
bound more than once says so in the plan's warnings. The symbol keeps its source, ``ast``, with
high confidence: the plan says where its facts came from.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Callable

from engine.errors import GraftError
from engine.extract.declarations import declared_names
from engine.languages import profile_of
from engine.names import Address, NamePath, SymbolAddress
from engine.resolve import match_name_path
from engine.symbols import Confidence, Symbol

if TYPE_CHECKING:
    from engine.extract import FileSymbols
    from engine.refactor.operations.base import PlanContext

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def span_target(context: PlanContext, address: Address) -> tuple[Symbol, list[str]]:
    """The one symbol ``address`` names, and the notes a plan should carry about how it was found."""
    if not context.use_server or context.require_server or not isinstance(address, SymbolAddress) or address.file is None:
        return context.resolve(address), []  # the preference already decides, or the address is workspace-wide
    try:
        source = context.workspace.read(address.file)
    except GraftError:
        return context.resolve(address), []  # its own refusal says why
    kind = profile_of(address.file)
    settle = _SETTLERS.get(kind.family) if kind is not None else None
    if settle is None:
        return context.resolve(address), []
    outline = context.extractor.extract(source)
    found, doubt = settle(outline, source.text, address.name_path)
    if found is not None:
        return found, []
    notes = [f"the syntax tree alone does not settle {address} ({doubt}): the language server was asked"] if doubt else []
    return context.resolve(address), notes


def _settled(outline: FileSymbols, text: str, name_path: NamePath) -> tuple[Symbol | None, str | None]:
    """The tree's one match, or None with why the tree cannot be trusted alone (None: nothing to
    say, as for a name the tree does not have, which the server may)."""
    if outline.confidence is not Confidence.HIGH:
        return None, "the file has syntax errors"
    matches = match_name_path([outline], name_path)
    if not matches:
        return None, None
    if len(matches) > 1:
        return None, f"{len(matches)} declarations match"
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, "Python's parser refuses the file"
    name = name_path.segments[-1].name
    lines = _region(outline, name_path)
    bindings = [line for line in _binding_lines(module, name) if lines is None or any(a <= line <= b for a, b in lines)]
    if len(bindings) != 1:
        return None, f"'{name}' is bound {len(bindings)} times where the server would list it"
    return matches[0], None


def _settled_go(outline: FileSymbols, text: str, name_path: NamePath) -> tuple[Symbol | None, str | None]:
    """Go: gopls's outline lists what the tree's rules list (package-level declarations, methods,
    fields, interface methods) and no locals, so the tree's one match is the server's, unless an
    embedded field (``struct{ T }``, which the tree does not list) or a field declared with others
    (``X, Y int``) has the name."""
    if outline.confidence is not Confidence.HIGH:
        return None, "the file has syntax errors"
    matches = match_name_path([outline], name_path)
    if len(matches) != 1:
        return None, f"{len(matches)} declarations match" if matches else None
    name = re.escape(name_path.segments[-1].name)
    unlisted = re.compile(rf"^\s*(?:\*?(?:\w+\.)?{name}\s*(?:$|//|`|\")|(?:\w+\s*,\s*)+{name}\b|{name}\s*,)", re.MULTILINE)
    if unlisted.search(text):
        return None, f"'{name_path.segments[-1].name}' may also be a field the tree does not list"
    return matches[0], None


def _settled_by_declarations(outline: FileSymbols, text: str, name_path: NamePath) -> tuple[Symbol | None, str | None]:
    """TypeScript and JavaScript, C and C++: the server's outline lists more than the tree's rules
    (tsserver: locals, object literals' members, parameter properties and imports; clangd: a
    prototype and its definition, an out-of-class member definition beside its declaration), so
    the tree's one match answers only when nothing else in the file declares the name at all."""
    if outline.confidence is not Confidence.HIGH:
        return None, "the file has syntax errors"
    matches = match_name_path([outline], name_path)
    if len(matches) != 1:
        return None, f"{len(matches)} declarations match" if matches else None
    if outline.language in _C_FAMILY and _is_macro(matches[0], text):
        return None, None  # clangd's outline lists no macros: the server's answer is its own
    name = name_path.segments[-1].name
    declared = declared_names(outline.language, text.encode("utf-8")).count(name)
    if declared != 1:
        return None, f"'{name}' is declared {declared} times in the file, where the server may list each"
    return matches[0], None


_C_FAMILY = frozenset({"c", "cpp"})


def _is_macro(symbol: Symbol, text: str) -> bool:
    lines = text.splitlines()
    return symbol.range.start.line < len(lines) and lines[symbol.range.start.line].lstrip().startswith("#")


_SETTLERS: dict[str, Callable[[FileSymbols, str, NamePath], tuple[Symbol | None, str | None]]] = {
    "python": _settled, "go": _settled_go, "typescript": _settled_by_declarations, "c": _settled_by_declarations,
}
"""Per language family, how the tree settles a target alone; a family without one asks the server."""


def _region(outline: FileSymbols, name_path: NamePath) -> list[tuple[int, int]] | None:
    """The 1-based line spans where a symbol of ``name_path`` can be declared: the bodies of every
    symbol its parent path names, or None (the whole file) for a one-segment path."""
    if len(name_path.segments) < 2:
        return None
    parent = NamePath(name_path.segments[:-1], name_path.anchored)
    return [(s.range.start.line + 1, s.range.last_line) for s in match_name_path([outline], parent)]


def _binding_lines(module: ast.Module, name: str) -> list[int]:
    """The lines where ``name`` is bound (defined, assigned, imported, caught, matched), attributes
    included (``self.name = …``): every place a server's outline might list a symbol of that name.
    Parameters are left out: no server outline lists them."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, _DEFINITIONS) and node.name == name:
            found.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            found.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == name and not isinstance(node.ctx, ast.Load):
            found.append(node.lineno)
        elif isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            found.append(getattr(node, "lineno", 0))
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name == name:
            found.append(node.lineno)
    return found

"""The names a class goes by where other classes extend it, and the server's word on an ``extends``.

A class below a renamed member's class may name its base another way than the base's own name:
``import { Base as B } from "./base"; class Sub extends B``, or through a barrel that re-exports it
under another name (``export { Base as Foundation } from "./base"``), or through a namespace
(``extends shapes.Base``), or as a default export imported under a name of its own
(``export default class Base``, ``export { Base as default }``, then ``import B from "./base"``),
or through a constant (``const B = Base``). :func:`names_of` finds those names by following
``Base as X`` and ``const X = Base`` in the files that spell the base's name, and a default export's
names in the files that import its file, then each ``X`` in turn. Name matching finds more than is
there (an unrelated class may have the same name, an importer takes another module's default too),
so each ``extends`` it finds is put to the server's definition request (:func:`extends_the_base`),
which resolves imports, aliases and barrels as the compiler does (a constant's definition is its
own declaration: the name it is set to is asked in turn): an ``extends`` the server resolves
elsewhere is not counted; where no server can say, the match stands (a refusal, never a silent miss).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Iterable

from tree_sitter import Node

from engine.answers import Location
from engine.errors import GraftError
from engine.positions import Position
from engine.refactor.kept_by_content import KeptByContent
from engine.refactor.typescript.clashes import ParsedFiles
from engine.workspace import SourceFile

if TYPE_CHECKING:
    from engine.refactor.operations.base import PlanContext

_ALIAS_ROUNDS = 4
"""How many times an alias may be renamed again (``Base as B``, then ``B as C``, …)."""
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})


def names_of(name: str, path: str, mentioning: Callable[[str], set[str]], parsed: ParsedFiles,
             importing: Callable[[list[str]], list[str]]) -> frozenset[str]:
    """``name`` (a class declared in ``path``) and every name it is imported, re-exported or kept as
    (``name as X``, ``const X = name``, a default export's name in each file importing it), as far as that goes."""
    names, new = {name}, {name}
    defaulted = {path} if (name, _DEFAULT) in _aliases(parsed, path) else set()
    for _round in range(_ALIAS_ROUNDS):
        found: set[str] = set()
        for alias_of in new:
            for there in sorted(mentioning(alias_of)):
                pairs = _aliases(parsed, there)
                found.update(alias for name_there, alias in pairs if name_there == alias_of)
                defaulted.update([there] if (alias_of, _DEFAULT) in pairs else [])
        found |= _default_names(defaulted, parsed, importing)
        new = found - names - {_DEFAULT}
        if not new:
            break
        names |= new
    return frozenset(names)


def _default_names(exporters: set[str], parsed: ParsedFiles, importing: Callable[[list[str]], list[str]]) -> set[str]:
    """The names the files importing ``exporters`` give a default export (``import B from``, ``{ default as B }``),
    through barrels that pass the default on (``export { default } from``)."""
    names: set[str] = set()
    seen, frontier = set(exporters), sorted(exporters)
    for _round in range(_ALIAS_ROUNDS):
        passing_on = []
        for importer in importing(frontier) if frontier else []:
            pairs = _aliases(parsed, importer)
            names.update(alias for name_there, alias in pairs if name_there == _DEFAULT and alias != _DEFAULT)
            if (_DEFAULT, _DEFAULT) in pairs and importer not in seen:
                passing_on.append(importer)
        seen.update(passing_on)
        frontier = passing_on
    return names


_DEFAULT = "default"
_AS = re.compile(r"\sas\s+([A-Za-z_$][\w$]*)")
"""`` as Y`` of ``X as Y``; it begins with a space, not with ``X`` behind a look-behind, which would be tried
at every offset of the file: ``X`` is read back from where it matched (:data:`_NAME_BEFORE`)."""
_NAME_BEFORE = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)\s*\Z")
_LONGEST_NAME = 200
"""How far back from `` as`` the name before it is looked for."""
_SET_TO = re.compile(r"=[ \t]*(?:[A-Za-z_$][\w$]*[ \t]*\.[ \t]*)*([A-Za-z_$][\w$]*)[ \t]*;?[ \t\r]*$", re.MULTILINE)
"""``= Base`` (``= ns.Base``) ending a line: what a constant that is the class by another name is set
to. It begins with ``=``, which the pattern finds by a literal search (one that begins with
``const`` or a word boundary tries every offset of the file)."""
_CONSTANT = re.compile(r"(?:^|[^\w$.])(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]*)?$", re.MULTILINE)
"""``const B``, before such an ``=`` on its line."""
_EXPORTED_DEFAULT = re.compile(r"export\s+default\s+(?:abstract\s+)?(?:class\s+)?([A-Za-z_$][\w$]*)")
"""``export default class Base``, ``export default Base``: the name exported as ``default``. This
pattern and the next begin with a literal (no ``\\b``), which is searched for rather than tried at
every offset; a pair found inside a longer word names nothing that is asked about."""
_IMPORTED_DEFAULT = re.compile(r"import\s+(?:type\s+)?([A-Za-z_$][\w$]*)\s*(?:,|from\b)")
"""``import B from``, ``import B, { … } from``: the name a default export is imported as."""
_PASSED_ON = re.compile(r"\bexport\s*\{\s*default\s*[,}]")
"""``export { default } from``: a barrel that passes another file's default export on as its own."""
_ALIASES: KeptByContent[list[tuple[str, str]]] = KeptByContent(4096)
"""Each file's ``(X, Y)`` pairs, by path and content: ``X as Y``, ``const Y = X``, ``export default X``
as ``(X, default)``, ``import Y from`` as ``(default, Y)`` and ``export { default } from`` as
``(default, default)``; looked up once for every class of a hierarchy."""


def _aliases(parsed: ParsedFiles, path: str) -> list[tuple[str, str]]:
    source = parsed.source(path)
    if source is None:
        return []
    return _ALIASES.get((path, source.sha256), lambda: _pairs(source.text))


def _constants(text: str) -> list[tuple[str, str]]:
    """``(Base, B)`` for each ``const B = Base`` of the text."""
    pairs = []
    for value in _SET_TO.finditer(text):
        constant = _CONSTANT.search(text, text.rfind("\n", 0, value.start()) + 1, value.start())
        if constant is not None:
            pairs.append((value.group(1), constant.group(1)))
    return pairs


def _pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for match in _AS.finditer(text) if "as" in text else ():
        before = _NAME_BEFORE.search(text, max(0, match.start() - _LONGEST_NAME), match.start() + 1)
        if before is not None:
            pairs.append((before.group(1), match.group(1)))
    if "=" in text:
        pairs += _constants(text)
    if _DEFAULT in text:
        pairs += [(match.group(1), _DEFAULT) for match in _EXPORTED_DEFAULT.finditer(text)]
        pairs += [(_DEFAULT, _DEFAULT)] if _PASSED_ON.search(text) else []
    if "import" in text:
        pairs += [(_DEFAULT, match.group(1)) for match in _IMPORTED_DEFAULT.finditer(text) if match.group(1) != "type"]
    return pairs


def extended_name(declaration: Node) -> Node | None:
    """The identifier a class's ``extends`` names (``Base``, the ``Base`` of ``ns.Base``, of
    ``Base<T>``); None when it extends no name (a call, no ``extends`` at all)."""
    heritage = next((child for child in declaration.named_children if child.type == "class_heritage"), None)
    extends = next((child for child in heritage.named_children if child.type == "extends_clause"), None) if heritage else None
    value = extends.child_by_field_name("value") if extends is not None else None
    if value is not None and value.type == "member_expression":
        value = value.child_by_field_name("property")
    return value if value is not None and value.type in ("identifier", "property_identifier") else None


def extends_the_base(context: PlanContext, parsed: ParsedFiles, sub_path: str, at: tuple[int, int],
                     base_path: str, base_name: str) -> bool:
    """Whether the server resolves the name at ``at`` (an ``extends``) to the class ``base_name``
    declared in ``base_path``; True where there is no server, or it cannot say."""
    source = parsed.source(sub_path)
    if context.services is None or source is None:
        return True
    declared = class_lines(parsed, base_path, base_name)
    for _round in range(_ALIAS_ROUNDS + 1):
        try:
            locations = context.services.definition(source, Position(*at)).value
        except GraftError:
            return True
        if not locations:
            return True
        if any(location.file == base_path and any(first <= location.range.start.line <= last for first, last in declared)
               for location in locations):
            return True
        kept = next((found for location in locations if (found := _constant_set_to(parsed, location)) is not None), None)
        if kept is None:
            return False
        source, at = kept  # ``const B = Base``: the server's definition of B is B; Base is asked in turn
    return False


def _constant_set_to(parsed: ParsedFiles, location: Location) -> tuple[SourceFile, tuple[int, int]] | None:
    """Where the name a constant is set to is (``Base`` of ``const B = Base``), when ``location`` is
    such a constant's name."""
    source = parsed.source(location.file) if location.inside_workspace else None
    if source is None or location.range.start.line >= len(source.line_starts):
        return None
    start = source.line_starts[location.range.start.line]
    end = source.text.find("\n", start)
    line = source.text[start:end if end >= 0 else len(source.text)]
    value = _SET_TO.search(line)
    constant = _CONSTANT.search(line, 0, value.start()) if value is not None else None
    if value is not None and constant is not None and constant.start(1) == location.range.start.column:
        return source, (location.range.start.line, value.start(1))
    return None


def class_lines(parsed: ParsedFiles, path: str, name: str) -> list[tuple[int, int]]:
    """Each class ``name`` of a file: the 0-based lines from where its declaration starts (its
    decorators, ``export``) to its name."""
    tree = parsed.get(path)
    if tree is None:
        return []
    found = []
    for declaration in _walk(tree[1]):
        name_node = declaration.child_by_field_name("name")
        if name_node is None and declaration.parent is not None and declaration.parent.type == "variable_declarator":
            name_node = declaration.parent.child_by_field_name("name")
        if name_node is not None and name_node.text == name.encode():
            outer = declaration.parent if declaration.parent is not None and declaration.parent.type == "export_statement" else declaration
            found.append((outer.start_point[0], name_node.start_point[0]))
    return found


def _walk(node: Node) -> Iterable[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _CLASSES:
            yield current
        stack.extend(reversed(current.named_children))

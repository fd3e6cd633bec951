"""Which Python expressions are provably pure: built only of literals, locals whose type is known
to be an immutable builtin, and operations on such values that read nothing else and change nothing.

Such a value is the same wherever and however often it is evaluated, as long as the names it reads
keep their binding (the caller checks that). A type is known from a literal, from a parameter's or
variable's annotation (trusted, as a type checker trusts it), or from the one value a local is
assigned. The operations known pure: builtins on such values (``len``, ``isinstance``, ``str``,
``int``, ``sorted`` ...), the methods of ``str``, ``bytes``, ``tuple`` and ``re.Match``, their
operators, subscripts, comparisons and f-strings. Anything else (a call of another function, an
attribute of an object, a name bound twice, a builtin shadowed) is not judged pure.

A pure value may still raise (``int(text)``, ``m.group("name")``): ``Pure.may_raise`` says so, and
the caller keeps such a value from moving past code with effects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import Assignment, FunctionScope, QualifiedNameSource

from engine.refactor.python.span_nodes import PythonTree

IMMUTABLE = frozenset({"str", "bytes", "int", "float", "complex", "bool", "None", "tuple", "frozenset", "Match", "type",
                       "immutable"})
"""The kinds of value judged here that nothing can change; ``immutable``: one of them, which one unknown."""
NUMBERS = frozenset({"int", "float", "complex", "bool"})
SIZED = frozenset({"str", "bytes", "tuple", "frozenset"})


@dataclass(frozen=True)
class Pure:
    kind: str
    """An IMMUTABLE kind, or ``list``, ``dict`` or ``set``: a new object each evaluation."""
    may_raise: bool

    @property
    def immutable(self) -> bool:
        return self.kind in IMMUTABLE


_ANNOTATED = {"builtins.str": "str", "builtins.bytes": "bytes", "builtins.int": "int", "builtins.float": "float",
              "builtins.bool": "bool", "builtins.complex": "complex", "builtins.frozenset": "frozenset",
              "re.Match": "Match", "typing.Match": "Match"}
_BUILTIN_CONSTANTS = {"None": "None", "True": "bool", "False": "bool"}
_BUILTIN_TYPES = frozenset({"str", "bytes", "int", "float", "bool", "complex", "tuple", "frozenset", "type"})

_STR_NO_ARGUMENTS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize", "swapcase",
                               "split", "rsplit", "splitlines", "isalpha", "isdigit", "isalnum", "isspace", "islower",
                               "isupper", "istitle", "isdecimal", "isnumeric", "isidentifier", "isascii"})
"""``str`` methods that cannot raise when called with no arguments."""
_STR_STRING_ARGUMENTS = frozenset({"strip", "lstrip", "rstrip", "startswith", "endswith", "replace", "count", "find", "rfind",
                                   "removeprefix", "removesuffix"})
"""``str`` methods that cannot raise when every argument is a string."""
_STR_RESULTS = {"split": "list", "rsplit": "list", "splitlines": "list", "partition": "tuple", "rpartition": "tuple",
                "count": "int", "find": "int", "rfind": "int", "index": "int", "rindex": "int", "encode": "bytes",
                "startswith": "bool", "endswith": "bool"}
_STR_METHODS = _STR_NO_ARGUMENTS | _STR_STRING_ARGUMENTS | frozenset(_STR_RESULTS) | frozenset({
    "join", "format", "zfill", "center", "ljust", "rjust", "expandtabs", "index", "rindex", "partition", "rpartition"})
_MATCH_METHODS = {"group": "immutable", "groups": "tuple", "groupdict": "dict", "start": "int", "end": "int", "span": "tuple"}
_MATCH_ATTRIBUTES = {"string": "str", "pos": "int", "endpos": "int", "lastindex": "immutable", "lastgroup": "immutable"}


def judge(tree: PythonTree, node: cst.CSTNode) -> Pure | None:
    """``node``'s value as a Pure, or None when it is not provably pure."""
    return _Judge(tree).value(node)


class _Judge:
    def __init__(self, tree: PythonTree) -> None:
        self.tree = tree
        self.visiting: set[str] = set()

    def value(self, node: cst.CSTNode) -> Pure | None:
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            return Pure(_string_kind(node), False)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
            return Pure({cst.Integer: "int", cst.Float: "float"}.get(type(node), "complex"), False)
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            return self._collection(node)
        if isinstance(node, cst.Name):
            return self._name(node)
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.Attribute):
            return self._attribute(node)
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.FormattedString):
            return self._formatted(node)
        return self._operation(node)

    def _operation(self, node: cst.CSTNode) -> Pure | None:
        if isinstance(node, cst.BinaryOperation):
            return self._binary(node)
        if isinstance(node, cst.UnaryOperation):
            return self._unary(node)
        if isinstance(node, cst.BooleanOperation):
            return self._boolean(node)
        if isinstance(node, cst.Comparison):
            return self._comparison(node)
        return self._if_expression(node) if isinstance(node, cst.IfExp) else None

    def _values(self, nodes: Sequence[cst.CSTNode]) -> list[Pure] | None:
        found = [self.value(node) for node in nodes]
        return None if any(part is None or not part.immutable for part in found) else [p for p in found if p is not None]

    def _qualified(self, node: cst.CSTNode) -> tuple[str, QualifiedNameSource] | None:
        scope = self.tree.scopes.get(node)
        names = scope.get_qualified_names_for(node) if scope is not None else set()
        if len(names) != 1:
            return None
        name = next(iter(names))
        return name.name, name.source

    def _name(self, node: cst.Name) -> Pure | None:
        found = self._qualified(node)
        if found is not None and found[1] is QualifiedNameSource.BUILTIN:
            short = found[0].removeprefix("builtins.")
            if short in _BUILTIN_CONSTANTS:
                return Pure(_BUILTIN_CONSTANTS[short], False)
            return Pure("type", False) if short in _BUILTIN_TYPES else None
        scope = self.tree.scopes.get(node)
        bindings = list(scope[node.value]) if scope is not None else []
        if len(bindings) != 1 or not isinstance(bindings[0], Assignment) or not isinstance(bindings[0].scope, FunctionScope):
            return None
        if node.value in self.visiting:
            return None
        self.visiting.add(node.value)
        try:
            return self._bound(bindings[0].node)
        finally:
            self.visiting.discard(node.value)

    def _bound(self, node: cst.CSTNode) -> Pure | None:
        """The kind of the one value a local is bound to: a parameter's annotation, or its assignment's value."""
        if isinstance(node, cst.Param):
            if node.star or node.annotation is None:
                return None
            return self._annotated(node.annotation.annotation)
        parent = self.tree.parents.get(node)
        if isinstance(parent, cst.AnnAssign) and parent.target is node:
            return self._annotated(parent.annotation.annotation)
        statement = self.tree.parents.get(parent) if isinstance(parent, cst.AssignTarget) else None
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            found = self.value(statement.value)
            return Pure(found.kind, False) if found is not None and found.immutable else None
        return None

    def _annotated(self, annotation: cst.BaseExpression) -> Pure | None:
        if isinstance(annotation, cst.Subscript):  # Match[str], tuple[str, ...]
            inner = [element.slice.value for element in annotation.slice if isinstance(element.slice, cst.Index)]
            outer = self._qualified(annotation.value)
            if outer is not None and outer[0] in ("builtins.tuple", "typing.Tuple"):
                kinds = [self._annotated(part) for part in inner if not isinstance(part, cst.Ellipsis)]
                return Pure("tuple", False) if kinds and all(k is not None for k in kinds) else None
            return Pure("Match", False) if outer is not None and _ANNOTATED.get(outer[0]) == "Match" else None
        if isinstance(annotation, cst.Name) and annotation.value == "None":
            return Pure("None", False)
        found = self._qualified(annotation) if isinstance(annotation, (cst.Name, cst.Attribute)) else None
        kind = _ANNOTATED.get(found[0]) if found is not None else None
        return Pure(kind, False) if kind is not None else None

    def _call(self, node: cst.Call) -> Pure | None:
        if any(arg.star for arg in node.args):
            return None
        arguments = self._values([arg.value for arg in node.args])
        if arguments is None:
            return None
        if isinstance(node.func, cst.Attribute):
            receiver = self.value(node.func.value)
            if receiver is None or not receiver.immutable:
                return None
            return _method(receiver.kind, node.func.attr.value, arguments)
        found = self._qualified(node.func) if isinstance(node.func, cst.Name) else None
        if found is None or found[1] is not QualifiedNameSource.BUILTIN or any(arg.keyword for arg in node.args):
            return None
        return _builtin(found[0].removeprefix("builtins."), arguments)

    def _attribute(self, node: cst.Attribute) -> Pure | None:
        receiver = self.value(node.value)
        kind = _MATCH_ATTRIBUTES.get(node.attr.value) if receiver is not None and receiver.kind == "Match" else None
        return Pure(kind, False) if kind is not None else None

    def _binary(self, node: cst.BinaryOperation) -> Pure | None:
        found = self._values([node.left, node.right])
        if found is None:
            return None
        left, right = found
        operator = type(node.operator)
        if left.kind in NUMBERS and right.kind in NUMBERS:
            kind = _wider(left.kind, right.kind)
            if operator in (cst.Add, cst.Subtract, cst.Multiply):
                return Pure(kind, left.may_raise or right.may_raise)
            if operator in (cst.BitAnd, cst.BitOr, cst.BitXor) and kind == "int":
                return Pure(kind, left.may_raise or right.may_raise)
            return Pure("float" if operator is cst.Divide else kind, True)
        if left.kind == right.kind and left.kind in ("str", "bytes", "tuple") and operator is cst.Add:
            return Pure(left.kind, left.may_raise or right.may_raise)
        if left.kind in ("str", "bytes") and operator is cst.Modulo:
            return Pure(left.kind, True)
        return None

    def _unary(self, node: cst.UnaryOperation) -> Pure | None:
        found = self.value(node.expression)
        if found is None or not found.immutable:
            return None
        if isinstance(node.operator, cst.Not):
            return Pure("bool", found.may_raise)
        return Pure(found.kind, found.may_raise) if found.kind in NUMBERS else None

    def _boolean(self, node: cst.BooleanOperation) -> Pure | None:
        found = self._values([node.left, node.right])
        return None if found is None else Pure(_common(found), any(p.may_raise for p in found))

    def _comparison(self, node: cst.Comparison) -> Pure | None:
        found = self._values([node.left, *(target.comparator for target in node.comparisons)])
        if found is None:
            return None
        raises = any(p.may_raise for p in found)
        for (left, right), target in zip(zip(found, found[1:]), node.comparisons):
            if isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
                continue
            same = {left.kind, right.kind} <= NUMBERS - {"complex"} or left.kind == right.kind == "str"
            raises = raises or not same
        return Pure("bool", raises)

    def _if_expression(self, node: cst.IfExp) -> Pure | None:
        found = self._values([node.test, node.body, node.orelse])
        return None if found is None else Pure(_common(found[1:]), any(p.may_raise for p in found))

    def _subscript(self, node: cst.Subscript) -> Pure | None:
        receiver = self.value(node.value)
        if receiver is None or receiver.kind not in ("str", "bytes", "tuple") or len(node.slice) != 1:
            return None
        part = node.slice[0].slice
        if isinstance(part, cst.Index):
            index = self.value(part.value)
            if index is None or index.kind not in ("int", "bool"):
                return None
            return Pure({"tuple": "immutable", "bytes": "int"}.get(receiver.kind, receiver.kind), True)
        if not isinstance(part, cst.Slice):
            return None
        bounds = self._values([b for b in (part.lower, part.upper, part.step) if b is not None])
        if bounds is None or any(b.kind not in ("int", "None") for b in bounds):
            return None
        return Pure(receiver.kind, receiver.may_raise or any(b.may_raise for b in bounds) or part.step is not None)

    def _collection(self, node: cst.Tuple | cst.List | cst.Set) -> Pure | None:
        if any(isinstance(element, cst.StarredElement) for element in node.elements):
            return None
        found = self._values([element.value for element in node.elements])
        kind = {cst.Tuple: "tuple", cst.List: "list"}.get(type(node), "set")
        return None if found is None else Pure(kind, any(p.may_raise for p in found))

    def _formatted(self, node: cst.FormattedString) -> Pure | None:
        fields = [part for part in node.parts if isinstance(part, cst.FormattedStringExpression)]
        found = self._values([field.expression for field in fields])
        if found is None or any(p.kind in ("Match", "type") for p in found):
            return None
        specified = any(field.format_spec is not None or field.conversion is not None for field in fields)
        # Formatting an int raises past Python's digit limit, as str() does.
        unsafe = any(p.may_raise or p.kind not in ("str", "bool", "None", "float") for p in found)
        return Pure("str", specified or unsafe)


def _string_kind(node: cst.SimpleString | cst.ConcatenatedString) -> str:
    first = node if isinstance(node, cst.SimpleString) else node.left
    while isinstance(first, cst.ConcatenatedString):
        first = first.left
    prefix = first.prefix.lower() if isinstance(first, cst.SimpleString) else ""
    return "bytes" if "b" in prefix else "str"


def _wider(left: str, right: str) -> str:
    for kind in ("complex", "float", "int"):
        if kind in (left, right):
            return kind
    return "int"  # bool with bool: arithmetic gives an int


def _common(found: Sequence[Pure]) -> str:
    kinds = {p.kind for p in found}
    if len(kinds) == 1:
        return kinds.pop()
    return "immutable" if all(p.immutable for p in found) else "list"


def _method(receiver: str, method: str, arguments: list[Pure]) -> Pure | None:
    if receiver in ("str", "bytes") and method in _STR_METHODS:
        kind = _STR_RESULTS.get(method, receiver)
        safe = (not arguments and method in _STR_NO_ARGUMENTS) or (
            method in _STR_STRING_ARGUMENTS and all(a.kind == receiver for a in arguments))
        return Pure("bytes" if receiver == "bytes" and kind == "str" else kind,
                    not safe or any(a.may_raise for a in arguments))
    if receiver == "Match" and method in _MATCH_METHODS:
        safe = not arguments or method in ("groups", "groupdict") and all(a.kind != "Match" for a in arguments)
        return Pure(_MATCH_METHODS[method], not safe or any(a.may_raise for a in arguments))
    if receiver == "tuple" and method in ("count", "index"):
        return Pure("int", method == "index" or any(a.may_raise for a in arguments))
    return None


_BUILTIN_RESULTS = {"len": "int", "isinstance": "bool", "bool": "bool", "str": "str", "repr": "str", "int": "int",
                    "float": "float", "abs": None, "min": None, "max": None, "sorted": "list", "tuple": "tuple",
                    "frozenset": "frozenset", "list": "list", "ord": "int", "chr": "str", "hex": "str", "oct": "str",
                    "bin": "str", "round": "immutable", "divmod": "tuple", "any": "bool", "all": "bool", "sum": "immutable"}


def _builtin(name: str, arguments: list[Pure]) -> Pure | None:
    """A builtin called on immutable values: pure (it reads only them); whether it may raise."""
    if name not in _BUILTIN_RESULTS:
        return None
    kinds = [a.kind for a in arguments]
    raised = any(a.may_raise for a in arguments)
    kind = _BUILTIN_RESULTS[name] or (_common(arguments) if arguments else "immutable")
    one = len(arguments) == 1
    safe = {
        "len": one and kinds[0] in SIZED,
        "isinstance": len(kinds) == 2 and kinds[1] in ("type", "tuple"),
        "bool": len(kinds) <= 1,
        "str": not kinds or one and kinds[0] in ("str", "bool", "None", "float"),
        "repr": one and kinds[0] in ("str", "bool", "None", "float"),
        "int": one and kinds[0] in ("int", "bool"),
        "abs": one and kinds[0] in NUMBERS,
        "tuple": not kinds or one and kinds[0] in SIZED,
        "frozenset": not kinds or one and kinds[0] in SIZED,
        "list": not kinds or one and kinds[0] in SIZED,
    }.get(name, False)
    return Pure(kind, raised or not safe)

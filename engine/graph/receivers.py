"""What a Python call's receiver holds, read from its file alone: the receiver inference behind
the graph's method-call edges (see ``CallFact.receiver``).

``self``/``cls`` and ``self.attr``, annotated parameters and attributes, locals assigned from a
constructor or from a call whose function has an annotated return, values returned by methods
of typed values, and loop or comprehension variables over annotated iterables. Where nothing
says, the receiver is :data:`UNKNOWN_RECEIVER`, so answers can count such calls.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from types import MappingProxyType
from typing import Mapping, NamedTuple

from tree_sitter import Node

#: A call's receiver whose type nothing in its file says: an unannotated parameter, a local
#: assigned from an expression, an attribute of a value.
UNKNOWN_RECEIVER = "?"


class CallFact(NamedTuple):
    caller: str | None
    callee: str
    """The called expression as written: ``g``, ``self.h``, ``os.path.join``; ``?.m`` when what
    precedes ``.m`` is not a dotted name (``make().m``)."""
    line: int
    receiver: str | None = None
    """For a method call whose receiver is a value, not a name the graph resolves by scoping
    (a parameter, a local, ``self.attr``, a call's result), what its file says the receiver
    holds: a class expression written there (``Order``, ``models.Order``), ``f()`` for what a
    call of ``f`` returns (a class called: its instance), ``f()[]`` for an element of what ``f``
    returns, or :data:`UNKNOWN_RECEIVER`. None: the callee is resolved by name (a module, a
    class, ``self``), or its receiver is a literal (``", ".join``)."""


def node_text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", errors="replace") if node is not None else ""


# `x.m()` is a use of `C.m` only once `x` is known to hold a `C`. What a file says about that is
# read here, from the same tree, and kept as text for the graph to resolve against other files:
# parameters' and annotated locals' annotations, locals assigned from a call (a constructor, or
# a function whose return annotation the graph reads in its own file), loop variables over an
# annotated iterable, and ``self.attr`` as its class annotates or assigns it. Nothing is guessed
# from names; where nothing says, the receiver is UNKNOWN_RECEIVER, so answers can count it.


class Held(NamedTuple):
    """What a name holds as far as its file says: the value's type and the type of the elements
    iterating it gives, each a receiver form of :attr:`CallFact.receiver`, or None."""

    value: str | None
    element: str | None = None


_NOTHING_SAID = Held(None)
# Wrappers an annotation is read through: `Optional[Order]` holds an Order.
_TRANSPARENT = frozenset({"Optional", "Final", "ClassVar", "Annotated", "Required", "NotRequired", "ReadOnly", "Type", "type"})
# Containers whose iteration gives their first argument: `list[Segment]` gives Segments (a dict its keys).
_CONTAINERS = frozenset({
    "Iterable", "Iterator", "Sequence", "MutableSequence", "Collection", "AbstractSet", "MutableSet", "Reversible",
    "list", "List", "set", "Set", "frozenset", "FrozenSet", "tuple", "Tuple", "deque", "Deque", "Generator",
    "AsyncIterable", "AsyncIterator", "AsyncGenerator", "KeysView", "Mapping", "MutableMapping", "dict", "Dict",
    "DefaultDict", "defaultdict", "OrderedDict", "Counter",
})
# Builtins whose result iterates as their first argument does: `for s in sorted(segments)`.
_ITERATING_CALLS = frozenset({"sorted", "reversed", "list", "tuple", "set", "frozenset", "iter"})
# Literals have a builtin type: their methods are never the project's, and never unknown.
_LITERAL_TYPES = {
    "string": "str", "concatenated_string": "str", "integer": "int", "float": "float", "true": "bool", "false": "bool",
    "none": "None", "list": "list", "list_comprehension": "list", "dictionary": "dict", "dictionary_comprehension": "dict",
    "set": "set", "set_comprehension": "set", "tuple": "tuple", "lambda": "function",
}
_COMPREHENSIONS = frozenset({"list_comprehension", "set_comprehension", "dictionary_comprehension", "generator_expression"})
_GENERIC = re.compile(r"([A-Za-z_][\w.]*)\s*\[(.*)\]", re.DOTALL)
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def annotation_held(text: str) -> Held:
    """What a value annotated ``text`` holds: ``Order`` and ``Optional["Order"]`` an Order,
    ``list[Segment]`` a list of Segments; unions of several classes, callables and the like nothing."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()  # a forward reference
    alternatives = [part for part in _split_top(text, "|") if part.strip() != "None"]
    if len(alternatives) != 1:
        return _NOTHING_SAID
    text = alternatives[0].strip()
    generic = _GENERIC.fullmatch(text)
    if generic is None:
        return Held(text) if _DOTTED_NAME.fullmatch(text) and text not in ("None", "Any", "object") else _NOTHING_SAID
    wrapper, arguments = generic.group(1), _split_top(generic.group(2), ",")
    last = wrapper.rsplit(".", 1)[-1]
    if last in _TRANSPARENT:
        return annotation_held(arguments[0])
    if last == "Union":
        named = [argument for argument in arguments if argument.strip() != "None"]
        return annotation_held(named[0]) if len(named) == 1 else _NOTHING_SAID
    if last in _CONTAINERS:
        return Held(wrapper, annotation_held(arguments[0]).value)
    return Held(wrapper)  # a generic class: `Repository[Item]` holds a Repository


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += (char in "[(") - (char in "])")
        if char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    return [*parts, text[start:]]


class _Binding:
    """One binding of a name, read when a lookup needs it: most bindings never hold a receiver,
    and reading every annotation and value up front doubled the cost of a file's facts."""

    __slots__ = ("line", "how", "node", "held")

    def __init__(self, line: int, how: str, node: Node | None, held: Held | None = None) -> None:
        self.line = line
        self.how = how
        """annotation (node: the type), value (node: the assigned expression), element (node: the
        iterable looped over), splat (node: a ``*args`` annotation or None), caught (node: the
        exception class), or given (``held`` is what it holds)."""
        self.node = node
        self.held = held


_GIVEN = "given"
_DEEPEST = 40
"""How many bindings a lookup follows through one another (``a = b``, ``b = c()``…): generated
code can chain thousands, and a file's facts must never fail on recursion."""
_NO_NAMES: Mapping[str, list[_Binding]] = MappingProxyType({})


class _Scopes:
    """A file's functions and classes as nested byte intervals, to find the innermost one around
    an offset in a few steps: ``Node.parent`` walks down from the root each time, which made
    walking up from every call cost as much as the rest of the facts. Index -1 is the module."""

    def __init__(self, functions: list[Node], classes: list[Node]) -> None:
        nodes = sorted((n.start_byte, -n.end_byte, n.type == "class_definition") for n in [*functions, *classes])
        self.starts = [start for start, _end, _cls in nodes]
        self.ends = [-end for _start, end, _cls in nodes]
        self.is_class = [cls for _start, _end, cls in nodes]
        self.parents: list[int] = []
        self._children: dict[int, list[int]] | None = None
        open_scopes: list[int] = []
        for index, start in enumerate(self.starts):
            while open_scopes and self.ends[open_scopes[-1]] <= start:
                open_scopes.pop()
            self.parents.append(open_scopes[-1] if open_scopes else -1)
            open_scopes.append(index)

    def innermost(self, offset: int) -> int:
        # Intervals nest, so every one around the offset is an ancestor of the last one starting before it.
        index = bisect_right(self.starts, offset) - 1
        while index >= 0 and self.ends[index] <= offset:
            index = self.parents[index]
        return index

    def children(self, index: int) -> list[int]:
        """The scopes directly inside one (a class's methods)."""
        if self._children is None:
            self._children = {}
            for child, parent in enumerate(self.parents):
                self._children.setdefault(parent, []).append(child)
        return self._children.get(index, [])

    def class_of_method(self, offset: int) -> int | None:
        """The class whose method's body holds the offset (a function directly in a class)."""
        function = self.innermost(offset)
        if function < 0 or self.is_class[function]:
            return None
        owner = self.parents[function]
        return owner if owner >= 0 and self.is_class[owner] else None


class Receivers:
    """What the receivers of one Python file's method calls hold. A scope's bindings (a function's,
    the module's) are read into a table when a lookup first passes through it, and a class's
    attributes with its body and its methods; what each binding holds, when a lookup needs it."""

    def __init__(self, captures: dict[str, list[Node]]) -> None:
        self._captures = captures
        self._scope_index = _Scopes(captures.get("function_scope", []), captures.get("class_scope", []))
        self._unread: dict[int, list[tuple[str, Node]]] | None = None
        """Scope index → its binding captures not yet read, in source order."""
        self._scopes: dict[int, dict[str, list[_Binding]]] = {}
        """Scope index → name → its bindings in source order."""
        self._members: dict[int, dict[str, list[_Binding]]] = {}
        """Class index → attribute → its bindings (annotated in the class, or assigned on self)."""
        self._locals: dict[str, list[tuple[int, int, Node | None]]] = {}
        """Name → (start, end, for-clause) of each comprehension that binds it (None: a lambda's parameter)."""
        self._members_read: set[int] = set()
        self._depth = 0
        """Bindings being read through one another now (see _DEEPEST)."""
        self._in_clause: set[int] = set()
        """Comprehension clauses whose iterable is being read: `[x for x in x]` reads the outer x there."""

    def receiver(self, callee: Node, written: str | None = None) -> str | None:
        """The :attr:`CallFact.receiver` of a call whose called expression is ``callee`` (its text
        ``written``, when the caller has it already)."""
        if callee.type != "attribute":
            return None
        line = callee.start_point.row + 1
        if written is not None and _DOTTED_NAME.fullmatch(written):
            # Names joined by dots, nothing else: the receiver is the text before the last dot,
            # starting where the callee starts; read without a node per part (one call in five
            # of a project's is ``self.x()`` or ``module.f()``, and there are hundreds of thousands).
            receiver_text = written.rpartition(".")[0]
            if "." in receiver_text:
                return self._attribute_receiver(receiver_text, callee.start_byte, line)
            return self._name_receiver(receiver_text, callee.start_byte, line)
        target = callee.child_by_field_name("object")
        if target is None:
            return None
        if target.type == "identifier":
            return self._name_receiver(node_text(target), target.start_byte, line)
        if target.type == "attribute":
            return self._attribute_receiver(node_text(target), target.start_byte, line)
        if target.type == "call":
            function = target.child_by_field_name("function")
            if node_text(function) == "super":
                return None  # super().m: resolved through the enclosing class's bases
            called = self._called(function, line)
            return f"{called}()" if called is not None else UNKNOWN_RECEIVER
        return None if target.type in _LITERAL_TYPES else UNKNOWN_RECEIVER

    def _name_receiver(self, name: str, offset: int, line: int) -> str | None:
        """``x.m()``: what ``x`` holds, or None when no scope binds it to a value (a module, a class)
        or it is ``self``/``cls``. A literal's type name (``True.m``) is bound by no scope either."""
        held = None if name in ("self", "cls") else self._lookup(offset, name, line)
        return None if held is None else held.value or UNKNOWN_RECEIVER

    def _attribute_receiver(self, written: str, offset: int, line: int) -> str | None:
        """``self.attr.m()``: what the class says ``attr`` holds. ``a.b.m()``: a module path the
        graph resolves by name, unless ``a`` is a value (a parameter, a local)."""
        if not _DOTTED_NAME.fullmatch(written):
            return UNKNOWN_RECEIVER
        parts = written.split(".")
        if parts[0] == "self" and len(parts) == 2:
            held = self._member(offset, parts[1])
            return held.value or UNKNOWN_RECEIVER if held is not None else UNKNOWN_RECEIVER
        if parts[0] in ("self", "cls") or self._lookup(offset, parts[0], line) is not None:
            return UNKNOWN_RECEIVER  # an attribute of a value: its class's attributes are not followed
        return None

    def _called(self, function: Node | None, line: int) -> str | None:
        """A called expression as the graph can resolve it: as written when it names a function
        or class by scoping (``make``, ``models.Order``, ``self.build``); with a value's class in
        place of the value (``repo.get`` → ``Repository.get`` for ``repo: Repository``, and so
        ``self.repo.get``); None when what is called depends on a value of unknown type."""
        written = node_text(function)
        if function is None or not _DOTTED_NAME.fullmatch(written):
            return None
        parts = written.split(".")
        if parts[0] in ("self", "cls"):
            if len(parts) == 2:
                return written
            held = self._member(function.start_byte, parts[1]) if len(parts) == 3 and parts[0] == "self" else None
        else:
            held = self._lookup(function.start_byte, parts[0], line)
            if held is None:
                return written  # not a value: a module, class or function the graph resolves by name
            parts = ["", *parts]  # the value itself stands where `self.attr` stands above
        value = held.value if held is not None else None
        if value is None or "(" in value or len(parts) != 3:
            return None
        return f"{value}.{parts[2]}"

    # -- lookups ---------------------------------------------------------------

    def _lookup(self, offset: int, name: str, line: int) -> Held | None:
        """What ``name`` holds at a byte offset, by the scopes around it (comprehension, lambda,
        function, module; class bodies are not seen from methods), or None when no scope binds it
        to a value (an import, a class, a function, a builtin: names the graph resolves by name)."""
        self._group()
        around = [entry for entry in self._locals.get(name, ())
                  if entry[0] <= offset < entry[1] and (entry[2] is None or entry[2].id not in self._in_clause)]
        if around:
            clause = max(around, key=lambda entry: entry[0])[2]  # the innermost comprehension or lambda
            return self._clause_element(clause) if clause is not None else _NOTHING_SAID
        index = self._scope_index.innermost(offset)
        while True:
            bindings = self._table(index).get(name)
            if bindings:
                return self._held(_at_line(bindings, line))
            if index < 0:
                return None
            index = self._scope_index.parents[index]

    def _clause_element(self, clause: Node) -> Held:
        """What a comprehension's ``for x in items`` binds ``x`` to."""
        if self._depth >= _DEEPEST:
            return _NOTHING_SAID
        self._in_clause.add(clause.id)
        self._depth += 1
        try:
            return self._element_of(clause.child_by_field_name("right"), clause.start_point.row + 1)
        finally:
            self._in_clause.discard(clause.id)
            self._depth -= 1

    def _member(self, offset: int, attribute: str) -> Held | None:
        """What ``self.attribute`` holds in a method: the first binding that says a class (a
        ``self.x = None`` in ``__init__`` says less than a later ``self.x = X()``)."""
        cls = self._scope_index.class_of_method(offset)
        bindings = self._class_members(cls).get(attribute, []) if cls is not None else []
        held = [self._held(binding) for binding in bindings]
        return next((h for h in held if h.value not in (None, "None")), held[0] if held else None)

    def _held(self, binding: _Binding) -> Held:
        if binding.held is None:
            if self._depth >= _DEEPEST:
                return _NOTHING_SAID
            binding.held = _NOTHING_SAID  # while read: a binding read through itself (`x = x.next()`) says nothing
            self._depth += 1
            try:
                binding.held = self._read(binding)
            finally:
                self._depth -= 1
        return binding.held

    def _read(self, binding: _Binding) -> Held:
        node, line = binding.node, binding.line
        if binding.how == "annotation":
            return annotation_held(node_text(node))
        if binding.how == "value":
            return self._held_by(node, line)
        if binding.how == "element":
            return self._element_of(node, line)
        if binding.how == "splat":
            return Held("tuple", annotation_held(node_text(node)).value if node is not None else None)  # `*parts: Part`
        if binding.how == "caught" and node is not None and _DOTTED_NAME.fullmatch(node_text(node)):
            return Held(node_text(node))
        return _NOTHING_SAID

    # -- reading the bindings ----------------------------------------------------

    def _group(self) -> dict[int, list[tuple[str, Node]]]:
        """The file's binding captures by the scope they bind in (once per file)."""
        if self._unread is None:
            self._unread = {}
            self._read_locals()
            kinds = ("parameters", "assignment", "for", "walrus", "alias")
            found = sorted(((node.start_byte, kind, node) for kind in kinds for node in self._captures.get(kind, [])),
                           key=lambda item: (item[0], item[1]))
            for start, kind, node in found:
                self._unread.setdefault(self._scope_index.innermost(start), []).append((kind, node))
        return self._unread

    def _table(self, scope: int) -> Mapping[str, list[_Binding]]:
        """A function's or the module's names and their bindings, read when first needed."""
        unread = (self._unread if self._unread is not None else self._group()).pop(scope, None)
        for kind, node in unread or ():
            self._read_binding(kind, node, scope)
        return self._scopes.get(scope, _NO_NAMES)

    def _class_members(self, cls: int) -> Mapping[str, list[_Binding]]:
        """A class's attributes: its body's annotations and assignments, and its methods' ``self.x``."""
        if cls not in self._members_read:
            self._members_read.add(cls)
            self._table(cls)
            for method in self._scope_index.children(cls):
                self._table(method)
        return self._members.get(cls, _NO_NAMES)

    def _read_locals(self) -> None:
        """The names comprehensions and lambdas bind, with the span they are bound in."""
        for clause in self._captures.get("comprehension_for", []):
            comprehension, left = clause.parent, clause.child_by_field_name("left")
            if comprehension is None or left is None:
                continue
            for name in _names_in(left):
                bound = clause if left.type == "identifier" else None  # unpacked parts: not followed
                self._locals.setdefault(name, []).append((comprehension.start_byte, comprehension.end_byte, bound))
        for parameters in self._captures.get("lambda_parameters", []):
            function = parameters.parent
            if function is None:
                continue
            for name in _names_in(parameters):
                self._locals.setdefault(name, []).append((function.start_byte, function.end_byte, None))

    def _read_binding(self, kind: str, node: Node, scope: int) -> None:
        line = node.start_point.row + 1
        if kind == "parameters":
            for name, binding in _parameters(node, line):
                self._bind(scope, name, binding)
        elif kind == "assignment":
            self._read_assignment(node, line, scope)
        elif kind == "for":
            self._read_loop(node, line, scope)
        elif kind == "walrus":
            self._bind(scope, node_text(node), _Binding(line, _GIVEN, None, _NOTHING_SAID))
        elif kind == "alias":
            pattern = node.parent
            caught = pattern.named_children[0] if pattern is not None and pattern.parent is not None \
                and pattern.parent.type == "except_clause" and pattern.named_children else None
            # `except E as e` holds an E; `with x as y` holds what x.__enter__ returns: unknown here.
            for name in _names_in(node):
                self._bind(scope, name, _Binding(line, "caught", caught))

    def _read_assignment(self, node: Node, line: int, scope: int) -> None:
        left, annotation = node.child_by_field_name("left"), node.child_by_field_name("type")
        if left is None:
            return
        binding = _Binding(line, "annotation", annotation) if annotation is not None else \
            _Binding(line, "value", node.child_by_field_name("right"))
        if left.type == "identifier":
            self._bind(scope, node_text(left), binding)
        elif left.type == "attribute":
            owner = left.child_by_field_name("object")
            cls = self._scope_index.class_of_method(node.start_byte) if owner is not None and node_text(owner) == "self" else None
            if cls is not None:
                self._add_member(cls, node_text(left.child_by_field_name("attribute")), binding)
        else:
            for name in _names_in(left):  # unpacking: what each part holds is not followed
                self._bind(scope, name, _Binding(line, _GIVEN, None, _NOTHING_SAID))

    def _read_loop(self, node: Node, line: int, scope: int) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None:
            return
        if left.type == "identifier":
            self._bind(scope, node_text(left), _Binding(line, "element", right))
            return
        names = _names_in(left)
        enumerated = right is not None and right.type == "call" and node_text(right.child_by_field_name("function")) == "enumerate"
        if enumerated and len(names) == 2 and left.named_child_count == 2 and right is not None:
            self._bind(scope, names[0], _Binding(line, _GIVEN, None, Held("int")))
            self._bind(scope, names[1], _Binding(line, "element", _first_argument(right)))
            return
        for name in names:
            self._bind(scope, name, _Binding(line, _GIVEN, None, _NOTHING_SAID))

    def _held_by(self, value: Node | None, line: int) -> Held:
        """What an assigned expression holds: a call's result (by what the graph learns of the
        callee), a literal's builtin type, another name's binding, ``self.attr``'s."""
        if value is None:
            return _NOTHING_SAID
        if value.type == "await" and value.named_children:
            value = value.named_children[0]  # an async function's annotation is what awaiting gives
        if value.type in _LITERAL_TYPES:
            return Held(_LITERAL_TYPES[value.type])
        if value.type == "call":
            written = self._called(value.child_by_field_name("function"), line)
            if written is None or written == "super":
                return _NOTHING_SAID
            if written in _ITERATING_CALLS:
                return Held(written, self._element_of(_first_argument(value), line).value)
            return Held(f"{written}()", f"{written}()[]")
        if value.type == "identifier":
            return self._lookup(value.start_byte, node_text(value), line) or _NOTHING_SAID
        if value.type == "attribute":
            written = node_text(value)
            if written.count(".") == 1 and written.startswith("self."):
                return self._member(value.start_byte, written[5:]) or _NOTHING_SAID
        return _NOTHING_SAID

    def _element_of(self, iterable: Node | None, line: int) -> Held:
        """What a loop over ``iterable`` binds its variable to."""
        if iterable is None:
            return _NOTHING_SAID
        if iterable.type == "call" and node_text(iterable.child_by_field_name("function")) in _ITERATING_CALLS:
            return self._element_of(_first_argument(iterable), line)
        return Held(self._held_by(iterable, line).element)

    def _bind(self, scope: int, name: str, binding: _Binding) -> None:
        if scope >= 0 and self._scope_index.is_class[scope]:
            self._add_member(scope, name, binding)  # a class attribute (`items: list[Item]`)
            return
        self._scopes.setdefault(scope, {}).setdefault(name, []).append(binding)

    def _add_member(self, cls: int, attribute: str, binding: _Binding) -> None:
        self._members.setdefault(cls, {}).setdefault(attribute, []).append(binding)


def _at_line(bindings: list[_Binding], line: int) -> _Binding:
    """The binding in force on a line: the last one before it, else (a loop's later binding,
    an enclosing function's) the first."""
    before = [binding for binding in bindings if binding.line <= line]
    return before[-1] if before else bindings[0]


def _parameters(parameters: Node, line: int) -> list[tuple[str, _Binding]]:
    """Each parameter's name with its binding (``self`` and ``cls`` left out: the graph
    resolves them through the enclosing class)."""
    found: list[tuple[str, _Binding]] = []
    for parameter in parameters.named_children:
        annotation = parameter.child_by_field_name("type")
        named = parameter.child_by_field_name("name") or (parameter.named_children[0] if parameter.named_children else parameter)
        splat = parameter.type if parameter.type.endswith("splat_pattern") else named.type  # `*args` or `*args: T`
        if splat == "list_splat_pattern":
            binding = _Binding(line, "splat", annotation)
        elif splat == "dictionary_splat_pattern":
            binding = _Binding(line, _GIVEN, None, Held("dict"))
        elif annotation is not None:
            binding = _Binding(line, "annotation", annotation)
        else:
            binding = _Binding(line, _GIVEN, None, _NOTHING_SAID)
        names = _names_in(named)
        if len(names) == 1 and names[0] not in ("self", "cls"):
            found.append((names[0], binding))
    return found


def _names_in(node: Node) -> list[str]:
    """The identifiers a binding target (a name, a tuple or list pattern, a splat) binds."""
    if node.type == "identifier":
        return [node_text(node)]
    if node.type in ("attribute", "subscript"):
        return []  # a target's attribute or item binds no name
    if node.type in ("default_parameter", "typed_default_parameter"):
        named = node.child_by_field_name("name")  # a lambda's parameter, not the names in its default
        return _names_in(named) if named is not None else []
    return [name for child in node.named_children for name in _names_in(child)]


def _first_argument(call: Node) -> Node | None:
    arguments = call.child_by_field_name("arguments")
    return arguments.named_children[0] if arguments is not None and arguments.named_children else None

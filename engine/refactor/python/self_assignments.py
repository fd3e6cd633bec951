"""Where a subclass declares an inherited attribute again by assigning it on ``self``.

``class UndefinedName(Message)`` with ``self.message_args = (name,)`` in ``__init__`` has an
attribute of its own for a type checker, not the base's: a rename of ``Message.message_args``
asked of the server at the base's declaration leaves ``m.message_args`` alone wherever ``m`` is
known to be an ``UndefinedName`` (pyflakes' checker and tests, 16 failures). A rename target at
each such assignment makes the server rename those uses too. Syntax-tree symbols hold no
attributes set in methods, so the graph's hierarchy cannot list these declarations.
"""

from __future__ import annotations

import ast
import functools

from engine.positions import Position, split_lines


def first_assignment_on_self(text: str, class_path: list[str], name: str) -> Position | None:
    """Where a method of the class at ``class_path`` (nested class names) first assigns
    ``self.NAME`` (its first parameter, whatever it is called); None when none does."""
    assigned: list[ast.Attribute] = []
    for node, receiver in _method_nodes(text, class_path):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        assigned += [t for t in targets if isinstance(t, ast.Attribute) and t.attr == name
                     and isinstance(t.value, ast.Name) and t.value.id == receiver]
    if not assigned:
        return None
    first = min(assigned, key=lambda t: (t.end_lineno or t.lineno, t.end_col_offset or 0))
    # Lines as the parser and LSP count them: str.splitlines also breaks at a form feed.
    line = split_lines(text)[(first.end_lineno or first.lineno) - 1]
    # ast columns count UTF-8 bytes; positions count code points. The name ends the attribute.
    end = len(line.encode("utf-8")[: first.end_col_offset].decode("utf-8", errors="replace"))
    return Position((first.end_lineno or first.lineno) - 1, end - len(name))


def uses_on_self(text: str, class_path: list[str], name: str) -> int:
    """How many times the methods of the class at ``class_path`` read or write ``self.NAME``."""
    return sum(1 for node, receiver in _method_nodes(text, class_path)
               if isinstance(node, ast.Attribute) and node.attr == name
               and isinstance(node.value, ast.Name) and node.value.id == receiver)


def _method_nodes(text: str, class_path: list[str]) -> list[tuple[ast.AST, str]]:
    """Each node of the class's own methods with the name its method gives ``self``; none when
    the file does not parse or holds no such class."""
    tree = _parsed(text)
    if tree is None:
        return []
    body: list[ast.stmt] = tree.body
    for class_name in class_path:
        found = next((s for s in body if isinstance(s, ast.ClassDef) and s.name == class_name), None)
        if found is None:
            return []
        body = found.body
    nodes: list[tuple[ast.AST, str]] = []
    for method in body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args or _is_static(method):
            continue
        receiver = method.args.args[0].arg
        nodes += [(node, receiver) for node in _own_statements(method)]
    return nodes


def _is_static(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A static method's first parameter is no instance or class."""
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)


def _own_statements(method: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
    """The method's nodes, not those of a function, lambda or class nested in it: there
    ``self`` may be another object."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    found: list[ast.AST] = []
    pending: list[ast.AST] = [statement for statement in method.body if not isinstance(statement, nested)]
    while pending:
        node = pending.pop()
        found.append(node)
        pending += [child for child in ast.iter_child_nodes(node) if not isinstance(child, nested)]
    return found


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> ast.Module | None:
    """Parsed once for all the subclasses one file holds (pyflakes' messages.py: about thirty)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None

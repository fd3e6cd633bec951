"""Keyword arguments at call sites when a Python parameter is renamed.

A server or jedi renames the keyword where it can resolve the call; through an
unannotated receiver (``tlist.token_next(idx, skip_ws=True)``) neither can. The calls are
then found by name: every call of a function or method with the same name that passes
the old keyword. That is safe only while no other function of that name takes a
parameter of the old name; when one does, nothing is added and the calls are reported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import PositionProvider

from engine.edits.model import FileChange, WorkspaceEdit
from engine.graph.queries import GraphQueries
from engine.edits.text import covers
from engine.answers import TextEdit
from engine.positions import Position, Range, split_lines
from engine.refactor.python.cst_edits import parse
from engine.refactor.python.pytrees import code_points, parse_python, with_spans
from engine.symbols import SymbolKind
from engine.workspace import Workspace

_FUNCTION_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CONSTRUCTOR})


@dataclass(frozen=True)
class Parameter:
    function: str
    """The function's own name (``token_next``); ``__init__`` parameters are passed to the class."""
    name: str
    file: str
    line: int
    """1-based line of the function's ``def``."""


def parameter_at(workspace: Workspace, file: str, position: Position) -> Parameter | None:
    """The parameter whose name is at ``position`` (0-based line, code-point column), if any."""
    tree = cst.MetadataWrapper(parse(workspace.read(file)), unsafe_skip_copy=True)
    positions = tree.resolve(PositionProvider)
    found: list[Parameter] = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            for param in [*node.params.params, *node.params.kwonly_params, *node.params.posonly_params]:
                where = positions[param.name]
                if where.start.line == position.line + 1 and where.start.column <= position.column < where.end.column:
                    found.append(Parameter(node.name.value, param.name.value, file, positions[node].start.line))

    tree.module.visit(Find())
    return found[0] if found else None


def keyword_call_sites(
    workspace: Workspace, queries: GraphQueries, parameter: Parameter, new: str, already: WorkspaceEdit
) -> tuple[WorkspaceEdit, list[str]]:
    """``already`` plus the ``old=`` keywords of calls found by name, and warnings."""
    callers = _called_names(workspace, queries, parameter)
    called = " or ".join(callers)
    family = _family(queries, parameter)
    rivals = _rivals(workspace, queries, parameter, family)
    already, family_notes = _with_family_signatures(workspace, parameter, family, new, already)
    missed: list[str] = []
    # Addressed at an @overload signature, the implementation's body uses the parameter too: its
    # own uses follow, or the module fails at import (NameError at the first call).
    for member in [parameter, *(Parameter(parameter.function, parameter.name, path, line) for path, line in family
                                if path.endswith(".py"))]:
        already, left = _with_uses_in_its_function(workspace, member, new, already)
        missed += left
    family_notes = [*missed, *family_notes]
    keyword = re.compile(rf"\b{re.escape(parameter.name)}\s*=")
    edited = {op.path: op for op in already.operations if isinstance(op, FileChange)}
    sites: dict[str, list[TextEdit]] = {}
    for path in sorted(queries.project.facts):
        if not path.endswith(".py"):
            continue
        text = workspace.read(path).text
        if not keyword.search(text) or not any(name in text for name in callers):
            continue
        # `from pkg.mod import greet as direct`: the file calls it by its alias too.
        names = [*callers, *_import_aliases(text, callers)]
        for span in [span for name in names for span in [*_keywords_in_calls(workspace, path, name, parameter.name),
                                                         *_keywords_in_doctests(text, name, parameter.name)]]:
            known = edited.get(path)
            if known is not None and any(covers(e, span.start) for e in known.edits):
                continue  # the rename already changed it
            sites.setdefault(path, []).append(TextEdit(span, new))
    if not sites:
        return already, family_notes
    places = ", ".join(f"{path}:{edit.range.start.line + 1}" for path, edits in sites.items() for edit in edits)
    if rivals:
        return already, [*family_notes, 
            f"calls of {called}(…, {parameter.name}=…) the rename could not resolve were left as they are, because "
            f"{', '.join(rivals)} also take {parameter.name}: {places}"
        ]
    note = f"keyword {parameter.name}= renamed at calls of {called} found by name (no other {called} takes it): {places}"
    return with_spans(already, lambda path: workspace.read(path).sha256, sites), [*family_notes, note]


def _import_aliases(text: str, names: list[str]) -> list[str]:
    """The other names a module imports any of ``names`` under (``from m import greet as direct``)."""
    if " as " not in text:
        return []
    tree = parse_python(text)
    return sorted({alias.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
                   if alias.name in names and alias.asname and alias.asname not in names}) if tree else []


def _family(queries: GraphQueries, parameter: Parameter) -> list[tuple[str, int]]:
    """(file, def line) of the other signatures of the same function: its ``@overload`` stack in
    its own file, and its declarations in the stub twin (``mod.pyi`` beside ``mod.py``, or the
    reverse). They are one function: their parameter is the same parameter."""
    own = queries.project.facts.get(parameter.file)
    symbol = next((s for s in own.symbols if s.kind in _FUNCTION_KINDS and s.name_line == parameter.line), None) if own else None
    if symbol is None:
        return []
    base = _without_index(symbol.name_path)
    twin = parameter.file[:-1] if parameter.file.endswith(".pyi") else parameter.file + "i"
    found = []
    for path in (parameter.file, twin):
        facts = queries.project.facts.get(path)
        for other in facts.symbols if facts else ():
            if other.kind in _FUNCTION_KINDS and _without_index(other.name_path) == base and (path, other.name_line) != (parameter.file, parameter.line):
                found.append((path, other.name_line))
    return found


def _without_index(name_path: str) -> str:
    return re.sub(r"\[\d+\]", "", name_path)


def _with_family_signatures(
    workspace: Workspace, parameter: Parameter, family: list[tuple[str, int]], new: str, already: WorkspaceEdit
) -> tuple[WorkspaceEdit, list[str]]:
    """``already`` plus the parameter's name in each family signature that does not have it renamed."""
    edited = {op.path: op for op in already.operations if isinstance(op, FileChange)}
    added: dict[str, list[TextEdit]] = {}
    for path, line in family:
        span = _parameter_in_def(workspace, path, line, parameter.name)
        known = edited.get(path)
        if span is None or (known is not None and any(covers(e, span.start) for e in known.edits)):
            continue
        added.setdefault(path, []).append(TextEdit(span, new))
    if not added:
        return already, []
    places = ", ".join(f"{path}:{e.range.start.line + 1}" for path, edits in added.items() for e in edits)
    return with_spans(already, lambda path: workspace.read(path).sha256, added), [
        f"the same parameter renamed in the function's other signatures (overloads, stub): {places}"]


def _with_uses_in_its_function(workspace: Workspace, parameter: Parameter, new: str, already: WorkspaceEdit) -> tuple[WorkspaceEdit, list[str]]:
    """``already`` plus the parameter's uses in its own function that it left: jedi's rename
    skips ``del name`` (humanize's precisedelta ends with ``del minimum_unit``: 84 red tests).
    A nested function, lambda or comprehension that binds the name itself is another variable."""
    text = workspace.read(parameter.file).text
    tree = parse_python(text)
    function = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.lineno <= parameter.line <= (n.body[0].lineno if n.body else n.lineno)
                     and any(a.arg == parameter.name for a in [*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs])), None) if tree else None
    if function is None:
        return already, []
    lines = text.splitlines()
    known = next((op for op in already.operations if isinstance(op, FileChange) and op.path == parameter.file), None)
    spans = []
    for node in _own_names(function, parameter.name):
        start = Position(node.lineno - 1, code_points(lines[node.lineno - 1], node.col_offset))
        if known is None or not any(covers(e, start) for e in known.edits):
            spans.append(TextEdit(Range(start, Position(start.line, start.column + len(parameter.name))), new))
    if not spans:
        return already, []
    places = ", ".join(f"{parameter.file}:{span.range.start.line + 1}" for span in spans)
    return with_spans(already, lambda path: workspace.read(path).sha256, {parameter.file: spans}), [
        f"uses of parameter {parameter.name} in its function that the rename had left, renamed: {places}"]


def _own_names(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> list[ast.Name]:
    """``name`` as a bare name in the function's body, and in nested scopes that do not bind it."""
    found: list[ast.Name] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and _binds_own(node, name):
            continue  # its own variable of that name
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and any(
                isinstance(t, ast.Name) and t.id == name for g in node.generators for t in ast.walk(g.target)):
            continue
        if isinstance(node, ast.Name) and node.id == name:
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _binds_own(scope: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, name: str) -> bool:
    """Whether a nested function has a variable ``name`` of its own (a parameter, or an assignment
    not declared ``nonlocal``)."""
    arguments = scope.args
    if any(a.arg == name for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                   *(a for a in (arguments.vararg, arguments.kwarg) if a is not None)]):
        return True
    if isinstance(scope, ast.Lambda):
        return False
    nodes = list(ast.walk(scope))
    declared = {n for node in nodes if isinstance(node, (ast.Nonlocal, ast.Global)) for n in node.names}
    return name not in declared and any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in nodes)


def _parameter_in_def(workspace: Workspace, path: str, line: int, name: str) -> Range | None:
    """Where parameter ``name`` of the ``def`` on 1-based ``line`` is spelled."""
    wrapper = cst.MetadataWrapper(parse(workspace.read(path)), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    found: list[Range] = []

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if positions[node.name].start.line != line:
                return
            params = node.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if param.name.value == name:
                    where = positions[param.name]
                    found.append(Range(Position(where.start.line - 1, where.start.column), Position(where.end.line - 1, where.end.column)))

    wrapper.module.visit(Find())
    return found[0] if found else None


def _called_names(workspace: Workspace, queries: GraphQueries, parameter: Parameter) -> list[str]:
    """What call sites write: the class for an ``__init__`` parameter; for a ``__call__``
    parameter, the module-level names bound to an instance of its class (pluggy's
    ``hookimpl = HookimplMarker("x")``, called as ``@hookimpl(specname=...)``); else the function."""
    if parameter.function not in ("__init__", "__call__"):
        return [parameter.function]
    facts = queries.project.facts.get(parameter.file)
    owner = next((s.parent for s in facts.symbols if s.kind in _FUNCTION_KINDS and s.name_line == parameter.line), None) if facts else None
    cls = (owner or parameter.function).split("/")[-1].split("[")[0]
    if parameter.function == "__init__" or owner is None:
        return [cls]
    instance = re.compile(rf"^(\w+)\s*(?::[^=]*)?=\s*(?:[\w.]+\.)?{re.escape(cls)}\s*\(", re.MULTILINE)
    names = {found.group(1) for path in queries.project.facts if path.endswith(".py")
             if cls in (text := workspace.read(path).text) for found in instance.finditer(text)}
    return sorted(names) or [parameter.function]


def _rivals(workspace: Workspace, queries: GraphQueries, parameter: Parameter, family: list[tuple[str, int]]) -> list[str]:
    """Other functions with the same name that take a parameter of the same name (the
    function's own overloads and stub declarations are not others)."""
    found = []
    for path, facts in queries.project.facts.items():
        for symbol in facts.symbols:
            if symbol.name != parameter.function or symbol.kind not in _FUNCTION_KINDS:
                continue
            if (path, symbol.name_line) in {(parameter.file, parameter.line), *family}:
                continue
            lines = split_lines(workspace.read(path).text)
            signature = " ".join(lines[symbol.name_line - 1: symbol.name_line + 15])
            head = signature.split("):", 1)[0].split(") ->", 1)[0]
            if re.search(rf"[(,*\s]{re.escape(parameter.name)}\s*[:=,)]", head + ")"):
                found.append(f"{path}:{symbol.name_path}")
    return found


_DOCTEST_LINE = re.compile(r"^\s*(?:>>>|\.\.\.) ")


def _keywords_in_doctests(text: str, called: str, keyword: str) -> list[Range]:
    """``called(…, keyword=…)`` on doctest example lines (``>>> precisedelta(d, minimum_unit="minutes")``
    in the function's own docstring): examples are calls too, only inside strings, where no
    parser of the code sees them. A call's arguments are taken up to its closing parenthesis
    on the same line."""
    found: list[Range] = []
    call = re.compile(rf"\b{re.escape(called)}\s*\(")
    argument = re.compile(rf"(?<![\w.]){re.escape(keyword)}\s*=(?!=)")
    for number, line in enumerate(split_lines(text)):
        if not _DOCTEST_LINE.match(line):
            continue
        for opened in call.finditer(line):
            end = _closing(line, opened.end())
            for match in argument.finditer(line, opened.end(), end):
                found.append(Range(Position(number, match.start()), Position(number, match.start() + len(keyword))))
    return found


def _closing(line: str, start: int) -> int:
    """Where the parenthesis opened just before ``start`` closes (the line's end if it does not)."""
    depth = 1
    for index in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[index], 0)
        if depth == 0:
            return index
    return len(line)


def _keywords_in_calls(workspace: Workspace, path: str, called: str, keyword: str) -> list[Range]:
    wrapper = cst.MetadataWrapper(parse(workspace.read(path)), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    found: list[Range] = []

    class Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            function = node.func
            name = function.attr.value if isinstance(function, cst.Attribute) else getattr(function, "value", None)
            if name != called:
                return
            for argument in node.args:
                if argument.keyword is not None and argument.keyword.value == keyword:
                    where = positions[argument.keyword]
                    found.append(Range(Position(where.start.line - 1, where.start.column),
                                       Position(where.end.line - 1, where.end.column)))

    wrapper.module.visit(Find())
    return found

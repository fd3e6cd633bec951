"""What a Python rename must also see beyond what a server or jedi resolves.

- Code references the server or jedi left behind (a server that does not know a ``src/``
  layout misses ``pkg.Name`` in the tests), found by name and kept only where the project
  graph resolves the expression to the symbol.
- String annotations that name the symbol (``-> "Order"``), resolved like code.
- Attribute names passed as strings next to the object that owns them:
  ``monkeypatch.setattr(module, "NAME", …)``, ``mock.patch.object(Class, "method")``,
  ``getattr(module, "NAME")``. When the object resolves (through the graph's import
  bindings) to the renamed symbol's module or class, the string is the symbol's name and
  is renamed with it.
- Mirror namespaces (a ``curried/`` package that re-binds the public functions of the main
  one): another module that binds the old name and shares most public names with the
  renamed symbol's module is reported, since conventions keep them in step.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.graph.build import symbol_node
from engine.graph.queries import GraphQueries
from engine.edits.text import covers
from engine.navigation import TextEdit
from engine.positions import Position, Range, split_lines
from engine.refactor.corpus import Corpus
from engine.symbols import Symbol
from engine.workspace import Workspace

_CALLS = r"(?:setattr|getattr|hasattr|delattr|patch\.object)\(\s*([\w.]+)\s*,\s*([\"']){name}\2"
#: A string annotation naming the symbol: ``-> "Order"``, ``order: "Order"`` (parameters, variables).
_ANNOTATION = r"(?:->|^\s*\w+\s*:|[(,]\s*\w+\s*:)\s*([\"'])((?:[\w]+\.)*{name})\1"


def with_attribute_strings(
    workspace: Workspace, queries: GraphQueries, symbol: Symbol, new: str, edit: WorkspaceEdit, corpus: Corpus | None = None
) -> tuple[WorkspaceEdit, list[str]]:
    target = symbol_node(symbol.file, symbol.name_path)
    pattern = re.compile(_CALLS.format(name=re.escape(symbol.name)))
    annotation = re.compile(_ANNOTATION.format(name=re.escape(symbol.name)))
    edited = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
    operations = list(edit.operations)
    renamed: list[str] = []
    found_in_code: list[str] = []
    for path in sorted((corpus or Corpus(workspace, list(queries.project.facts))).mentioning(symbol.name, "python")):
        if not path.endswith(".py"):
            continue
        source = workspace.read(path)
        spans = []
        for number, line in enumerate(split_lines(source.text)):
            for match in annotation.finditer(line):
                # The annotation's text is an expression; it names the symbol when it resolves to it.
                if queries.project.resolve_expression(path, match.group(2), number + 1) != target:
                    continue
                end = match.end(2)
                span = Range(Position(number, end - len(symbol.name)), Position(number, end))
                known = edited.get(path)
                if known is None or not any(covers(e, span.start) for e in known.edits):
                    spans.append(TextEdit(span, new))
                    renamed.append(f"{path}:{number + 1}")
            for match in pattern.finditer(line):
                # `owner.name` resolves to the symbol exactly when the owner is its module or class.
                if queries.project.resolve_expression(path, f"{match.group(1)}.{symbol.name}", number + 1) != target:
                    continue
                end = match.end() - 1  # before the closing quote
                span = Range(Position(number, end - len(symbol.name)), Position(number, end))
                known = edited.get(path)
                if known is None or not any(e.range.start.line <= number < max(e.range.end.line, e.range.start.line + 1) for e in known.edits):
                    spans.append(TextEdit(span, new))
                    renamed.append(f"{path}:{number + 1}")
        known = edited.get(path)
        covered = (lambda span: any(covers(e, span.start) for e in known.edits)) if known is not None else (lambda span: False)
        for span in _code_references(source.text, symbol.name, covered,
                                     lambda expr, line: queries.project.resolve_expression(path, expr, line) == target):
            if span not in [s.range for s in spans]:
                spans.append(TextEdit(span, new))
                found_in_code.append(f"{path}:{span.start.line + 1}")
        if not spans:
            continue
        known = edited.get(path)
        if known is None:
            operations.append(FileChange(path, tuple(spans), source.sha256))
        else:
            operations[operations.index(known)] = FileChange(path, known.edits + tuple(spans), known.expected_sha256)
    notes = [f"names in strings renamed with it (annotations; setattr/getattr/patch.object on its owner): {', '.join(renamed)}"] if renamed else []
    if found_in_code:
        notes.append(f"code references the rename had left, resolved to {symbol.address} by the project graph and renamed: {', '.join(found_in_code)}")
    return WorkspaceEdit(tuple(operations), edit.annotations), notes


def _code_references(
    text: str, name: str, covered: Callable[[Range], bool], resolves: Callable[[str, int], bool]
) -> list[Range]:
    """Where ``name`` is read in code (``name``, ``module.name``, ``pkg.mod.name``), not yet
    covered by the edit, and the project graph resolves the expression to the symbol.
    Definitions, rebindings and keyword arguments (a name followed by ``=``) are not
    references; neither are strings and comments (checked with the tokenizer, and only
    for files that have a candidate left, since tokenizing is the costly part)."""
    pattern = re.compile(rf"(?<![\w.])((?:[A-Za-z_]\w*\.)*){re.escape(name)}\b(?!\s*=[^=])")
    candidates = []
    for number, line in enumerate(split_lines(text)):
        for match in pattern.finditer(line):
            start = match.start() + len(match.group(1))
            span = Range(Position(number, start), Position(number, start + len(name)))
            if covered(span) or re.search(r"\b(def|class|global|nonlocal)\s+$", line[: match.start()]):
                continue
            if resolves(match.group(1) + name, number + 1):
                candidates.append(span)
    if not candidates:
        return []
    try:
        code = {(t.start[0] - 1, t.start[1]) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type == tokenize.NAME and t.string == name}
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    return [span for span in candidates if (span.start.line, span.start.column) in code]


def mirror_warnings(queries: GraphQueries, symbol: Symbol) -> list[str]:
    """Modules that bind the old name and mirror the defining module's public names."""
    if len(symbol.path) != 1:
        return []
    facts = queries.project.facts
    home = _public_names(queries, symbol.file)
    if len(home) < 3:
        return []
    found = []
    for path in sorted(facts):
        if path == symbol.file or not path.endswith(".py"):
            continue
        names = _public_names(queries, path)
        if symbol.name not in names:
            continue
        if queries.project.resolve_expression(path, symbol.name, 1) == symbol_node(symbol.file, symbol.name_path):
            continue  # it imports the symbol itself, which the rename updates
        shared = len(home & names)
        if shared >= max(3, len(home) // 2):
            found.append(f"{path} binds its own {symbol.name} and mirrors {shared} public names of {symbol.file}: rename it there too if they are kept in step")
    return found


def _public_names(queries: GraphQueries, path: str) -> set[str]:
    facts = queries.project.facts[path]
    names = {s.name for s in facts.symbols if s.parent is None and not s.name.startswith("_")}
    for fact in facts.imports:
        if fact.scope is None:
            names |= {alias or name for name, alias in fact.names if not (alias or name).startswith("_")}
    return names

"""Doctests are code: a rename edits ``>>>`` examples, and reports documentation that names the symbol.

A server renames code, not strings, so ``>>> old(3)`` in a docstring stayed behind, and a
project that runs ``--doctest-modules`` (or collects ``.md``/``.rst`` files with
``--doctest-glob``) went red. Edited here:

- example lines (``>>>`` and ``...``) in the docstrings of the defining module and of every
  Python file the rename already changes (there the name means the symbol), and
- example lines of the text files the project's pytest configuration collects as doctests
  (``--doctest-glob`` patterns, and pytest's default ``test*.txt``),

where the old name stands alone and is not an attribute of something else (``x.old``).
Documentation that only mentions the symbol, of any kind (mkdocstrings ``::: pkg.mod.old``, Sphinx
roles ``:meth:`Class.old```, ``.. automethod::``, code spans, calls and fenced blocks), is counted and
its first lines listed; it is edited only when asked (``include_docs``), and then only those
mentions, never a bare word of prose: prose is the author's to change.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re
import shlex
import tomllib
from typing import Callable

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.text import Coverage
from engine.errors import GraftError
from engine.answers import TextEdit
from engine.positions import Position, Range
from engine.refactor.corpus import Corpus
from engine.refactor.python.strings_and_comments import CodeMap
from engine.refactor.python.pytrees import parse_python

_EXAMPLE = re.compile(r"^[ \t]*(?:>>>|\.\.\.)(?: |$)", re.M)
_DOC_SUFFIXES = (".md", ".rst", ".txt")
_DEFAULT_DOCTEST_GLOB = "test*.txt"


class DoctestPass:
    """Built while the server computes its rename (it only reads files); :meth:`add` then keeps
    the examples of the files the rename changes."""

    def __init__(self, corpus: Corpus, defining_file: str, old: str, new: str, declared_at: int | None = None,
                 include_docs: bool = False, dotted: str | None = None) -> None:
        """``declared_at``: the 0-based line of the symbol's name; for a class member, the examples
        in its class (its own docstrings and its methods') also have ``x.old`` renamed: there
        ``p.prepend(10)`` is the member (more-itertools' peekable). ``include_docs``: the
        documentation mentions are edited too, not only listed; ``dotted``: the symbol's dotted
        path, whose module components are not the symbol where a dotted name in the documentation
        spells them (``pkg.greet.Greeter.greet``, a method named as its module)."""
        self.corpus, self.defining_file, self.old, self.include_docs = corpus, defining_file, old, include_docs
        mention = re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w)")
        # A class whose repr is built from its own name prints the new name in expected output.
        shown = re.compile(rf"(?<![\w.]){re.escape(old)}(?=\()") if _repr_names_the_class(corpus, defining_file, old) else None
        self._python: dict[str, list[TextEdit]] = {}
        owner = _owner_class(corpus.source(defining_file).text, old, declared_at) if declared_at is not None else None
        for path in corpus.mentioning(old, "python"):
            source = corpus.source(path)
            code = corpus.code_map(path)
            if owner is None:
                edits = _example_edits(source.text, mention, new, lambda offset: not code.is_code(offset), shown)
            elif path == defining_file:
                # A member is only ever reached as an attribute: a bare name in an example is another thing.
                edits = _member_example_edits(source.text, old, new, owner, code)
            else:
                edits = []
            if edits:
                self._python[path] = edits
        files = corpus.workspace_files()
        # A member's name alone in a text file's example is not the member.
        collected = _collected_text_files(corpus, files) if owner is None else []
        self._text: list[FileChange] = []
        for path in collected:
            try:
                source = corpus.workspace.read(path)
            except GraftError:
                continue
            edits = _example_edits(source.text, mention, new, lambda offset: True)
            if edits:
                self._text.append(FileChange(path, tuple(edits), source.sha256))
        self._documentation = _documentation_mentions(corpus, files, old, set(collected), dotted)
        self._mentions = [f"{change.path}:{line + 1}" for change in self._documentation
                          for line in dict.fromkeys(edit.range.start.line for edit in change.edits)]
        if include_docs:
            self._documentation = [FileChange(change.path, tuple(TextEdit(e.range, new) for e in change.edits), change.expected_sha256)
                                   for change in self._documentation]

    def add(self, edit: WorkspaceEdit) -> tuple[list[FileChange], list[str]]:
        """The example edits ``edit`` misses (to merge into it), and notes."""
        changes = {op.path: op for op in edit.operations if isinstance(op, FileChange)}
        added = list(self._text)
        for path, edits in self._python.items():
            if path != self.defining_file and path not in changes:
                continue  # the name may mean something else there
            coverage = Coverage(changes[path].edits) if path in changes else None
            kept = [e for e in edits if coverage is None or not coverage.covers(e.range.start)]
            if kept:
                added.append(FileChange(path, tuple(kept), self.corpus.source(path).sha256))
        notes = []
        if added:
            notes.append("doctest examples renamed with it: " + ", ".join(f"{c.path}:{c.edits[0].range.start.line + 1}" for c in added))
        if self._mentions:
            notes.append(documentation_note(self.old, self._mentions, edited=self.include_docs))
        if self.include_docs:
            added += self._documentation
        return added, notes


def _example_edits(
    text: str, mention: re.Pattern[str], new: str, accept: Callable[[int], bool], shown: re.Pattern[str] | None = None,
) -> list[TextEdit]:
    """Edits of the old name on example lines (``>>>``/``...``) whose offsets ``accept`` takes,
    and, with ``shown``, of the class's repr (``Old([...])``) on the expected-output lines
    that follow an example."""
    edits: list[TextEdit] = []
    if not _has_example_line(text):
        return edits  # most files a rename touches: decided without walking their lines
    lines = text.split("\n")
    offset = 0
    in_output = False
    for number, line in enumerate(lines):
        prompt = _EXAMPLE.match(line)
        if prompt is not None and accept(offset + prompt.start()):
            for found in mention.finditer(line, prompt.end()):
                edits.append(TextEdit(Range(Position(number, found.start()), Position(number, found.end())), new))
            in_output = True
        elif prompt is None and in_output and line.strip() and shown is not None:
            for found in shown.finditer(line):
                edits.append(TextEdit(Range(Position(number, found.start()), Position(number, found.end())), new))
        else:
            in_output = in_output and bool(line.strip()) and prompt is None
        offset += len(line) + 1
    return edits


def _has_example_line(text: str) -> bool:
    """Whether any line matches :data:`_EXAMPLE`, found from each ``>>>`` or ``...``: the
    pattern itself, tried at every offset, cost more than the walk it was to save."""
    for prompt in (">>>", "..."):
        found = text.find(prompt)
        while found >= 0:
            line_start = text.rfind("\n", 0, found) + 1
            if text[found + 3:found + 4] in ("", " ", "\n") and not text[line_start:found].strip(" \t"):
                return True
            found = text.find(prompt, found + 1)
    return False


def _owner_class(text: str, old: str, declared_at: int) -> range | None:
    """The 0-based lines of the class that declares ``old`` at ``declared_at`` (None when it is no member)."""
    tree = parse_python(text)
    owner = next((node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and any(
        _declares(statement, old, declared_at + 1) for statement in node.body)), None) if tree else None
    return range(owner.lineno - 1, owner.end_lineno or owner.lineno) if owner is not None else None


def _member_example_edits(text: str, old: str, new: str, inside: range, code: CodeMap) -> list[TextEdit]:
    """``x.old`` on the example lines inside the class (its docstrings and its methods')."""
    attribute = re.compile(rf"(?<=\.){re.escape(old)}(?!\w)")
    return [edit for edit in _example_edits(text, attribute, new, lambda offset: not code.is_code(offset))
            if edit.range.start.line in inside]


def _declares(statement: ast.stmt, name: str, line: int) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return statement.name == name and statement.lineno <= line <= (statement.body[0].lineno if statement.body else line)
    targets = statement.targets if isinstance(statement, ast.Assign) else (
        [statement.target] if isinstance(statement, ast.AnnAssign) else [])
    return any(isinstance(t, ast.Name) and t.id == name and t.lineno == line for t in targets)


_NAME_OF_CLASS = re.compile(r"__class__\.__(?:qual)?name__|type\(self\)\.__(?:qual)?name__")


def _repr_names_the_class(corpus: Corpus, defining_file: str, old: str) -> bool:
    """Whether ``old`` is a top-level class of the defining file whose ``__repr__`` (its own, or a
    base's in the same file) prints the class's own name (``self.__class__.__name__``)."""
    try:
        tree = parse_python(corpus.source(defining_file).text)
    except GraftError:
        return False
    if tree is None:
        return False
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    pending, seen = [old], set()
    while pending:
        name = pending.pop()
        cls = classes.get(name)
        if cls is None or name in seen:
            continue
        seen.add(name)
        for statement in cls.body:
            if isinstance(statement, ast.FunctionDef) and statement.name == "__repr__":
                return bool(_NAME_OF_CLASS.search(ast.unparse(statement)))
        pending += [base.id for base in cls.bases if isinstance(base, ast.Name)]
    return False


def _collected_text_files(corpus: Corpus, files: list[str]) -> list[str]:
    """Text files pytest collects as doctests under the project's configuration."""
    patterns = _doctest_globs(corpus)
    return [p for p in files if p.endswith(_DOC_SUFFIXES) and any(fnmatch.fnmatch(p.rsplit("/", 1)[-1], g) for g in patterns)]


def _doctest_globs(corpus: Corpus) -> list[str]:
    """``--doctest-glob`` values from pyproject.toml, pytest.ini, tox.ini or setup.cfg (pytest's default if none)."""
    root = corpus.workspace.root
    options: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("pytest", {}).get("ini_options", {})
            addopts = table.get("addopts", "")
            options += shlex.split(addopts) if isinstance(addopts, str) else [str(a) for a in addopts]
        except (OSError, ValueError):
            pass
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        path = root / name
        if path.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read(path, encoding="utf-8")
                options += shlex.split(parser.get(section, "addopts", fallback=""))
            except (configparser.Error, ValueError, OSError):
                continue
    globs = [o.split("=", 1)[1] for o in options if o.startswith("--doctest-glob=")]
    globs += [options[i + 1] for i, o in enumerate(options[:-1]) if o == "--doctest-glob"]
    return globs or [_DEFAULT_DOCTEST_GLOB]


_SHOWN = 10
"""Documentation lines listed by name; the rest are counted (a common name is in many)."""
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)")
_DIRECTIVE = re.compile(r"^[ \t]*(?:\.\.[ \t]+[\w:-]+::|:::)[ \t]+(\S+)")
_CODE_SPAN = re.compile(r"(`+)([^`\n]+?)\1")


def documentation_note(old: str, mentions: list[str], edited: bool = False) -> str:
    """One warning for every symbol kind: how many documentation lines name ``old`` as code, and the first few."""
    listed = ", ".join(mentions[:_SHOWN]) + (f" and {len(mentions) - _SHOWN} more" if len(mentions) > _SHOWN else "")
    state = "edited with it" if edited else "not edited"
    return f"{len(mentions)} line(s) of documentation that mention {old} ({state}): {listed}"


def _documentation_mentions(corpus: Corpus, files: list[str], old: str, collected: set[str],
                            dotted: str | None = None) -> list[FileChange]:
    """The ``.md``/``.rst`` lines that name ``old`` as code, whatever kind of symbol it is, each
    mention as an edit that keeps the old name (the caller says whether to rename it): in a
    directive's target (``.. automethod:: pkg.mod.Class.old``, ``::: pkg.mod.old``), in a code
    span or role (```Class().old()```, ``:meth:`Class.old```), as a call or attribute (``x.old``,
    ``old(``), or anywhere in a Markdown fenced block. A bare word in prose is not a mention:
    ``get`` or ``run`` there is English, and listing it would bury the real mentions."""
    word = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)")
    code_like = re.compile(rf"(?<=\.){re.escape(old)}(?!\w)|(?<![\w.]){re.escape(old)}(?=\()")
    qualifiers = dotted.split(".")[:-1] if dotted else []
    found = []
    for path in files:
        if not path.endswith((".md", ".rst")) or path in collected:
            continue
        try:
            source = corpus.workspace.read(path)
        except GraftError:
            continue
        if old not in source.text:
            continue
        fenced = False
        edits = []
        for number, line in enumerate(source.text.split("\n")):
            if path.endswith(".md") and _FENCE.match(line):
                fenced = not fenced
                continue
            if old in line:
                edits += [TextEdit(Range(Position(number, start), Position(number, start + len(old))), old)
                          for start in _code_mentions(line, word, code_like, fenced)
                          if not _qualifies(line, start, len(old), qualifiers)]
        if edits:
            found.append(FileChange(path, tuple(edits), source.sha256))
    return found


_DOTTED_BEFORE = re.compile(r"[\w.]*$")


def _qualifies(line: str, start: int, length: int, qualifiers: list[str]) -> bool:
    """Whether the name at ``start`` is a module or class component of the symbol's own dotted
    path spelled from its start (``greet`` in ``pkg.greet.Greeter.greet``), not the symbol."""
    if line[start + length:start + length + 1] != ".":
        return False
    spelled = _DOTTED_BEFORE.search(line, 0, start + length)
    components = spelled.group().split(".") if spelled is not None else []
    return components == qualifiers[:len(components)] and len(components) <= len(qualifiers)


def _code_mentions(line: str, word: re.Pattern[str], code_like: re.Pattern[str], fenced: bool) -> list[int]:
    """The columns where ``line`` names the symbol as code (none for a bare word of prose)."""
    if fenced:
        return [found.start() for found in word.finditer(line)]
    starts = {found.start() for found in code_like.finditer(line)}
    directive = _DIRECTIVE.match(line)
    if directive is not None:
        starts.update(found.start() for found in word.finditer(line, directive.start(1), directive.end(1)))
    for span in _CODE_SPAN.finditer(line):
        starts.update(found.start() for found in word.finditer(line, span.start(2), span.end(2)))
    return sorted(starts)

"""The check's scope narrowed to the importers that can see what an edit changed (issue 39).

The names a Python edit changes are a table; the scope over a small import graph is data; and on
a real server, a break that only a type carries to a file (a renamed method reached through a
factory's return type, by a file that never names the class) is in scope and caught, while an
importer that uses nothing the edit changed is left out and counted."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from engine.answers import TextEdit
from engine.edits.check_scope import changed_names, every_importer, narrowed, scope_of
from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.session import EditOptions
from engine.edits.verification import CheckMode
from engine.positions import Position, Range
from engine.symbols import Confidence
from tests.test_lsp_e2e import require, served_engine

_BASE = "import os\n\n\ndef f() -> int:\n    return 1\n\n\nx = f()\n\n\nclass C:\n    def m(self) -> int:\n        return x\n"


@pytest.mark.parametrize("before, after, expected", [
    (_BASE, _BASE + "\n\ndef added() -> None:\n    pass\n", {"added"}),
    # A body changed where the return type is declared: no name changes.
    (_BASE, _BASE.replace("return 1", "return 2"), set()),
    # ... where it is inferred: f, what is inferred from it (x), and what reads x outside a body (D).
    (_BASE, _BASE.replace("-> int:\n    return 1", ":\n    return 2") + "\nclass D:\n    limit = x\n", {"f", "x", "D"}),
    # A method that sets an attribute declares its type: the class changes.
    (_BASE, _BASE.replace("return x", "self.y = 1\n        return x"), {"C"}),
    (_BASE, _BASE.replace("def f() -> int", "def f(a: int = 0) -> int"), {"f", "x"}),
    # A function's body setting an attribute of anything but its own receiver declares nothing.
    (_BASE, _BASE.replace("return 1", "os.sep_seen = True\n    return 1"), set()),
    # A docstring is not an interface, even when its prose names a changed name.
    (_BASE, _BASE.replace("class C:\n", 'class C:\n    """Uses f."""\n'), set()),
    (_BASE + "\n\ndef g():\n    return 1\n", _BASE + '\n\ndef g():\n    """Calls x."""\n    return 1\n', set()),
    (_BASE, _BASE.replace("def m(", "def renamed("), {"C"}),
    (_BASE, _BASE.replace("import os", "import os.path as p"), {"os", "p"}),
    # Nothing a module binds: a comment between statements, a docstring added.
    (_BASE, _BASE.replace("\n\nx = f()", "\n# a comment\nx = f()"), set()),
    (_BASE, '"""Docs."""\n' + _BASE, set()),
    (_BASE, _BASE + "\nif True:\n    y = 1\nelse:\n    del x\n", {"y", "x"}),
    # What the module exports is no longer known from its statements: every name may have changed.
    (_BASE, _BASE + '\n__all__ = ["f"]\n', None),
    (_BASE, _BASE + "\n\ndef __getattr__(name: str) -> int:\n    return 0\n", None),
    (_BASE, _BASE + "\nfrom os.path import *\n", None),
    (_BASE, _BASE + "\ndef broken(:\n", None),
])
def test_the_names_an_edit_changes(before: str, after: str, expected: set[str] | None) -> None:
    got = changed_names("m.py", before.encode(), after.encode())
    assert got == (None if expected is None else frozenset(expected))


def test_a_file_that_is_not_python_or_is_created_or_deleted_changes_everything() -> None:
    assert changed_names("m.ts", b"a", b"b") is None
    assert changed_names("m.py", None, b"x = 1\n") is None
    assert changed_names("m.py", b"x = 1\n", None) is None


_TEXTS = {
    "a.py": "from utils import helper\n\n\ndef run():\n    return helper()\n\n\ndef count() -> int:\n    return helper()\n",
    "b.py": "import utils\n\nprint(utils.other)\n",
    "c.py": "from utils import *\n",
    "d.py": "from a import run\n\nrun()\n",
    "e.py": "import a\n\nprint(a.count())\n",
    "f.py": "from b import *\n",
}
_IMPORTS = {"utils.py": ["a.py", "b.py", "c.py"], "a.py": ["d.py", "e.py"], "b.py": ["f.py"]}


def _dependents(paths: list[str]) -> list[str]:
    return sorted({d for p in paths for d in _IMPORTS.get(p, [])})


def test_only_the_importers_that_can_see_a_changed_name_are_in_scope() -> None:
    """helper changed: a.py names it (and run, whose type is inferred from a call of it, changes
    with it: d.py names run; count declares its type, so e.py, which names only count, is out);
    c.py imports everything; b.py and f.py see nothing that changed."""
    found, beyond = narrowed({"utils.py": frozenset({"helper"})}, _dependents, _TEXTS.get, 200)
    assert (sorted(found), beyond) == (["a.py", "c.py", "d.py"], 0)


def test_a_change_to_everything_keeps_every_importer_and_the_limit_counts_the_rest() -> None:
    assert narrowed({"utils.py": None}, _dependents, _TEXTS.get, 200) == every_importer(["utils.py"], _dependents, 200)
    found, beyond = every_importer(["utils.py"], _dependents, 200)
    assert found[:3] == ["a.py", "b.py", "c.py"] and sorted(found) == ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]
    assert every_importer(["utils.py"], _dependents, 4) == (found[:4], 2)


def test_an_added_name_nobody_uses_leaves_only_the_star_importer_and_counts_the_rest() -> None:
    utils = b"def helper() -> int:\n    return 1\n"
    scope = scope_of([("utils.py", utils, utils + b"\n\ndef added() -> None:\n    pass\n")], _dependents, _TEXTS.get, 200)
    assert (scope.importers, scope.beyond, scope.not_affected) == (["c.py"], 0, 5)


def test_each_files_dependents_are_asked_once_per_scope() -> None:
    """The narrowed walk and the count of every importer ask the graph about the same files: one
    answer each is kept for the scope's reckoning (issue 44: most of a small apply's check)."""
    asked: list[tuple[str, ...]] = []

    def counting(paths: list[str]) -> list[str]:
        asked.append(tuple(paths))
        return _dependents(paths)

    utils = b"def helper() -> int:\n    return 1\n"
    scope = scope_of([("utils.py", utils, utils + b"\n\ndef added() -> None:\n    pass\n")], counting, _TEXTS.get, 200)
    assert (scope.importers, scope.beyond, scope.not_affected) == (["c.py"], 0, 5)
    assert asked and len(asked) == len(set(asked))


def test_an_edits_after_writes_out_only_the_statements_it_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement read before (by its text) is not parsed into its interface again (issue 44)."""
    import ast

    from engine.edits import check_scope

    functions = "".join(f"def f{number}(x: int) -> int:\n    return x + {number}\n\n\n" for number in range(20))
    before, after = functions.encode(), functions.replace("return x + 7", "return x - 7").encode()
    check_scope.changed_names("m.py", before, before)
    dumped: list[str] = []
    original = check_scope._Dumps.interface
    def counting(self: check_scope._Dumps, node: ast.stmt, **kwargs: bool) -> str:
        dumped.append(type(node).__name__)
        return original(self, node, **kwargs)

    monkeypatch.setattr(check_scope._Dumps, "interface", counting)
    assert check_scope.changed_names("m.py", before, after) == frozenset()  # a body behind a declared return type
    assert dumped == ["FunctionDef"]


def test_an_edit_of_one_method_reads_that_method_alone_and_its_changed_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other members of the class, and the other statements of the function's body, are written
    out from what their text was read as before (issue 44: a class written out whole for each edit
    of one of its methods was most of the scope's time)."""
    import ast

    from engine.edits import check_scope

    methods = "".join(f"    def m{number}(self) -> int:\n        return {number}\n\n" for number in range(20))
    body = "".join(f"    total = total + {number}\n" for number in range(20))
    before = f"class C:\n{methods}\n\ndef run(total):\n{body}    return total\n".encode()
    check_scope.changed_names("m.py", before, before)
    members_read: list[str] = []
    original_declares = check_scope._declares_outside
    def declares(function: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str | None) -> bool:
        members_read.append(function.name)
        return original_declares(function, receiver)

    monkeypatch.setattr(check_scope, "_declares_outside", declares)
    assert check_scope.changed_names("m.py", before, before.replace(b"return 7", b"return 70")) == frozenset()  # m7's type is declared
    assert members_read == ["m7"]

    statements_written: list[str] = []
    original_node = check_scope._Dumps._node
    def node(self: check_scope._Dumps, found: ast.AST, body: str | None = None) -> str:
        if isinstance(found, ast.stmt):
            statements_written.append(type(found).__name__)
        return original_node(self, found, body)

    monkeypatch.setattr(check_scope._Dumps, "_node", node)
    assert check_scope.changed_names("m.py", before, before.replace(b"total + 7\n", b"total - 7\n")) == frozenset({"run"})
    assert statements_written == ["Assign", "FunctionDef"]  # the one statement of run's body, then run around it


def test_statements_are_written_out_as_ast_dump_writes_their_interface() -> None:
    """_Dumps writes each statement's ``_interface`` out as ast.dump does, whether its parts were
    read before or not (each file twice: the second time every member and body statement is kept)."""
    import ast

    from engine.edits import check_scope

    sources = sorted((Path(check_scope.__file__).parents[1] / "refactor" / "python").glob("*.py"))
    assert len(sources) > 20
    for _round in range(2):
        for source in sources:
            text = source.read_text(encoding="utf-8")
            dumps = check_scope._Dumps(text)
            for node in ast.parse(text).body:
                assert dumps.interface(node) == ast.dump(check_scope._interface(node)), (source.name, node.lineno)


@pytest.mark.parametrize("before, after, expected", [
    (b"a = 1; b = 2\n", b"a = 1; b = 3\n", {"b"}),
    (b"a = 1; b = 2\n", b"b = 2; a = 1\n", set()),
    (b"@dec\ndef f(): pass\n\n\ndef g(): pass\n", b"@dec\ndef g(): pass\n\n\ndef f(): pass\n", {"f", "g"}),
    (b"@ dec\n@other\ndef f(): pass\n", b"@dec\ndef f(): pass\n", {"f"}),
    (b"x = '\xc3\xa9'; y = 1\n", b"x = '\xc3\xa9'; z = 1\n", {"y", "z"}),  # ast's columns count bytes
])
def test_statements_read_by_their_text_are_told_apart(before: bytes, after: bytes, expected: set[str]) -> None:
    for data in (before, after, before):  # each text read once already the second time round
        changed_names("m.py", data, data)
    assert changed_names("m.py", before, after) == expected


# -- on a real server ---------------------------------------------------------------------------


def _factory_project(root: Path) -> None:
    """models.C has a method; factory.make returns a C; use.py calls the method on make()'s
    result without ever naming C; other.py imports models and uses none of what changes."""
    (root / "pyproject.toml").write_text("")
    (root / "models.py").write_text("class C:\n    def total(self) -> int:\n        return 1\n\n\nLIMIT = 3\n")
    (root / "factory.py").write_text("from models import C\n\n\ndef make() -> C:\n    return C()\n")
    (root / "use.py").write_text("from factory import make\n\n\ndef go() -> int:\n    return make().total()\n")
    (root / "other.py").write_text("import models\n\nprint(models.LIMIT)\n")


def test_a_break_a_type_carries_to_a_file_that_never_names_the_class_is_in_scope_and_caught(tmp_path: Path) -> None:
    require("basedpyright")
    _factory_project(tmp_path)
    data = (tmp_path / "models.py").read_bytes()
    # The method renamed and none of its uses: what a missed reference looks like.
    edit = WorkspaceEdit((FileChange("models.py", (TextEdit(Range(Position(1, 8), Position(1, 13)), "amount"),),
                                     hashlib.sha256(data).hexdigest()),))
    with served_engine(tmp_path, "basedpyright") as engine:
        verified = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None
    assert verified.in_scope == ("models.py", "factory.py", "use.py") and verified.checked == verified.in_scope
    assert verified.not_affected == 1 and "1 more importer(s) use none of the names it changed" in verified.summary()
    assert {d.file for d in verified.new_errors} == {"use.py"}
    assert verified.label()[0] is Confidence.LOW


def test_an_added_function_checks_the_written_file_alone_and_says_why(tmp_path: Path) -> None:
    require("basedpyright")
    _factory_project(tmp_path)
    data = (tmp_path / "models.py").read_bytes()
    end = Position(len(data.decode().splitlines()), 0)
    edit = WorkspaceEdit((FileChange("models.py", (TextEdit(Range(end, end), "\n\ndef added() -> int:\n    return 2\n"),),
                                     hashlib.sha256(data).hexdigest()),))
    with served_engine(tmp_path, "basedpyright") as engine:
        verified = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None
    assert verified.in_scope == verified.checked == ("models.py",)
    assert verified.not_affected == 3 and verified.label() == (Confidence.HIGH, "")
    assert verified.to_json()["not_affected"] == 3


def test_a_module_read_once_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename back, an undo, or an apply after its preview reads the same contents again: each
    module's statements come from what was read (parsing werkzeug's six renamed files: 0.25 s)."""
    import ast

    from engine.edits import check_scope

    parsed: list[bytes] = []
    real = check_scope.python_module

    def counted(data: bytes, path: str) -> ast.Module | SyntaxError | ValueError:
        parsed.append(data)
        return real(data, path)

    monkeypatch.setattr(check_scope, "python_module", counted)
    before, after = (_BASE + f"\n\nMARK = {id(parsed)}\n").encode(), (_BASE + f"\n\nMARK = {id(parsed)}\nY = 1\n").encode()
    first = changed_names("m.py", before, after)
    again = changed_names("m.py", after, before)
    assert first == again == {"Y"}
    assert len(parsed) == 2  # each content once


def test_an_apply_parses_what_it_writes_once_for_its_scope_and_its_syntax_check(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The scope reads the after's statements and the syntax check whether it parses: one parse by
    Python's parser serves both (issue 44)."""
    import builtins

    from engine.api import Engine
    from engine.choices import SourcePreference
    from engine.workspace import Workspace

    (tmp_path / "m.py").write_text(_BASE)
    (tmp_path / "use.py").write_text("from m import f\n\nf()\n")
    data = (tmp_path / "m.py").read_bytes()
    edit = WorkspaceEdit((FileChange("m.py", (TextEdit(Range(Position(4, 11), Position(4, 12)), "2"),), hashlib.sha256(data).hexdigest()),))
    after = data.replace(b"return 1", b"return 2")
    parses: list[object] = []
    real = builtins.compile

    def counting(source: object, *args: object, **kwargs: object) -> object:
        if source in (after, after.decode()):
            parses.append(source)
        return real(source, *args, **kwargs)  # type: ignore[call-overload]

    engine = Engine(Workspace(tmp_path), source=SourcePreference.AST)
    try:
        engine.graph()
        monkeypatch.setattr(builtins, "compile", counting)
        engine.edits().apply(edit, EditOptions(allow_dirty=True))
    finally:
        monkeypatch.undo()
        engine.close()
    assert (tmp_path / "m.py").read_bytes() == after
    assert len(parses) == 1


# -- Go: a file's declarations read as their interfaces (engine.edits.go_statements) ------------

_GO = ("package a\n\nimport \"fmt\"\n\n// T is a thing.\ntype T struct{ X int }\n\nconst (\n\tA = iota\n\tB\n)\n\n"
       "var v = Make()\n\nfunc Make() T { return T{} }\n\nfunc (t T) Value() int {\n\treturn t.X\n}\n\n"
       "func helper() { fmt.Println() }\n")


@pytest.mark.parametrize(("after", "expected"), [
    (_GO.replace("return t.X", "return t.X + 1"), set()),  # a body: Go declares every type it returns
    (_GO.replace("// T is a thing.", "// T is a thing, really."), set()),
    (_GO.replace("func Make() T { return T{} }", "func Make()   T {\n\treturn T{}\n}"), set()),
    (_GO + "\nfunc Added() int { return 1 }\n", {"Added"}),
    (_GO.replace("Value() int", "Value() int64"), {"Value", "T", "Make", "v"}),  # a method changes its type's method set
    (_GO.replace("X int", "X, Y int"), {"T", "Value", "Make", "v"}),
    (_GO.replace("A = iota", "A = iota + 1"), {"A", "B"}),  # a const group's values follow each other
    (_GO.replace('import "fmt"', 'import (\n\t"fmt"\n\t"os"\n)'), set()),  # an import is the file's own
    ("//go:build linux\n\n" + _GO, None),
    (_GO.replace("package a", "package b"), None),
    (_GO + "\nfunc (\n", None),
    (_GO.replace('import "fmt"', 'import "C"\nimport "fmt"'), None),  # cgo: its preamble is a comment
])
def test_the_names_an_edit_of_a_go_file_changes(after: str, expected: set[str] | None) -> None:
    found = changed_names("a/a.go", _GO.encode(), after.encode())
    assert (set(found) if found is not None else None) == expected


def _embedding_project(root: Path) -> None:
    """a.T has a method; a.S embeds T in another file; c converts an a.S to d.Valuer, naming
    neither T nor the method; a/other.go and e use nothing of T."""
    (root / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    for folder in ("a", "c", "d", "e"):
        (root / folder).mkdir()
    (root / "a" / "a.go").write_text("package a\n\n// T is a thing.\ntype T struct{}\n\n// Value is one.\nfunc (T) Value() int {\n\treturn 1\n}\n")
    (root / "a" / "s.go").write_text("package a\n\n// S embeds T.\ntype S struct{ T }\n")
    (root / "a" / "other.go").write_text("package a\n\n// Other is two.\nfunc Other() int {\n\treturn 2\n}\n")
    (root / "d" / "d.go").write_text("package d\n\n// Valuer has a value.\ntype Valuer interface{ Value() int }\n")
    (root / "c" / "c.go").write_text('package c\n\nimport (\n\t"example.com/m/a"\n\t"example.com/m/d"\n)\n\nvar _ d.Valuer = a.S{}\n')
    (root / "e" / "e.go").write_text('package e\n\nimport "example.com/m/a"\n\n// Two is a.Other.\nvar Two = a.Other()\n')


def _go_edit(root: Path, path: str, old: str, new: str, *, on: str | None = None) -> WorkspaceEdit:
    """``old`` replaced by ``new`` on the first line holding ``on`` (else ``old``)."""
    data = (root / path).read_bytes()
    lines = data.decode().splitlines()
    line = next(n for n, row in enumerate(lines) if (on or old) in row)
    column = lines[line].index(old)
    return WorkspaceEdit((FileChange(path, (TextEdit(Range(Position(line, column), Position(line, column + len(old))), new),),
                                     hashlib.sha256(data).hexdigest()),))


def test_go_a_break_carried_by_an_embedding_type_to_a_file_that_names_neither_is_in_scope_and_caught(tmp_path: Path) -> None:
    require("gopls")
    _embedding_project(tmp_path)
    with served_engine(tmp_path, "gopls") as engine:
        verified = engine.edits().apply(_go_edit(tmp_path, "a/a.go", "Value", "Amount", on="func (T)"), EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None
    assert set(verified.in_scope) == {"a/a.go", "a/s.go", "c/c.go"} and verified.checked == verified.in_scope, verified.to_json()
    assert verified.not_affected == 2  # a/other.go and e/e.go
    assert {d.file for d in verified.new_errors} == {"c/c.go"}


def test_go_an_added_function_checks_the_written_file_alone(tmp_path: Path) -> None:
    require("gopls")
    _embedding_project(tmp_path)
    edit = _go_edit(tmp_path, "a/other.go", "// Other is two.", "// Added is three.\nfunc Added() int {\n\treturn 3\n}\n\n// Other is two.")
    with served_engine(tmp_path, "gopls") as engine:
        verified = engine.edits().apply(edit, EditOptions(check=CheckMode.FULL)).verification
    assert verified is not None
    assert verified.in_scope == verified.checked == ("a/other.go",), verified.to_json()
    assert verified.not_affected == 4 and verified.label() == (Confidence.HIGH, "")


def test_a_package_whose_files_all_see_each_other_is_read_once_per_file() -> None:
    """A Go package: every file is a dependent of every other, and each file's declarations grow
    the changed names a little (f_i returns T and is used by the next). The fixpoint is reached
    reading each file once and taking each file from the queue a bounded number of times."""
    count = 40
    paths = [f"p/f{i}.go" for i in range(count)]
    texts = {path: f"package p\n\nfunc F{i}() T {{ return F{(i + 1) % count}() }}\n" for i, path in enumerate(paths)}
    reads: list[str] = []
    asked: list[str] = []

    def read(path: str) -> str | None:
        reads.append(path)
        return texts[path]

    def dependents(of: list[str]) -> list[str]:
        asked.extend(of)
        return [p for p in paths if p not in of]

    reached, beyond = narrowed({paths[0]: frozenset({"T"})}, dependents, read, 200)
    assert sorted(reached) == sorted(paths[1:]) and beyond == 0
    assert max(reads.count(p) for p in paths) <= 2  # its words, and its declarations
    assert len(asked) <= 3 * count, len(asked)

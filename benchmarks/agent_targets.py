"""Ground truth for benchmarks/bench_agent.py: what the agent tasks act on in a project, what the
right answers are, and the checks of the project on disk after an edit.

Everything here is read from the code itself (``ast`` and ``tokenize``), never from a tool under
test: the module to work in, the function whose references, body, call site and rename are asked
for (chosen so that every Python name token spelled like it is one of its references, so a grep of
name tokens is the right answer), a class method to find by name path, and the texts the edit
tasks send (correct, badly indented, with an unclosed parenthesis).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import subprocess
import sys
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

#: Folders never part of the project: VCS, the tools' own state, caches, builds, environments.
SKIPPED_DIRS = frozenset({".git", ".graft", ".serena", "__pycache__", "build", "dist", "node_modules", ".tox",
                          ".venv", "venv", ".mypy_cache", ".pytest_cache", ".idea", ".github"})
TEST_DIRS = frozenset({"test", "tests", "testing", "docs", "doc", "examples", "benchmarks"})
INDENT = "    "
MARKERS = ("# bench-agent: edit 1", "# bench-agent: edit 2")
INSERTED = (("bench_agent_inserted_1", 1), ("bench_agent_inserted_2", 2))


@dataclass(frozen=True)
class Targets:
    """What the tasks act on, and the answers a right tool gives; paths are relative, '/'-separated."""

    import_root: str
    """The folder that goes on ``sys.path`` ('' or 'src')."""
    package: str
    module: str
    """The module the overview, body, edit and insert tasks work in."""
    module_name: str
    top_level: tuple[str, ...]
    """Names of the module's top-level functions and classes (an overview must list them all)."""
    package_modules: tuple[str, ...]
    function: str
    """A top-level function whose name tokens are all its own references (no homonyms)."""
    function_line: int
    function_source: str
    references: frozenset[tuple[str, int]]
    """(file, line) of every name token of the function except its ``def``: imports and uses."""
    call_file: str
    call_line: int
    call_column: int
    """1-based character column of the callee's name at the call site."""
    call_text: str
    enclosing: str
    """Name path of the function around the call site ('' at module level)."""
    enclosing_line: int
    method_path: str
    """``Class/method``: one of a kind in the project, to find by name path."""
    method_file: str
    method_line: int
    new_name: str
    edited: tuple[str, str]
    """The two functions of ``module`` whose bodies the two-edits task replaces."""
    bad_indent_target: str
    paren_target: str
    insert_anchor: str
    edit_texts: tuple[str, str]
    bad_indent_text: str
    paren_text: str
    insert_texts: tuple[str, str]

    def describe(self) -> list[str]:
        files = len({path for path, _line in self.references})
        return [
            f"module          {self.module} ({self.module_name}); top level: {', '.join(self.top_level)}",
            (f"function        {self.function} (line {self.function_line}): {len(self.references)} reference lines "
             f"in {files} files (name tokens, def excluded)"),
            (f"call site       {self.call_file}:{self.call_line}:{self.call_column} `{self.call_text.strip()}` "
             f"(inside {self.enclosing or 'module level'})"),
            f"name path       {self.method_path} ({self.method_file}:{self.method_line})",
            f"rename          {self.function} -> {self.new_name} -> {self.function}",
            f"two edits       {self.edited[0]}, {self.edited[1]} (a marker comment added to each body)",
            f"bad replaces    {self.bad_indent_target} (unexpected indent), {self.paren_target} (unclosed parenthesis)",
            f"insert after    {self.insert_anchor}: {INSERTED[0][0]}, then {INSERTED[1][0]} after it",
        ]


# -- reading the project ------------------------------------------------------------------


def _inserted_text(function: str, value: int) -> str:
    """One of the functions an insert task adds (INSERTED)."""
    return f"def {function}():\n{INDENT}return {value}\n"


def python_files(root: Path) -> list[Path]:
    """The project's .py files, tools' folders and environments left out, in path order."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")
                         and not (Path(folder, d) / "pyvenv.cfg").exists())
        found += [Path(folder, f) for f in sorted(files) if f.endswith(".py")]
    return found


def rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def digest(root: Path) -> dict[str, str]:
    """sha256 of every file of the project (not .git nor the tools' state folders)."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in {".git", ".graft", ".serena", "__pycache__"}]
        for name in files:
            path = Path(folder, name)
            out[rel(root, path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def name_tokens(root: Path, files: list[Path]) -> dict[str, list[tuple[str, int, int]]]:
    """NAME token -> [(file, line, 0-based column)] over the given files."""
    index: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for path in files:
        try:
            with path.open("rb") as handle:
                for token in tokenize.tokenize(handle.readline):
                    if token.type == tokenize.NAME:
                        index[token.string].append((rel(root, path), token.start[0], token.start[1]))
        except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
            continue
    return index


@dataclass
class _Facts:
    """What the whole project binds, to rule out homonyms."""

    defined: dict[str, int]
    attributes: set[str]
    bound: set[str]
    """Names bound other than by a top-level def: arguments, assignments, import aliases."""
    strings: set[str]
    importers: dict[str, set[str]]
    """name -> files with ``from X import name``."""


def _facts(trees: dict[str, ast.Module]) -> _Facts:
    facts = _Facts(defaultdict(int), set(), set(), set(), defaultdict(set))
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                facts.defined[node.name] += 1
            elif isinstance(node, ast.Attribute):
                facts.attributes.add(node.attr)
            elif isinstance(node, ast.arg):
                facts.bound.add(node.arg)
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                facts.bound.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                facts.strings.add(node.value)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.asname:
                        facts.bound.add(alias.asname)
                        facts.bound.add(alias.name.rsplit(".", 1)[-1])
                    elif isinstance(node, ast.ImportFrom):
                        facts.importers[alias.name].add(path)
    return facts


def _plain_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.decorator_list]


def _is_package_module(path: str, package: str) -> bool:
    parts = path.split("/")
    return (path.startswith(package + "/") and not any(p in TEST_DIRS for p in parts[:-1])
            and not parts[-1].startswith("test") and parts[-1] not in {"__init__.py", "__main__.py", "conftest.py"})


def _enclosing(tree: ast.Module, line: int) -> tuple[str, int]:
    """Name path and def line of the innermost function or class around ``line``."""
    best: tuple[str, int] = ("", 0)

    def visit(node: ast.AST, prefix: str) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                path = f"{prefix}/{child.name}" if prefix else child.name
                if child.lineno <= line <= (child.end_lineno or child.lineno):
                    if not isinstance(child, ast.ClassDef):
                        best = (path, child.lineno)
                    visit(child, path)
            else:
                visit(child, prefix)

    visit(tree, "")
    return best


def pick_targets(root: Path, import_root: str = "") -> Targets:
    """Choose the tasks' targets in the project at ``root`` (deterministic: same project, same targets)."""
    base = root / import_root if import_root else root
    packages = sorted(p.name for p in base.iterdir() if (p / "__init__.py").is_file() and p.name not in TEST_DIRS)
    if not packages:
        raise SystemExit(f"no package with an __init__.py under {base}")
    package = (f"{import_root}/" if import_root else "") + packages[0]
    files = python_files(root)
    trees: dict[str, ast.Module] = {}
    sources: dict[str, str] = {}
    for file_path in files:
        try:
            text = file_path.read_text(encoding="utf-8")
            trees[rel(root, file_path)] = ast.parse(text)
            sources[rel(root, file_path)] = text
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
    facts = _facts(trees)
    tokens = name_tokens(root, files)
    stub_tokens = name_tokens(root, sorted(root.rglob("*.pyi")))

    # The function: a top-level def whose every name token is its own (defined once, never an
    # attribute, argument, assignment, alias or string; only in its module and files that import
    # it by name), called from the most other files.
    ranked: list[tuple[tuple[bool, int, int, int], str, ast.FunctionDef]] = []
    for path, tree in trees.items():
        if not _is_package_module(path, package):
            continue
        plain = _plain_functions(tree)
        for node in plain:
            name = node.name
            if (name.startswith("__") or len(name) < 3 or facts.defined[name] != 1 or name in facts.attributes
                    or name in facts.bound or name in stub_tokens):
                continue
            where = {file for file, _line, _col in tokens[name]}
            if not where <= ({path} | facts.importers[name]):
                continue
            callers = {file for file, tree2 in trees.items() if file != path and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name for n in ast.walk(tree2))}
            if not callers:
                continue
            # Prefer a name no string spells (an ``__all__`` entry is renamed by some tools, not by others).
            ranked.append(((name not in facts.strings, min(len(plain), 4), len(callers), len(tokens[name])), path, node))
    if not ranked:
        raise SystemExit(f"no top-level function of {package} is called from another file under a unique name")
    ranked.sort(key=lambda item: (tuple(-int(k) for k in item[0]), item[1], item[2].name))
    _score, module, function = ranked[0]
    name = function.name
    tree = trees[module]
    source = sources[module]
    lines = source.splitlines(keepends=True)
    references = frozenset((file, line) for file, line, _col in tokens[name] if (file, line) != (module, function.lineno))

    # The call site: the first call from another file whose line is unique in its file (so a
    # regex on it, as Serena's find_declaration takes, names one place).
    call: tuple[str, int, int, str] | None = None
    for file, line, col in sorted(tokens[name]):
        if file == module or file not in sources:
            continue
        file_lines = sources[file].splitlines()
        text = file_lines[line - 1]
        if (file_lines.count(text) == 1 and text.count(name) == 1 and text[col + len(name):].lstrip().startswith("(")):
            call = (file, line, col + 1, text)  # tokenize's columns count characters
            break
    if call is None:
        raise SystemExit(f"no call site of {name} outside {module} on a line of its own")
    enclosing, enclosing_line = _enclosing(trees[call[0]], call[1])

    # The name path: a public, undecorated method of the package class with the most methods,
    # ``Class/method`` being one of a kind in the project.
    pairs: dict[str, int] = defaultdict(int)
    for tree2 in trees.values():
        for found in ast.walk(tree2):
            if isinstance(found, ast.ClassDef):
                for item in found.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        pairs[f"{found.name}/{item.name}"] += 1
    method: tuple[int, str, str, int] | None = None
    for file, tree2 in trees.items():
        if not _is_package_module(file, package):
            continue
        for cls in tree2.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            methods = [m for m in cls.body if isinstance(m, ast.FunctionDef)]
            for item in methods:
                key = f"{cls.name}/{item.name}"
                if not item.name.startswith("_") and not item.decorator_list and pairs[key] == 1:
                    if method is None or len(methods) > method[0]:
                        method = (len(methods), key, file, item.lineno)
                    break
    if method is None:  # no class: a top-level function of another module, by its bare name path
        method = next(((0, n.name, file, n.lineno) for file, tree2 in trees.items() if _is_package_module(file, package)
                       and file != module for n in _plain_functions(tree2) if facts.defined[n.name] == 1), None)
    if method is None:
        raise SystemExit(f"nothing in {package} to find by name path")

    # The edit targets: other plain functions of the module first.
    plain = _plain_functions(tree)
    others = [n for n in plain if n.name != name] or plain
    edited = (others[0], others[1] if len(others) > 1 else others[0])
    # The broken replacements must really be broken: the first function whose over-indented
    # text is an IndentationError (after a compound first statement it would be valid code,
    # nested one level deeper), and whose text without its last ``)`` does not parse.
    bad_indent = next((n for n in others + plain if _fails(_over_indented(lines, n), IndentationError)), None)
    paren = next((n for n in others + plain if _last_close_paren(lines, n) is not None
                  and _fails(_unclosed(lines, n), SyntaxError)), others[0])
    if bad_indent is None:
        raise SystemExit(f"no function of {module} whose over-indented body is an unexpected indent")

    new_name = f"{name}_v2"
    while new_name in tokens:
        new_name += "_"
    return Targets(
        import_root=import_root, package=package, module=module, module_name=_dotted(module, import_root),
        top_level=tuple(n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))),
        package_modules=tuple(p for p in trees if p.startswith(package + "/")),
        function=name, function_line=function.lineno, function_source=_declaration(lines, function),
        references=references, call_file=call[0], call_line=call[1], call_column=call[2], call_text=call[3],
        enclosing=enclosing, enclosing_line=enclosing_line,
        method_path=method[1], method_file=method[2], method_line=method[3], new_name=new_name,
        edited=(edited[0].name, edited[1].name), bad_indent_target=bad_indent.name, paren_target=paren.name,
        insert_anchor=edited[0].name,
        edit_texts=(_marked(lines, edited[0], MARKERS[0]), _marked(lines, edited[1], MARKERS[1])),
        bad_indent_text=_over_indented(lines, bad_indent), paren_text=_unclosed(lines, paren),
        insert_texts=(_inserted_text(*INSERTED[0]), _inserted_text(*INSERTED[1])),
    )


def _dotted(path: str, import_root: str) -> str:
    inner = path[len(import_root) + 1:] if import_root else path
    return inner[:-3].replace("/", ".").removesuffix(".__init__")


# -- the texts the edit tasks send ---------------------------------------------------------


def _declaration(lines: list[str], node: ast.FunctionDef) -> str:
    start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    return "".join(lines[start - 1:node.end_lineno])


def _marked(lines: list[str], node: ast.FunctionDef, marker: str) -> str:
    """The declaration with a comment line before its first statement: the same code (same
    AST), so a right edit leaves the function as it was plus the marker."""
    body_line = node.body[0].lineno
    indent = lines[body_line - 1][: len(lines[body_line - 1]) - len(lines[body_line - 1].lstrip())]
    start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    block = lines[start - 1:node.end_lineno]
    cut = body_line - start
    return "".join(block[:cut] + [f"{indent}{marker}\n"] + block[cut:])


def _over_indented(lines: list[str], node: ast.FunctionDef) -> str:
    """The declaration with every line after its first statement indented one level deeper: an
    unexpected indent (a syntax error as it stands). Its intended code is the original."""
    start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    first_end = node.body[0].end_lineno or node.body[0].lineno
    block = lines[start - 1:node.end_lineno]
    cut = first_end - start + 1
    return "".join(block[:cut] + [INDENT + line if line.strip() else line for line in block[cut:]])


def _fails(text: str, error: type[SyntaxError]) -> bool:
    """Whether ``text`` fails to parse with ``error`` (or a subclass)."""
    try:
        ast.parse(text)
    except error:
        return True
    except SyntaxError:
        return False
    return False


def _last_close_paren(lines: list[str], node: ast.FunctionDef) -> tuple[int, int] | None:
    """(line, column) of the last ``)`` token on a body line of the function, if any."""
    start = node.body[0].lineno
    text = "".join(lines[start - 1:node.end_lineno])
    found: tuple[int, int] | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP and token.string == ")":
                found = (token.start[0] + start - 1, token.start[1])
    except (tokenize.TokenError, IndentationError):
        return None
    return found


def _unclosed(lines: list[str], node: ast.FunctionDef) -> str:
    """The declaration with the last ``)`` of its body dropped: an unclosed parenthesis."""
    start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    block = lines[start - 1:node.end_lineno]
    where = _last_close_paren(lines, node)
    if where is None:
        return "".join(block) + f"{INDENT}_bench_agent = (1,\n"
    index = where[0] - start
    block[index] = block[index][: where[1]] + block[index][where[1] + 1:]
    return "".join(block)


# -- checks of the project on disk ---------------------------------------------------------


def import_error(root: Path, targets: Targets, code: str = "") -> str | None:
    """None when ``import <module>`` (and ``code`` after it) runs in the copy, else the error's last line."""
    base = root / targets.import_root if targets.import_root else root
    env = {**os.environ, "PYTHONPATH": str(base), "PYTHONDONTWRITEBYTECODE": "1"}
    script = f"import {targets.module_name} as m\n{code}"
    done = subprocess.run([sys.executable, "-c", script], check=False, cwd=base, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode == 0:
        return None
    tail = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return tail[-1] if tail else f"exit {done.returncode}"


def top_function(root: Path, module: str, name: str) -> tuple[ast.FunctionDef | None, str, str]:
    """The module's top-level function ``name`` as it is on disk now (None if absent or the file
    does not parse), the file's text, and the syntax error ('' when it parses)."""
    text = (root / module).read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        return None, text, f"{type(error).__name__}: {error.msg} (line {error.lineno})"
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None), text, ""


def same_code(a: ast.AST, b: ast.AST) -> bool:
    return ast.dump(a, include_attributes=False) == ast.dump(b, include_attributes=False)


def module_body(text: str) -> list[ast.stmt]:
    return ast.parse(text).body


def token_lines(root: Path, name: str) -> set[tuple[str, int]]:
    return {(file, line) for file, line, _col in name_tokens(root, python_files(root)).get(name, [])}

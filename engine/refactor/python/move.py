"""Move a top-level Python function, class or constant to another module.

The plan, one WorkspaceEdit:
- the destination gets the code (decorators, the comments right above it, its docstring)
  and the imports the code needs, computed from the names it reads as the source binds
  them; other globals of the source are imported from the source, unless that makes a
  cycle, which is refused with the names;
- every importer takes the name from the destination (see ``move_importers``);
- the source loses the code, its ``__all__`` entry and the imports only the code used;
  when it still uses the name (or ``shim`` asks) it imports it back, at module level, or
  inside the functions that use it when a module-level import would be circular;
- strings naming ``source.name`` (``mock.patch``) follow when the source no longer has it.
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass

import libcst as cst

from engine.edits.model import FileChange, WorkspaceEdit
from engine.edits.materialize import materialize
from engine.errors import DestinationMissing, Refused, UsageError
from engine.graph.queries import GraphQueries
from engine.languages import SymbolMoves, profile_of
from engine.refactor.python.dotted_strings import retarget_dotted_strings
from engine.refactor.python.move_importers import MoveNames, rewrite_importer
from engine.refactor.python.move_rewrite import Bindings, rewrite_dest, rewrite_source, top_level_bindings, type_checking_block
from engine.refactor.python.move_source import CannotMove, CarriedImport, SourceAnalysis, analyse
from engine.refactor.python.import_check import runs_as_script
from engine.refactor.plan import RefactorPlan
from engine.refactor.python.cst_edits import (
    ModuleName, all_names, code_of, dotted, file_change, from_import, grouped_imports, import_module_of, move_operations, parse,
    parse_simple_statement,
)
from engine.symbols import Confidence, Source, Symbol
from engine.workspace import SourceFile, Workspace


class MoveCycle(Refused):
    code = "import_cycle"


class MoveClash(Refused):
    code = "name_clash"


@dataclass(frozen=True)
class MoveRequest:
    symbol: Symbol
    dest: str
    create: bool = False
    shim: bool = False
    reexport: bool = True
    """A public name (in the source's ``__all__``, or defined in a package ``__init__``) stays
    importable from the source: ``from dest import name`` is left there, ``__all__`` keeps it."""
    stub_moved: bool = False
    """The caller moves the declaration in the source's ``.pyi`` stub as well (no warning then)."""


def plan_move(workspace: Workspace, queries: GraphQueries, request: MoveRequest) -> RefactorPlan:
    symbol, name = request.symbol, request.symbol.name
    source = workspace.read(symbol.file)
    dest_path, dest_source = _destination(workspace, request)
    sides = _Sides(source, dest_path, dest_source, _module_name(queries, source.path), _module_name(queries, dest_path))
    source_module, dest_module = sides.source_module, sides.dest_module
    analysis = analyse(source, name, source_module, dest_module)
    warnings: list[str] = []
    if analysis.unresolved:
        stars = " (the source has a star import: check that the destination has what it needs)" if _has_star(analysis.tree) else ""
        warnings.append(f"names the moved code reads but nothing in {source.path} binds: {', '.join(analysis.unresolved)}{stars}")

    dest_tree = parse(dest_source) if dest_source is not None else cst.parse_module("")
    names = MoveNames(name, source_module, dest_module, _star_exported(analysis.tree, name))
    dest_tree = rewrite_importer(dest_tree, dest_module, names, is_dest=True)
    bound = top_level_bindings(dest_tree, dest_module)
    dest_bindings = bound.names
    if name in dest_bindings:
        raise MoveClash(f"{dest_path} already binds {name}; moving {symbol.address} there would replace it")
    imports, type_checking = _destination_imports(analysis, bound, dest_path)
    try_blocks = _try_blocks_for(analysis, dest_tree, dest_bindings, dest_path)
    guard = _type_checking_guard(dest_tree, dest_bindings, analysis.imports)
    if type_checking and guard is None:
        imports.append(from_import("typing", "TYPE_CHECKING"))
    needed_globals = [g for g in analysis.source_globals if dest_bindings.get(g) != f"{source_module.dotted}.{g}"
                      and not _same_definition(analysis.tree, dest_tree, g)]
    for global_name in needed_globals:
        if global_name in dest_bindings:
            raise MoveClash(f"the moved code uses {global_name} from {source.path}, but {dest_path} binds that name already")

    source_all = all_names(analysis.tree)
    public = _public(name, source_all, source_module)
    back = _back_import(queries, request, analysis, sides, public, needed_globals, dest_tree, imports, warnings)
    back_spec = source_module.spec_for(dest_module.dotted, relative=_prefers_relative(analysis.tree))
    # In a stub, `X as X` is what makes an import a re-export.
    back_alias = name if back.reexport and source.path.endswith(".pyi") else None
    back_statement = from_import(back_spec, name, back_alias) if back.needed else None
    export = name if source_all is not None and name in source_all else None
    warnings += _reexport_warnings(request, name, sides, public, back, back_spec)
    new_dest = rewrite_dest(dest_tree, analysis, imports, type_checking, export=export, create_all=dest_source is None,
                            guard=guard or "TYPE_CHECKING", try_blocks=try_blocks)
    if dest_source is None or _imports_grouped(dest_source.text, dest_module):
        new_dest = grouped_imports(new_dest, dest_module.dotted.split(".")[0])
    new_source = rewrite_source(analysis, name, back_statement, local=back.local, keep_in_all=back.reexport or request.shim)

    operations = move_operations(source, new_source, dest_path, dest_source, new_dest)
    operations += _importer_changes(workspace, queries, names, {source.path, dest_path})
    edit = WorkspaceEdit(tuple(operations))
    if not (request.shim or back.uses_left):
        edit = retarget_dotted_strings(
            workspace, edit, f"{source_module.dotted}.{name}", f"{dest_module.dotted}.{name}", list(queries.project.facts)
        )
    if not request.stub_moved:
        warnings += _stub_warnings(workspace, source.path, name)
    warnings += _doctest_warnings(source, symbol, analysis.tree, source_module, new_dest, dest_module)
    warnings += _stale(workspace, edit, source_module, name, back.needed)
    return RefactorPlan("move", edit, Source.AST, Confidence.HIGH if not warnings else Confidence.MEDIUM, warnings)


@dataclass(frozen=True)
class _Sides:
    """The move's two modules: the source, and the destination (None: created by the move)."""

    source: SourceFile
    dest_path: str
    dest_source: SourceFile | None
    source_module: ModuleName
    dest_module: ModuleName


@dataclass(frozen=True)
class _BackImport:
    """How the source keeps the moved name, once cycles are ruled out."""

    reexport: bool
    """It stays importable from the source (a public name)."""
    needed: bool
    """The source imports the name back (a shim, a re-export, or its own remaining uses)."""
    local: bool
    """Inside the functions that use it: a module-level import would be circular."""
    uses_left: bool
    """The source still uses the name itself."""


def _destination_imports(
    analysis: SourceAnalysis, bound: Bindings, dest_path: str,
) -> tuple[list[cst.SimpleStatementLine], list[cst.SimpleStatementLine]]:
    """The imports the moved code needs in the destination (for run time, for type checkers only),
    checked against what the destination already binds (MoveClash)."""
    dest_bindings = bound.names
    only_for_types = bound.type_checking.names if bound.type_checking is not None else {}
    imports: list[cst.SimpleStatementLine] = []
    type_checking: list[cst.SimpleStatementLine] = []
    for carried in analysis.imports:
        plain = _plain(carried)
        if plain and plain in bound.plain_imports:
            continue
        if carried.type_checking and only_for_types.get(carried.name) == carried.absolute:
            continue  # the destination imports it for type checkers already
        if carried.name in dest_bindings:
            existing = dest_bindings[carried.name]
            if existing == carried.absolute and not plain:
                continue
            if not (plain and existing == carried.name):  # `import a.c` there binds `a` as `import a.b` does
                raise MoveClash(
                    f"the moved code uses {carried.name} ({carried.absolute}), but {dest_path} binds {carried.name} "
                    f"to {existing or 'its own definition'}"
                )
        (type_checking if carried.type_checking else imports).append(carried.statement)
    return imports, type_checking


def _back_import(
    queries: GraphQueries, request: MoveRequest, analysis: SourceAnalysis, sides: _Sides, public: str | None,
    needed_globals: list[str], dest_tree: cst.Module, imports: list[cst.SimpleStatementLine], warnings: list[str],
) -> _BackImport:
    """Cycles: the destination importing the source back, while the source imports the destination.
    Adds the import of ``needed_globals`` to ``imports`` and the warnings; refuses (MoveCycle) a cycle
    no function-local import avoids."""
    name, source, dest_path = request.symbol.name, sides.source, sides.dest_path
    source_module, dest_module = sides.source_module, sides.dest_module
    uses_left = bool(analysis.import_time_uses or analysis.runtime_uses)
    reexport = request.reexport and public is not None and not request.shim
    source_needs_name = request.shim or reexport or uses_left
    source_reaches_dest = queries.import_path(source.path, dest_path) if sides.dest_source is not None else None
    if needed_globals:
        if source_reaches_dest:
            raise MoveCycle(
                f"{name} uses {', '.join(needed_globals)} from {source_module.dotted}, and importing them into "
                f"{dest_module.dotted} would be circular: {' -> '.join(source_reaches_dest + [source.path])}; "
                "move them first, or choose another destination"
            )
        # The destination's own import style, when it has one.
        relative = _prefers_relative(dest_tree if sides.dest_source is not None else analysis.tree)
        spec = dest_module.spec_for(source_module.dotted, relative=relative)
        imports.append(parse_simple_statement(f"from {spec} import {', '.join(needed_globals)}\n"))
    dest_reaches_source = [dest_path, source.path] if needed_globals else (
        queries.import_path(dest_path, source.path) if sides.dest_source is not None else None
    )
    local = False
    if reexport and dest_reaches_source and _imports_at_module_level(analysis.tree, source_module, dest_module.dotted):
        # A package __init__ that already imports the destination, one of its own submodules, at
        # module level: Python runs the __init__ before any submodule, and the destination is
        # whole once that import returns, so a re-export beside it adds no cycle that is not
        # already there and working (jmespath's `from jmespath import parser`).
        dest_reaches_source = None
    if reexport and dest_reaches_source:
        cycle = " -> ".join([source.path, *dest_reaches_source])
        reexport = False
        source_needs_name = uses_left
        warnings.append(f"{name} was public in {source_module.dotted} ({public}), but a re-export there would be circular "
                        f"({cycle}): `from {source_module.dotted} import {name}` no longer works outside this project")
    if source_needs_name and dest_reaches_source:
        cycle = " -> ".join([source.path, *dest_reaches_source])
        if request.shim:
            raise MoveCycle(f"a shim needs {source.path} to import {name} from {dest_path} at module level, which is circular: {cycle}")
        if analysis.import_time_uses:
            lines = ", ".join(f"{source.path}:{line}" for line in analysis.import_time_uses)
            raise MoveCycle(
                f"{source.path} still uses {name} when it is imported ({lines}), and importing it from "
                f"{dest_module.dotted} would be circular: {cycle}"
            )
        local = True
        warnings.append(f"{source.path} imports {name} inside the functions that use it: a module-level import would be circular ({cycle})")
    return _BackImport(reexport, source_needs_name, local, uses_left)


def _reexport_warnings(
    request: MoveRequest, name: str, sides: _Sides, public: str | None, back: _BackImport, back_spec: str,
) -> list[str]:
    """What becomes of the name's importers outside this project."""
    source_module, dest_module = sides.source_module, sides.dest_module
    if back.reexport:
        return [f"{name} was public in {source_module.dotted} ({public}): it stays importable from there through "
                f"`from {back_spec} import {name}`; pass no_reexport to drop that"]
    if public is None and not name.startswith("_") and not back.needed:
        return [f"{name} is no longer importable from {source_module.dotted} (this project's importers now take it from "
                f"{dest_module.dotted}); code outside it that does `from {source_module.dotted} import {name}` breaks: "
                "pass shim to keep a re-export"]
    if public is not None and request.reexport is False and not request.shim:
        return [f"{name} was public in {source_module.dotted} ({public}) and is no longer importable from there (no_reexport)"]
    return []


def _importer_changes(workspace: Workspace, queries: GraphQueries, names: MoveNames, skip: set[str]) -> list[FileChange]:
    """Every other importer, taking the name from the destination."""
    changes = []
    for path in _candidate_importers(workspace, queries, names.name, names.source, skip):
        importer = workspace.read(path)
        # A script outside any package still has absolute imports to rewrite.
        module = ModuleName(queries.project.module_name_for(path) or "", path.endswith(("__init__.py", "__init__.pyi")))
        rewritten = rewrite_importer(parse(importer), module, names, is_dest=False).code
        change = file_change(importer, rewritten)
        if change is not None:
            changes.append(change)
    return changes


def _destination(workspace: Workspace, request: MoveRequest) -> tuple[str, SourceFile | None]:
    relative, absolute = workspace.resolve(request.dest)
    stub = request.symbol.file.endswith(".pyi")
    kind = profile_of(relative)
    if kind is None or kind.symbol_moves is not SymbolMoves.PYTHON or not relative.endswith(".pyi" if stub else ".py"):
        raise UsageError(f"the destination {relative} is not a Python {'stub (.pyi)' if stub else 'module (.py)'}")
    if relative == request.symbol.file:
        raise UsageError(f"{request.symbol.address} is already in {relative}")
    if absolute.exists():
        return relative, workspace.read(relative)
    if not request.create:
        raise DestinationMissing(f"{relative} does not exist; create it with the move", option="create")
    if not absolute.parent.is_dir():
        raise UsageError(f"the folder of {relative} does not exist; create the package first")
    return relative, None


def _module_name(queries: GraphQueries, path: str) -> ModuleName:
    dotted = queries.project.module_name_for(path)
    if dotted is None:
        raise CannotMove(f"{path} cannot be imported as a Python module (its path is not made of identifiers)")
    return ModuleName(dotted, path.endswith(("__init__.py", "__init__.pyi")))


def _plain(carried: CarriedImport) -> str:
    """The module of an unaliased ``import a.b`` (binding ``a``, as the destination may too), else ""."""
    written = code_of(carried.statement)
    return carried.absolute if written.startswith("import ") and " as " not in written else ""


def _try_blocks_for(
    analysis: SourceAnalysis, dest: cst.Module, bindings: dict[str, str | None], dest_path: str
) -> list[cst.Try]:
    """The source's ``try`` blocks of imports that the moved code needs and the destination lacks.
    A name such a block binds that the destination binds to something else is a clash."""
    needed = []
    for block in analysis.try_blocks:
        written = code_of(block.statement).strip()
        if any(isinstance(s, cst.Try) and code_of(s).strip() == written for s in dest.body):
            continue
        if all(bindings.get(name) == absolute for name, absolute in block.names.items() if absolute) and all(
                name in bindings for name in block.names):
            continue
        clashing = sorted(name for name in block.names if name in bindings)
        if clashing:
            raise MoveClash(
                f"the moved code needs the source's try/except block of imports binding {', '.join(sorted(block.names))}, "
                f"but {dest_path} binds {', '.join(clashing)} otherwise: make them agree first"
            )
        needed.append(block.statement)
    return needed


def _type_checking_guard(dest: cst.Module, bindings: dict[str, str | None], carried: list[CarriedImport]) -> str | None:
    """How the destination spells ``TYPE_CHECKING`` without a new import: its own ``if …:`` block's
    test, its ``TYPE_CHECKING``, or ``t.TYPE_CHECKING`` through its (or the carried) ``import typing as t``."""
    existing = type_checking_block(dest)
    if existing is not None:
        return code_of(existing.test)
    if bindings.get("TYPE_CHECKING") == "typing.TYPE_CHECKING":
        return "TYPE_CHECKING"
    typing_names = [name for name, bound in bindings.items() if bound == "typing"]
    typing_names += [c.name for c in carried if not c.type_checking and c.absolute == "typing"]
    return f"{typing_names[0]}.TYPE_CHECKING" if typing_names else None


def _public(name: str, exports: list[str] | None, module: ModuleName) -> str | None:
    """Why users may import ``name`` from the module (its ``__all__`` lists it, or a package's
    ``__init__`` defines it under a public name), or None."""
    if exports is not None and name in exports:
        return "listed in its __all__"
    if module.is_package and not name.startswith("_"):
        return "defined in the package's __init__"
    return None


def _has_star(tree: cst.Module) -> bool:
    return "import *" in tree.code


def _star_exported(tree: cst.Module, name: str) -> bool:
    exports = all_names(tree)
    return name in exports if exports is not None else not name.startswith("_")


def _same_definition(source: cst.Module, dest: cst.Module, name: str) -> bool:
    """Whether both modules bind ``name`` by the same single top-level statement (stubs' own
    ``_T = TypeVar("_T")``): the destination's serves the moved code as well as the source's."""
    def definitions(tree: cst.Module) -> list[str]:
        found = []
        for statement in tree.body:
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
                small = statement.body[0]
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
                    [small.target] if isinstance(small, cst.AnnAssign) else [])
                if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                    found.append(re.sub(r"\s+", "", tree.code_for_node(small)).replace("'", '"'))
        return found

    here, there = definitions(source), definitions(dest)
    return len(here) == 1 and here == there


def _imports_at_module_level(tree: cst.Module, source: ModuleName, dest: str) -> bool:
    """Whether ``source``, a package ``__init__``, imports ``dest``, a module inside that package,
    by a statement of its module level (not in a function, a class or a ``try``)."""
    if not source.is_package or not dest.startswith(source.dotted + "."):
        return False
    for line in tree.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for statement in line.body:
            if isinstance(statement, cst.Import) and any(dotted(alias.name) == dest for alias in statement.names):
                return True
            if isinstance(statement, cst.ImportFrom):
                level, written = import_module_of(statement)
                base = source.absolute(level, written)
                if base == dest:
                    return True
                names = statement.names if not isinstance(statement.names, cst.ImportStar) else ()
                if any(f"{base}.{dotted(alias.name)}" == dest for alias in names):
                    return True
    return False


def _prefers_relative(tree: cst.Module) -> bool:
    """Whether a module writes its imports of the same package relatively. Never one run as a
    script (``if __name__ == "__main__":``): `python pkg/__init__.py` gives it no parent package,
    so a module-level relative import fails there (its own relative imports are inside functions)."""
    return bool(re.search(r"^\s*from \.", tree.code, re.MULTILINE)) and not runs_as_script(tree.code)


def _candidate_importers(
    workspace: Workspace, queries: GraphQueries, name: str, source: ModuleName, exclude: set[str]
) -> list[str]:
    """Python files whose imports (as the graph's facts record them) name the source module,
    or a star import, and whose text mentions the name: only those are parsed."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    found = []
    for path, facts in sorted(queries.project.facts.items()):
        if path in exclude or not path.endswith((".py", ".pyi")):
            continue
        for fact in facts.imports:
            if fact.level:
                here = ModuleName(queries.project.module_name_for(path) or "", path.endswith(("__init__.py", "__init__.pyi")))
                absolute = here.absolute(fact.level, fact.module)
            else:
                absolute = fact.module
            named = {absolute, *(f"{absolute}.{n}" for n, _alias in fact.names)}
            if source.dotted in named or fact.star or absolute.startswith(source.dotted + "."):
                if word.search(workspace.read(path).text):
                    found.append(path)
                break
    return found


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
"""A one-line string literal in an example: its words are not names."""
_EXAMPLE_LINE = re.compile(r"^\s*(?:>>>|\.\.\.) ?(.*)$")


def _doctest_warnings(
    source: SourceFile, symbol: Symbol, source_tree: cst.Module, source_module: ModuleName, new_dest: str, dest_module: ModuleName,
) -> list[str]:
    """Doctests are code: names the moved code's examples read from the source module (its globals,
    under --doctest-modules) that the destination will not have. Named, with their lines."""
    source_names = set(top_level_bindings(source_tree, source_module).names)
    # A star import binds names no parse can list: then any name the example reads that nothing
    # binds (not the source, not a builtin, not the example) may come from it, and is named too.
    starred = _has_star(source_tree)
    try:
        dest_names = set(top_level_bindings(cst.parse_module(new_dest), dest_module).names)
    except cst.ParserSyntaxError:
        return []
    lines = source.text.splitlines()[symbol.range.start.line:symbol.range.last_line]
    missing: dict[str, int] = {}
    bound_in_examples: set[str] = set()
    for offset, line in enumerate(lines):
        example = _EXAMPLE_LINE.match(line)
        if example is None:
            continue
        code = _STRING.sub('""', example.group(1))
        bound_in_examples |= set(re.findall(r"(?:^|\bimport\s+|,\s*|\bas\s+)([A-Za-z_]\w*)\s*(?:=[^=]|,|$)", code))
        for word in re.findall(r"(?<![\w.])([A-Za-z_]\w*)\b(?!\s*=(?!=))", code):  # `f(sep=1)`: sep is not read
            from_source = word in source_names or (starred and not keyword.iskeyword(word) and not hasattr(builtins, word))
            if from_source and word not in dest_names and word not in bound_in_examples:
                missing.setdefault(word, symbol.range.start.line + offset + 1)
    if not missing:
        return []
    listed = ", ".join(f"{word} ({source.path}:{line})" for word, line in missing.items())
    return [f"the doctest of {symbol.name} reads {listed} from {source.path}, which {dest_module.dotted} does not have: "
            "it would fail under --doctest-modules; import it in the example or move it too"]


def _imports_grouped(text: str, module: ModuleName) -> bool:
    """Whether a module already separates its import groups with blank lines (then the carried
    imports follow that style; a module that does not is left as its author writes it)."""
    return grouped_imports(text, module.dotted.split(".")[0]) == text and bool(re.search(r"^(?:import|from)\s.*\n\n(?:import|from)\s", text, re.M))


def _stub_warnings(workspace: Workspace, source_path: str, name: str) -> list[str]:
    stub = source_path[:-3] + ".pyi"
    if (workspace.root / stub).is_file() and re.search(rf"\b{re.escape(name)}\b", workspace.read(stub).text):
        return [f"{stub} declares {name}: move its stub by hand"]
    return []


def _stale(workspace: Workspace, edit: WorkspaceEdit, source: ModuleName, name: str, source_keeps: bool) -> list[str]:
    """References to ``source.name`` the plan leaves when the source no longer has the name."""
    if source_keeps:
        return []
    after = {state.path: state.after for state in materialize(edit, workspace)}
    pattern = re.compile(rf"\bfrom\s+{re.escape(source.dotted)}\s+import\b[^\n]*\b{re.escape(name)}\b|\b{re.escape(source.dotted)}\.{re.escape(name)}\b")
    stale = []
    for path, data in after.items():
        if data is None:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines()):
            if pattern.search(line):
                stale.append(f"{path}:{number + 1}")
    return [f"references to {source.dotted}.{name} remain (check them): {', '.join(stale)}"] if stale else []


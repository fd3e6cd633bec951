"""Real language servers through the pool: symbols, navigation, rename plans, exact columns.

Marked ``e2e``. basedpyright and jedi-language-server are always installed (they are
Python dependencies); typescript-language-server, gopls and clangd are installed by
.ci/run, and a test whose server is missing is skipped with the reason, never silently.
"""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest

from engine.api import Engine, SourcePreference
from engine.edits.model import paths_of
from engine.positions import Position, PositionEncoding, Range, split_lines
from engine.workspace import Workspace
from engine.refactor.operations.move_file import FileRename
from engine.refactor.operations.move_symbol import Move
from engine.refactor.operations.rename_symbol import Rename
from engine.refactor.operations.safe_delete import Delete
from engine.refactor.plan import RefactorPlan
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.registry import DEFAULT_PREFERENCE, SPECS_BY_ID, locate
from lsp_pool.sync import SyncLanguageApi
from tests.conftest import SAMPLE

pytestmark = pytest.mark.e2e


def require(server_id: str) -> None:
    if locate(SPECS_BY_ID[server_id]) is None:
        pytest.skip(f"{server_id} is not installed here ({SPECS_BY_ID[server_id].install_hint})")


def only(server_id: str) -> PoolConfig:
    preference = dict(DEFAULT_PREFERENCE)
    for language in SPECS_BY_ID[server_id].languages:
        preference[language] = (server_id,)
    return PoolConfig(preference=preference)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the fixture project: servers may write caches, and some tests edit files."""
    target = tmp_path_factory.mktemp("e2e") / "sample"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".graft"))
    return target


@pytest.fixture(scope="module")
def pyright(project: Path) -> Iterator[SyncLanguageApi]:
    require("basedpyright")
    api = SyncLanguageApi(project, only("basedpyright"))
    yield api
    api.close()


@contextmanager
def served_engine(root: Path, server_id: str) -> Iterator[Engine]:
    """An engine on ``root`` whose only server for the language is ``server_id``, closed after."""
    workspace = Workspace(root)
    engine = Engine(workspace, services=PoolServices(workspace, only(server_id)), source=SourcePreference.AUTO)
    # These tests assert what the whole differential check finds: a loaded machine must not cut
    # it short at the interactive default (3 s); the budget itself is tested on its own.
    engine.settings = replace(engine.settings, diagnostics_budget=300.0)
    try:
        yield engine
    finally:
        engine.close()


def position_of(path: Path, needle: str, line_hint: int | None = None, occurrence: int = 0) -> Position:
    """Engine position (code points) of the ``occurrence``-th ``needle`` in a file."""
    lines = split_lines(path.read_text(encoding="utf-8"))
    found = [(number, line.index(needle)) for number, line in enumerate(lines) if needle in line]
    if line_hint is not None:
        found = [f for f in found if f[0] == line_hint - 1]
    line, column = found[occurrence]
    return Position(line, column)


def outline(project: Path, server_id: str, relative: str) -> dict[str, tuple[str, str, int]]:
    workspace = Workspace(project)
    engine = Engine(workspace, services=PoolServices(workspace, only(server_id)), source=SourcePreference.LSP)
    try:
        listing = engine.outline(relative)
    finally:
        engine.close()
    assert listing.source.value == "lsp" and listing.notes[0] == f"symbols from {server_id}"
    return {s.name_path: (s.kind.label, s.source.value, s.range.first_line) for top in listing.symbols for s in top.walk()}


# -- document symbols from each server -----------------------------------------


def test_basedpyright_symbols_with_overloads_and_decorators(project: Path) -> None:
    require("basedpyright")
    symbols = outline(project, "basedpyright", "shop/models.py")
    assert symbols["Order"] == ("class", "lsp", 28)  # the range starts at @dataclass
    assert symbols["Order/Status/is_final"] == ("method", "lsp", 42)
    assert symbols["Order/describe/line"] == ("function", "lsp", 64)
    assert symbols["Order/items"][0] == "field"
    # pyright folds @overload stubs into the implementation; the stubs come from the syntax tree, labelled so.
    assert symbols["Order/add[0]"] == ("method", "ast", 45)
    assert symbols["Order/add[2]"] == ("method", "lsp", 51)


def test_jedi_language_server_symbols(project: Path) -> None:
    require("jedi-language-server")
    symbols = outline(project, "jedi-language-server", "shop/models.py")
    # jedi starts a decorated class at `class`; the range is widened to the decorator.
    assert symbols["Order"][0::2] == ("class", 28)
    assert {"Order/add[0]", "Order/add[1]", "Order/add[2]", "Order/describe/line"} <= set(symbols)


def test_typescript_language_server_symbols_in_source_order(project: Path) -> None:
    require("typescript-language-server")
    symbols = outline(project, "typescript-language-server", "web/cart.ts")
    assert list(k for k in symbols if k.startswith("Cart/add")) == ["Cart/add[0]", "Cart/add[1]", "Cart/add[2]"]
    assert symbols["Cart/add[0]"][2] == 28 and symbols["Cart/add[2]"][2] == 30
    assert "Checkout/pay" in symbols and "emptyCart/label" in symbols
    # Object-literal members and anonymous callbacks inside method bodies are not symbols.
    assert not [k for k in symbols if k.startswith(("Cart/add[2]/", "Cart/total/"))]


def test_gopls_symbols_put_methods_under_their_receiver(project: Path) -> None:
    require("gopls")
    symbols = outline(project, "gopls", "go/inventory/inventory.go")
    assert symbols["Store/Count"][0] == "method" and symbols["Counter/Count"][0] == "method"
    assert symbols["Store/Name"][0] == "field"


def test_clangd_symbols_match_the_syntax_tree(project: Path) -> None:
    require("clangd")
    served = outline(project, "clangd", "native/shapes.cpp")
    workspace = Workspace(project)
    syntactic = Engine(workspace, source=SourcePreference.AST).outline("native/shapes.cpp")
    assert set(served) == {s.name_path for top in syntactic.symbols for s in top.walk()}
    assert served["shapes/largest"][2] == 22  # widened to the template<> line


# -- navigation and edits ------------------------------------------------------


def test_references_across_files(pyright: SyncLanguageApi, project: Path) -> None:
    models = project / "shop/models.py"
    answer = pyright.call(lambda api: api.references(models, position_of(models, "LineItem", line_hint=16)))
    assert answer.complete and answer.server == "basedpyright"
    files = {location.file for location in answer.value}
    assert files == {"shop/__init__.py", "shop/models.py", "tests/test_shop.py"}
    for location in answer.value:
        line = split_lines((project / location.file).read_text(encoding="utf-8"))[location.range.start.line]
        assert line[location.range.start.column:location.range.end.column] == "LineItem"


def test_rename_plan_is_a_value_and_touches_every_use(pyright: SyncLanguageApi, project: Path) -> None:
    models = project / "shop/models.py"
    before = models.read_bytes()
    answer = pyright.call(lambda api: api.rename(models, position_of(models, "total", line_hint=60), "grand_total"))
    edits = {f.file: [(e.range.start.line + 1, e.new_text) for e in f.edits] for f in answer.value.files}
    assert set(edits) == {"shop/models.py", "shop/pricing.py", "tests/test_shop.py"}
    assert (60, "grand_total") in edits["shop/models.py"] and (67, "grand_total") in edits["shop/models.py"]
    assert edits["shop/pricing.py"] == [(17, "grand_total")]  # order.total, resolved through the annotation
    assert models.read_bytes() == before  # a plan, not a change


def test_definition_hover_and_call_hierarchy(pyright: SyncLanguageApi, project: Path) -> None:
    pricing = project / "shop/pricing.py"
    where = position_of(pricing, "round_cents", line_hint=17)
    definition = pyright.call(lambda api: api.definition(pricing, where))
    assert [(d.file, d.range.start.line + 1) for d in definition.value] == [("shop/util.py", 8)]
    hover = pyright.call(lambda api: api.hover(pricing, where))
    assert hover.value is not None and "round_cents" in hover.value.text
    util = project / "shop/util.py"
    items = pyright.call(lambda api: api.prepare_call_hierarchy(util, position_of(util, "round_cents", line_hint=8)))
    assert [item.name for item in items.value] == ["round_cents"]
    incoming = pyright.call(lambda api: api.incoming_calls(util, items.value[0]))
    callers = {(edge.item.file, edge.item.name) for edge in incoming.value}
    assert {("shop/pricing.py", "apply_discount"), ("shop/pricing.py", "with_vat"), ("shop/util.py", "money")} <= callers


def test_diagnostics_of_a_broken_file(pyright: SyncLanguageApi, project: Path) -> None:
    broken = project / "shop/broken_e2e.py"
    broken.write_text("from shop.models import Order\n\nOrder().no_such_method()\nundefined_name\n", encoding="utf-8")
    try:
        answer = pyright.call(lambda api: api.diagnostics(broken))
    finally:
        broken.unlink()
    messages = [d.message for d in answer.value if d.severity == "error"]
    assert any("undefined_name" in m for m in messages), messages
    assert all(d.file == "shop/broken_e2e.py" for d in answer.value)


def test_basedpyright_diagnostics_are_pulled_and_follow_an_imported_change_at_once(tmp_path: Path) -> None:
    """Pulled, not pushed: nothing lands in the push cache, and an importer's answer right after
    the module it imports changed on disk is the new one (no wait for a background re-check)."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "lib.py").write_text("def helper(x: int) -> int:\n    return x\n", encoding="utf-8")
    (tmp_path / "user.py").write_text("from lib import helper\n\nhelper(1)\n", encoding="utf-8")
    workspace = Workspace(tmp_path)
    services = PoolServices(workspace, only("basedpyright"))
    try:
        before = services.diagnostics(workspace.read("user.py"), when_ready=True)
        (tmp_path / "lib.py").write_text("def helper(x: str) -> str:\n    return x\n", encoding="utf-8")
        services.files_changed(["lib.py"])  # what an apply tells the servers
        after = services.diagnostics(workspace.read("user.py"), when_ready=True, recheck=True)
        server = services.api.pool.running()[0]
    finally:
        services.close()
    assert [d.message for d in before.value if d.severity == "error"] == []
    assert any('"Literal[1]"' in d.message for d in after.value if d.severity == "error"), after.value
    assert server.diagnostics == {}  # never pushed: every answer was asked for


def test_a_file_changed_on_disk_is_seen_on_next_use(pyright: SyncLanguageApi, project: Path) -> None:
    util = project / "shop/util.py"
    original = util.read_text(encoding="utf-8")
    first = pyright.call(lambda api: api.document_symbols(util))
    try:
        util.write_text(original + "\n\ndef added_later() -> int:\n    return 1\n", encoding="utf-8")
        second = pyright.call(lambda api: api.document_symbols(util))
    finally:
        util.write_text(original, encoding="utf-8")
    assert "added_later" not in [s.name for s in first.value]
    assert "added_later" in [s.name for s in second.value]


# -- exact columns: UTF-16 (and UTF-8 where the server agrees to it) -----------


@pytest.mark.parametrize("name", ["GREETING", "def_label", "PRICE_TAG"])
def test_columns_after_emoji_and_cjk_are_exact(pyright: SyncLanguageApi, project: Path, name: str) -> None:
    util = project / "shop/util.py"
    where = position_of(util, name, line_hint=16)
    answer = pyright.call(lambda api: api.prepare_rename(util, where))
    assert answer.value is not None
    assert answer.value.start == where and answer.value.end == Position(where.line, where.column + len(name))
    server = pyright.pool.running()[0]
    assert server.encoding is PositionEncoding.UTF16  # pyright does not offer UTF-8


def test_clangd_columns_after_emoji(project: Path) -> None:
    require("clangd")
    api = SyncLanguageApi(project, only("clangd"))
    try:
        source = project / "native/labels.c"
        where = position_of(source, "after_label")
        answer = api.call(lambda a: a.references(source, where))
        encoding = api.pool.running()[0].encoding
    finally:
        api.close()
    starts = {(r.range.start.line, r.range.start.column) for r in answer.value}
    assert (where.line, where.column) in starts
    line = split_lines(source.read_text(encoding="utf-8"))[where.line]
    assert encoding in (PositionEncoding.UTF8, PositionEncoding.UTF16)
    assert all(line[c:c + len("after_label")] == "after_label" for (n, c) in starts if n == where.line)


# -- jedi's reference limit is lifted ---------------------------------------------


def test_jedi_finds_references_beyond_thirty_files(tmp_path: Path) -> None:
    require("jedi-language-server")
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("def target() -> int:\n    return 1\n")
    for number in range(45):
        (package / f"user_{number:02}.py").write_text(f"from pkg.core import target\n\nVALUE_{number} = target()\n")
    api = SyncLanguageApi(tmp_path, only("jedi-language-server"))
    try:
        core = package / "core.py"
        answer = api.call(lambda a: a.references(core, Position(0, 4)))
    finally:
        api.close()
    files = {location.file for location in answer.value}
    assert len(files) == 46, f"{len(files)} files: jedi's 30-file limit is still in force"


# -- other languages: definitions and references across files ---------------------


def test_typescript_definition_across_files(project: Path) -> None:
    require("typescript-language-server")
    api = SyncLanguageApi(project, only("typescript-language-server"))
    try:
        widget = project / "web/widget.tsx"
        answer = api.call(lambda a: a.definition(widget, position_of(widget, "Cart", line_hint=4)))
    finally:
        api.close()
    assert [(d.file, d.range.start.line + 1) for d in answer.value] == [("web/cart.ts", 20)]


def test_gopls_references_across_files(project: Path) -> None:
    require("gopls")
    api = SyncLanguageApi(project / "go", only("gopls"))
    try:
        inventory = project / "go/inventory/inventory.go"
        answer = api.call(lambda a: a.references(inventory, position_of(inventory, "MaxStock", line_hint=11)))
    finally:
        api.close()
    assert {(r.file, r.range.start.line + 1) for r in answer.value} == {
        ("inventory/inventory.go", 11), ("inventory/restock.go", 6), ("inventory/restock.go", 7)
    }


def test_code_actions_offer_organize_imports(project: Path) -> None:
    require("typescript-language-server")
    api = SyncLanguageApi(project, only("typescript-language-server"))
    try:
        widget = project / "web/widget.tsx"
        whole = Range(Position(0, 0), Position(1, 0))
        answer = api.call(lambda a: a.code_actions(widget, whole, only=["source.organizeImports"]))
    finally:
        api.close()
    assert answer.value and all(action.kind.startswith("source.organizeImports") for action in answer.value)


# -- front end ---------------------------------------------------------------------


def test_cli_auto_source_uses_the_server_and_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("basedpyright")
    from frontends.cli.main import main

    assert main(["--root", str(project), "outline", "shop/models.py"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "# shop/models.py (python): symbols from lsp, confidence high"
    assert "note: symbols from basedpyright" in out
    assert "[method · ast]" in out and "[method · lsp]" in out  # folded overloads come from the tree


def test_cli_servers_reports_state_pid_and_memory(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("basedpyright")
    import json

    from frontends.cli.main import main

    assert main(["--root", str(project), "--json", "servers", "--start"]) == 0
    servers = {s["id"]: s for s in json.loads(capsys.readouterr().out)["servers"]}
    pyright_status = servers["basedpyright"]
    assert pyright_status["state"] == "ready" and pyright_status["pid"] and pyright_status["memory_bytes"] > 10 * 2**20
    assert pyright_status["preferred_for"] == ["python"] and pyright_status["version"]
    assert "Found" in pyright_status["detail"]
    for status in servers.values():
        assert status["state"] in ("not-found", "stopped", "ready", "indexing", "dead")
        if status["state"] == "not-found":
            assert status["detail"].startswith("install: ")


def test_clangd_type_hierarchy(project: Path) -> None:
    require("clangd")
    api = SyncLanguageApi(project, only("clangd"))
    try:
        shapes = project / "native/shapes.cpp"
        circle = api.call(lambda a: a.prepare_type_hierarchy(shapes, position_of(shapes, "Circle", line_hint=14)))
        supertypes = api.call(lambda a: a.supertypes(shapes, circle.value[0]))
        shape = api.call(lambda a: a.prepare_type_hierarchy(shapes, position_of(shapes, "Shape", line_hint=6)))
        subtypes = api.call(lambda a: a.subtypes(shapes, shape.value[0]))
    finally:
        api.close()
    assert [(i.name, i.file, i.selection_range.start.line + 1) for i in supertypes.value] == [("Shape", "native/shapes.cpp", 6)]
    assert [i.name for i in subtypes.value] == ["Circle"]


def test_jedi_counts_code_points_whatever_it_negotiates(project: Path) -> None:
    """jedi-language-server 0.47 agrees to UTF-8 but answers in code points: the spec says so."""
    require("jedi-language-server")
    api = SyncLanguageApi(project, only("jedi-language-server"))
    try:
        util = project / "shop/util.py"
        where = position_of(util, "PRICE_TAG", line_hint=16)
        answer = api.call(lambda a: a.references(util, where))
        encoding = api.pool.running()[0].encoding
    finally:
        api.close()
    assert encoding is PositionEncoding.UTF32
    assert [(r.file, r.range.start, r.range.end) for r in answer.value] == [
        ("shop/util.py", where, Position(where.line, where.column + len("PRICE_TAG")))
    ]


def test_command_edits_are_captured_not_applied(project: Path) -> None:
    require("typescript-language-server")
    messy = project / "web/messy.ts"
    text = 'import { Cart } from "./cart";\nimport { formatPrice } from "./format";\n\nexport const shown = formatPrice(1);\n'
    messy.write_text(text, encoding="utf-8")
    api = SyncLanguageApi(project, only("typescript-language-server"))
    try:
        api.call(lambda a: a.document_symbols(messy))  # opens the document in tsserver
        answer = api.call(lambda a: a.execute_command("typescript", "_typescript.organizeImports", [str(messy)]))
    finally:
        api.close()
        content_after = messy.read_text(encoding="utf-8")
        messy.unlink()
    _result, edits = answer.value
    assert content_after == text  # captured, not applied
    touched = {file_edits.file for edit in edits for file_edits in edit.files}
    assert touched == {"web/messy.ts"}
    removed = [e for edit in edits for f in edit.files for e in f.edits]
    assert any(e.range.start.line == 0 for e in removed)  # the unused Cart import goes


def test_references_come_from_the_server_and_are_recorded_in_the_graph(project: Path) -> None:
    require("basedpyright")
    with served_engine(project, "basedpyright") as engine:
        refs = engine.references("shop/models.py:LineItem")
        graph = engine.graph()
        recorded = {(u, k) for u, _v, k in graph.graph.in_edges("s:shop/models.py:LineItem", keys=True) if k == "references"}
    assert (refs.source.value, refs.notes) == ("lsp", ["from basedpyright"])
    assert {loc.file for loc in refs.locations} == {"shop/__init__.py", "shop/models.py", "tests/test_shop.py"}
    assert ("s:tests/test_shop.py:make_order", "references") in recorded


def test_index_takes_symbols_from_servers_only_when_required_and_keeps_the_graphs_apart(
    project: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    require("basedpyright")
    import json

    from frontends.cli.main import main

    assert main(["--root", str(project), "--json", "--source", "lsp", "index"]) == 0
    served = json.loads(capsys.readouterr().out)
    assert served["symbols_by_source"]["lsp"] > 50 and "regex" not in served["symbols_by_source"]
    skipped = [entry["path"] for entry in served["skipped"]]
    assert "scripts/deploy.rb" in skipped and len(skipped) == len(set(skipped))  # no server for ruby: said once
    # auto: the graph comes from the trees (servers answer per request), and is cached apart
    assert main(["--root", str(project), "--json", "index"]) == 0
    syntactic = json.loads(capsys.readouterr().out)
    assert "lsp" not in syntactic["symbols_by_source"] and syntactic["symbols_by_source"]["regex"] == 6  # ruby from its regex
    assert main(["--root", str(project), "--json", "--source", "lsp", "index"]) == 0
    again = json.loads(capsys.readouterr().out)
    # the server's graph is back from its cache: nothing is extracted again, and the files no
    # server answers are still said to be skipped (asked again: a server may have been installed)
    assert again["mode"] in ("warm", "incremental") and again["extracted"] == 0, again
    assert sorted(entry["path"] for entry in again["skipped"]) == sorted(skipped)


def test_new_errors_from_the_server_roll_an_edit_back(tmp_path: Path) -> None:
    require("basedpyright")
    import hashlib

    from engine.edits.model import FileChange, WorkspaceEdit
    from engine.edits.session import EditOptions, NewErrors
    from engine.answers import TextEdit

    (tmp_path / "pyproject.toml").write_text("")
    module = tmp_path / "m.py"
    module.write_text("def helper() -> int:\n    return 1\n\n\nVALUE = helper()\n")
    data = module.read_bytes()
    rename_definition_only = FileChange(
        "m.py", (TextEdit(Range(Position(0, 4), Position(0, 10)), "assist"),), hashlib.sha256(data).hexdigest()
    )
    with served_engine(tmp_path, "basedpyright") as engine:
        with pytest.raises(NewErrors, match='"helper" is not defined'):
            engine.edits().apply(WorkspaceEdit((rename_definition_only,)), EditOptions(fail_on_new_errors=True))
        assert module.read_bytes() == data
        outcome = engine.edits().apply(WorkspaceEdit((rename_definition_only,)))
    assert outcome.diagnostics_checked and [d.message for d in outcome.new_diagnostics] == ['"helper" is not defined']


def test_files_an_apply_rewrote_unopened_are_seen_at_the_next_rename_without_a_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An apply whose check had not opened every file it rewrote (its budget spent after the
    first) tells the server those files changed. basedpyright must answer the next rename from
    their new text, and must not take them for new files: for a created file it drops its caches
    and searches for its files again ("Found N source files" in its log, where the pool's readiness
    hears it), which made a first apply's after check cost as much as a cold server's first check."""
    require("basedpyright")
    import re

    from lsp_pool.readiness import ReadinessTracker

    searches: list[str] = []
    heard = ReadinessTracker.log_message

    def log_message(tracker: ReadinessTracker, message: str) -> None:
        if re.match(r"Found \d+ source files?", message):
            searches.append(message)
        heard(tracker, message)

    monkeypatch.setattr(ReadinessTracker, "log_message", log_message)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text("def helper() -> int:\n    return 1\n")
    users = [tmp_path / f"u{n}.py" for n in range(3)]
    for user in users:
        user.write_text("from m import helper\n\nVALUE = helper()\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.settings = replace(engine.settings, diagnostics_budget=1e-6)  # the check opens m.py alone
        first = engine.edits().apply(engine.plan(Rename("m.py:helper", "assist")).edit)
        assert not first.diagnostics_complete  # the users were rewritten without being opened
        second = engine.plan(Rename("m.py:assist", "aid"))
        engine.edits().apply(second.edit)
    assert second.source == "lsp"
    assert all(user.read_text() == "from m import aid\n\nVALUE = aid()\n" for user in users)
    assert len(searches) == 1, searches  # at the start only, not again after the apply


def test_safe_delete_checks_references_with_the_server(project: Path) -> None:
    require("basedpyright")
    from engine.refactor.symbol_edits import ReferencesRemain

    with served_engine(project, "basedpyright") as engine:
        with pytest.raises(ReferencesRemain) as refused:
            engine.plan(Delete("shop/pricing.py:with_vat"))
        plan = engine.plan(Delete("shop/models.py:Order/Status"))
    assert "tests/test_shop.py:22 (in test_vat_and_rules)" in refused.value.message
    assert plan.warnings[-2:] == ["references checked by lsp (high)", "from basedpyright"]


def test_rename_through_the_server_keeps_the_fixture_tests_green(project: Path, tmp_path: Path) -> None:
    """A refactor is correct when the project's own tests still pass and no stale reference remains."""
    require("basedpyright")
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "sample"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".graft"))
    with served_engine(copy, "basedpyright") as engine:
        plan = engine.plan(Rename("shop/pricing.py:apply_discount", "discounted_total"))
        engine.edits().apply(plan.edit)
    assert (plan.source.value, plan.confidence.value) == ("lsp", "high")
    assert sorted(plan.files) == ["shop/__init__.py", "shop/pricing.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=copy,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0 and "5 passed" in run.stdout, run.stdout + run.stderr
    stale = [p for p in copy.rglob("*.py") if "apply_discount" in p.read_text()]
    assert stale == []


def test_server_rename_covers_stubs_re_exports_and_the_whole_hierarchy(tmp_path: Path) -> None:
    """pyright alone renames only what resolves to the .py file: uses through the stub, and
    overrides in subclasses, would be left behind (REFACTORING-HAZARDS.md)."""
    require("basedpyright")
    import shutil

    from tests.conftest import REPO

    case = REPO / "fixtures" / "refactor" / "python-rename-method-through-the-hierarchy-and-its-stub"
    root = tmp_path / "project"
    shutil.copytree(case / "before", root)
    (root / "pyproject.toml").write_text("")
    with served_engine(root, "basedpyright") as engine:
        plan = engine.plan(Rename("pkg/shapes.py:Shape/area", "surface"))
        engine.edits().apply(plan.edit)
    assert plan.source.value == "lsp"
    for expected in (case / "after").rglob("*.py*"):
        relative = expected.relative_to(case / "after")
        assert (root / relative).read_text() == expected.read_text(), relative


def test_server_rename_covers_a_subclass_that_assigns_the_attribute_on_self(tmp_path: Path) -> None:
    """pyflakes' ``Message.message_args``: each subclass sets ``self.message_args`` in
    ``__init__``, which the server takes for an attribute of the subclass's own, so uses typed
    as the subclass stay unrenamed unless a target is put at that assignment. The graph's
    symbols come from the trees, which hold no attribute set in a method."""
    _renamed_by_basedpyright(tmp_path, {
        "messages.py": "class Message:\n    message_args = ()\n\n\n"  # not annotated, as in pyflakes
                       "class Unused(Message):\n    def __init__(self, name):\n        self.message_args = (name,)\n",
        # As pyflakes' checker: a list attribute of unknown element type, narrowed by isinstance.
        "checker.py": "import messages\n\n\nclass Checker:\n    def __init__(self):\n        self.messages = []\n\n"
                      "    def report(self, name):\n        self.messages.append(messages.Unused(name))\n\n"
                      "    def drop(self, name):\n        self.messages = [\n            m for m in self.messages if not\n"
                      "            isinstance(m, messages.Unused) or\n            m.message_args[0] != name]\n",
    }, Rename("messages.py:Message/message_args", "format_args"))
    assert "message_args" not in (tmp_path / "messages.py").read_text() + (tmp_path / "checker.py").read_text()
    assert "self.format_args = (name,)" in (tmp_path / "messages.py").read_text()
    assert "m.format_args[0] != name" in (tmp_path / "checker.py").read_text()


def _renamed_by_basedpyright(root: Path, files: dict[str, str], rename: Rename) -> None:
    """The files written in a project of their own, the rename planned and applied through
    basedpyright; a plan from any other source fails the test."""
    require("basedpyright")
    (root / "pyproject.toml").write_text("")
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    with served_engine(root, "basedpyright") as engine:
        plan = engine.plan(rename)
        engine.edits().apply(plan.edit)
    assert plan.source.value == "lsp"


def test_an_attribute_set_only_on_self_is_renamed_by_its_name_path(tmp_path: Path) -> None:
    """``Checker/messages``, assigned in ``__init__`` only: the server's outline names it, the
    trees' graph has no node for it. The rename was refused ("nothing in the index is named")."""
    _renamed_by_basedpyright(tmp_path, {
        "checker.py": "class Checker:\n    def __init__(self):\n        self.messages = []\n\n"
                      "    def report(self, name):\n        self.messages.append(name)\n\n\n"
                      "def count(checker: Checker) -> int:\n    return len(checker.messages)\n",
    }, Rename("checker.py:Checker/messages", "found"))
    text = (tmp_path / "checker.py").read_text()
    assert "messages" not in text and text.count(".found") == 3


def test_typescript_rename_file_updates_importers_through_will_rename_files(project: Path, tmp_path: Path) -> None:
    require("typescript-language-server")
    copy = tmp_path / "sample"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".graft"))
    with served_engine(copy, "typescript-language-server") as engine:
        plan = engine.plan(FileRename("web/format.ts", "web/money.ts"))
        engine.edits().apply(plan.edit)
    assert (plan.source.value, plan.warnings) == ("lsp", ["from typescript-language-server"])
    assert not (copy / "web" / "format.ts").exists() and (copy / "web" / "money.ts").is_file()
    importers = [p for p in (copy / "web").glob("*.ts*") if "./money" in p.read_text()]
    stale = [p for p in (copy / "web").glob("*.ts*") if "./format" in p.read_text()]
    assert importers and stale == []


def test_typescript_move_to_file_through_the_server(project: Path, tmp_path: Path) -> None:
    """tsserver's "Move to file", reached through typescript-language-server's refactoring
    command with the target passed along: the function moves and its importer follows."""
    require("typescript-language-server")
    copy = tmp_path / "sample"
    shutil.copytree(project, copy, ignore=shutil.ignore_patterns(".graft"))
    (copy / "web" / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2020"}, "files": ["cart.ts", "format.ts", "money.ts"]}\n')
    (copy / "web" / "money.ts").write_text("export const CURRENCY = \"EUR\";\n")
    with served_engine(copy, "typescript-language-server") as engine:
        plan = engine.plan(Move("web/format.ts:formatPrice", "web/money.ts"))
        engine.edits().apply(plan.edit)
    assert (plan.source.value, plan.warnings) == ("lsp", ["from typescript-language-server"])
    assert "export function formatPrice" in (copy / "web" / "money.ts").read_text()
    assert "formatPrice" not in (copy / "web" / "format.ts").read_text()
    cart = (copy / "web" / "cart.ts").read_text()
    assert 'from "./money"' in cart and 'from "./format"' not in cart
    tsc = shutil.which("tsc")
    if tsc is None:  # installed with typescript by .ci/install-servers
        pytest.skip("tsc is not installed: the move matched what was expected, but the result was not type-checked")
    import subprocess

    checked = subprocess.run([tsc, "--noEmit", "-p", "web"], cwd=copy, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_server_is_told_that_src_is_an_import_root(tmp_path: Path) -> None:
    """basedpyright did not know `src/` is an import root, so `mypkg.Thing` in the tests stayed
    unresolved for it (the graph caught it). It is now given src/ as an extra path: its own answer
    covers the tests, and nothing is left for the graph to add."""
    require("basedpyright")
    root = tmp_path / "project"
    (root / "src" / "mypkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "src" / "mypkg" / "__init__.py").write_text("from .core import Thing\n\n__all__ = [\"Thing\"]\n")
    (root / "src" / "mypkg" / "core.py").write_text("class Thing:\n    pass\n")
    (root / "tests" / "test_thing.py").write_text("import mypkg\n\n\ndef test_thing():\n    assert mypkg.Thing()\n")
    with served_engine(root, "basedpyright") as engine:
        plan = engine.plan(Rename("src/mypkg/core.py:Thing", "Widget"))
        engine.edits().apply(plan.edit)
    assert plan.source.value == "lsp"
    assert "mypkg.Widget()" in (root / "tests" / "test_thing.py").read_text()
    assert not any("by the project graph" in w for w in plan.warnings), plan.warnings


def test_an_error_that_quotes_a_renamed_name_is_not_new(tmp_path: Path) -> None:
    """A type checker's message names the type: after renaming Box, the old '"Box" is not
    iterable' reads '"Crate" is not iterable'. That is the same error, not a new one; an error
    the rename really causes is still reported."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text(
        "class Box:\n    pass\n\n\ndef use(box: Box) -> None:\n    for item in box:\n        print(item)\n"
    )
    (tmp_path / "n.py").write_text('from m import Box\n\nLABEL: Box = "x"\n')
    with served_engine(tmp_path, "basedpyright") as engine:
        before = [d.message.split("\n")[0] for d in engine.diagnostics("m.py") if d.severity == "error"]
        outcome = engine.edits().apply(engine.plan(Rename("m.py:Box", "Crate")).edit)
        after = [d.message.split("\n")[0] for d in engine.diagnostics("m.py") if d.severity == "error"]
    assert before == ['"Box" is not iterable'] and after == ['"Crate" is not iterable']
    assert outcome.diagnostics_checked and outcome.new_diagnostics == []
    assert "Crate" in (tmp_path / "n.py").read_text()



# -- a project whose own type-checker config narrows the server's files --------------------------

NARROWED = SAMPLE.parent / "narrowed-config"


@pytest.mark.parametrize("config", ["pyproject", "pyrightconfig.json excluding the sources"])
def test_a_narrowing_type_checker_config_does_not_make_the_server_drop_out(tmp_path: Path, config: str) -> None:
    """basedpyright reads the project's own config; one whose include names a typing-examples
    file (or whose exclude names the sources) left every source file outside its program, and
    prepareRename answered "nothing to rename here", so the rename fell back to jedi."""
    require("basedpyright")
    root = tmp_path / "ledger"
    shutil.copytree(NARROWED, root)
    if config != "pyproject":
        (root / "pyrightconfig.json").write_text('{\n  // the sources are left to another tool\n  "exclude": ["ledger"],\n}\n')
    with served_engine(root, "basedpyright") as engine:
        plan = engine.plan(Rename("ledger/entries.py:total", "grand_total"))
    assert plan.source.value == "lsp" and plan.warnings[0] == "from basedpyright", plan.warnings
    assert any("narrows the server's files" in note for note in plan.warnings)
    assert sorted(path for c in plan.edit.operations for path in paths_of(c)) == ["ledger/__init__.py", "ledger/entries.py", "ledger/report.py", "tests/test_ledger.py"]


def test_the_whole_workspace_note_is_said_on_the_first_command_only(tmp_path: Path) -> None:
    """"pyproject.toml sets include…" came with every command, though it asks nothing of the user:
    said once per workspace, whether the next command runs in the same process (the daemon)
    or a new one (the in-process CLI)."""
    require("basedpyright")
    root = tmp_path / "ledger"
    shutil.copytree(NARROWED, root)

    def narrowing(plan: RefactorPlan) -> list[str]:
        return [note for note in plan.warnings if "narrows the server's files" in note]

    with served_engine(root, "basedpyright") as engine:
        first = engine.plan(Rename("ledger/entries.py:total", "grand_total"))
        again = engine.plan(Rename("ledger/entries.py:total", "sum_of_entries"))
    with served_engine(root, "basedpyright") as engine:
        later = engine.plan(Rename("ledger/entries.py:total", "grand_total"))
    assert first.source.value == again.source.value == later.source.value == "lsp"
    assert narrowing(first) == ["pyproject.toml sets include, which narrows the server's files; codegraft gives it "
                                "the whole workspace through .graft/servers/pyrightconfig.json (every other option "
                                "of the project's kept)"], first.warnings
    assert narrowing(again) == [] and narrowing(later) == [], (again.warnings, later.warnings)
    assert later.edit == first.edit  # the server still has the whole workspace: only the note is not repeated


def test_served_ranges_agree_with_the_tree_and_symbols_after_a_syntax_error_are_kept(tmp_path: Path) -> None:
    """basedpyright gives a multi-line assignment its first line only, and drops a class that
    follows a syntax error: the outline still covers the whole statement, keeps the class
    (labelled ast), and says the file's outline is of medium confidence, and why."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'm'\n")
    (tmp_path / "m.py").write_text(
        '__all__ = [\n    "Alpha",\n    "beta",\n]\n\n\nclass Alpha:\n    def run(self):\n        return 1\n\n\n'
        "def beta(:\n    pass\n\n\nclass Gamma:\n    def go(self):\n        return 2\n"
    )
    with served_engine(tmp_path, "basedpyright") as engine:
        listing = engine.outline("m.py")
    symbols = {s.name_path: s for top in listing.symbols for s in top.walk()}
    assert (symbols["__all__"].range.first_line, symbols["__all__"].range.last_line) == (1, 4)
    assert symbols["__all__"].source.value == "lsp"
    assert symbols["Gamma"].source.value == "ast" and symbols["Gamma/go"].source.value == "ast"
    assert listing.confidence.value == "medium"
    assert any("lacked 2 symbol(s)" in note and "Gamma" in note for note in listing.notes), listing.notes


def test_differential_diagnostics_compare_importers_and_ignore_errors_already_there(tmp_path: Path) -> None:
    """An error in an untouched importer is what a missed reference looks like: it is found.
    An error that was there before, in a touched file or not, is not new."""
    require("basedpyright")
    import hashlib

    from engine.edits.model import FileChange, WorkspaceEdit
    from engine.edits.session import EditOptions, NewErrors
    from engine.answers import TextEdit

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text("def helper() -> int:\n    return 1\n\n\nBROKEN: int = 'already wrong'\n")
    (tmp_path / "user.py").write_text("from m import helper\n\nVALUE = helper()\nALSO: str = 3\n")
    data = (tmp_path / "m.py").read_bytes()
    definition_only = WorkspaceEdit((FileChange(
        "m.py", (TextEdit(Range(Position(0, 4), Position(0, 10)), "assist"),), hashlib.sha256(data).hexdigest()),))
    with served_engine(tmp_path, "basedpyright") as engine:
        engine.index()
        with pytest.raises(NewErrors, match="user.py") as refused:
            engine.edits().apply(definition_only, EditOptions(fail_on_new_errors=True))
        assert "already wrong" not in refused.value.message and "ALSO" not in refused.value.message
        assert (tmp_path / "m.py").read_bytes() == data
        plan = engine.plan(Rename("m.py:helper", "assist"))
        outcome = engine.edits().apply(plan.edit, EditOptions(fail_on_new_errors=True))
    assert outcome.diagnostics_checked and outcome.new_diagnostics == []
    assert "checked 2 of 2 file(s): no new errors (basedpyright" in outcome.diagnostics_note


def test_references_the_server_left_out_are_added_and_the_answer_labelled_partial(tmp_path: Path) -> None:
    """The package's stub does not declare its submodule, so basedpyright cannot follow
    ``pkg.core.compute`` in the tests, and its answer looked complete (lsp, high). The graph
    resolves them (the package's __init__ binds the submodule)."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("from . import core\n")
    (tmp_path / "src" / "pkg" / "__init__.pyi").write_text("")
    (tmp_path / "src" / "pkg" / "core.py").write_text("def compute() -> int:\n    return 1\n\n\nTWICE = compute() * 2\n")
    (tmp_path / "src" / "pkg" / "core.pyi").write_text("def compute() -> int: ...\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text("import pkg.core\n\n\ndef test_compute() -> None:\n    assert pkg.core.compute() == 1\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        found = engine.references("src/pkg/core.py:compute")
    places = {(loc.file, loc.range.start.line + 1) for loc in found.locations}
    assert {("tests/test_core.py", 5), ("src/pkg/core.py", 5)} <= places
    assert found.source.value == "lsp" and found.confidence.value == "medium"
    assert any(note.startswith("partial: basedpyright left out") for note in found.notes), found.notes


def test_renaming_an_alias_whose_stub_declares_a_function_leaves_the_original(tmp_path: Path) -> None:
    """more-itertools: `padnone = pad_none`, and recipes.pyi declares `def padnone(...)`. Renaming
    the alias through the stub made basedpyright rename pad_none as well (`pad_nones = pad_nones`)."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .recipes import *\n")
    (tmp_path / "pkg" / "recipes.py").write_text(
        "__all__ = ['pad_none', 'padnone']\n\n\ndef pad_none(items):\n    yield from items\n\n\npadnone = pad_none\n")
    (tmp_path / "pkg" / "recipes.pyi").write_text(
        "from typing import Iterable, Iterator\n\n__all__ = ['pad_none', 'padnone']\n\n"
        "def pad_none(items: Iterable[int]) -> Iterator[int]: ...\ndef padnone(items: Iterable[int]) -> Iterator[int]: ...\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        plan = engine.plan(Rename("pkg/recipes.py:padnone", "pad_nones"))
        engine.edits().apply(plan.edit)
    text = (tmp_path / "pkg" / "recipes.py").read_text()
    assert "def pad_none(items)" in text and "pad_nones = pad_none\n" in text and "'pad_none', 'pad_nones'" in text
    assert "def pad_none(items: Iterable[int])" in (tmp_path / "pkg" / "recipes.pyi").read_text()


def test_uses_through_a_package_bound_submodule_are_renamed_with_the_server(tmp_path: Path) -> None:
    """cachetools: keys.py has a keys.pyi stub and its package stub does not declare the
    submodule, so basedpyright does not resolve ``cachetools.keys.typedkey`` in the tests and
    its rename left them: the suite went red with exit 0. The graph resolves them."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from . import keys\n")
    (package / "__init__.pyi").write_text("")
    (package / "keys.py").write_text("def typedkey(*args):\n    return args\n")
    (package / "keys.pyi").write_text("def typedkey(*args: object) -> tuple[object, ...]: ...\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_keys.py").write_text(
        "import pkg.keys\n\n\ndef test_it(key=pkg.keys.typedkey):\n    assert key(1) == pkg.keys.typedkey(1)\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        plan = engine.plan(Rename("src/pkg/keys.py:typedkey", "typed_hashkey"))
        engine.edits().apply(plan.edit)
    assert plan.source.value == "lsp"
    assert (tmp_path / "tests" / "test_keys.py").read_text().count("pkg.keys.typed_hashkey") == 2
    assert "typedkey" not in (package / "keys.pyi").read_text()


def test_uses_on_untyped_receivers_are_renamed_when_jedi_follows_them_and_named_when_nobody_can(tmp_path: Path) -> None:
    """cachetools: a test helper takes ``cache`` untyped, so basedpyright leaves
    ``cache.currsize`` and the suite went red. jedi types the parameter from its callers: those
    uses are renamed. ``pickle.loads(...)`` holds nothing anyone can type: the use stays, and a
    warning names it; a homonym on another class stays silently."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'm'\n")
    (tmp_path / "m.py").write_text(
        "class Cache:\n    @property\n    def currsize(self):\n        return 0\n\n\n"
        "class Meter:\n    currsize = 3\n")
    (tmp_path / "test_m.py").write_text(
        "import pickle\n\nfrom m import Cache, Meter\n\n\n"
        "def check(cache):\n    return cache.currsize\n\n\n"
        "def test_it():\n    assert check(Cache()) == 0\n    copy = pickle.loads(pickle.dumps(Cache()))\n"
        "    assert copy.currsize == 0\n    assert Meter().currsize == 3\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        plan = engine.plan(Rename("m.py:Cache/currsize", "current_size"))
        engine.edits().apply(plan.edit)
    assert plan.source.value == "lsp"
    text = (tmp_path / "test_m.py").read_text()
    assert "return cache.current_size" in text and "copy.currsize" in text and "Meter().currsize" in text
    assert any("resolved to the renamed symbol by jedi" in w and "test_m.py:7" in w for w in plan.warnings), plan.warnings
    assert any("receivers of unknown type" in w and "test_m.py:13" in w and "test_m.py:14" not in w for w in plan.warnings), plan.warnings


def test_a_src_layout_package_shadowed_by_typeshed_stubs_is_the_one_renamed_through(tmp_path: Path) -> None:
    """basedpyright ships typeshed's cachetools stubs; with the package under src/ it resolved the
    tests' ``import cachetools`` to them, and a rename of Cache.currsize left every test use."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'cachetools'\n")
    (tmp_path / "src" / "cachetools").mkdir(parents=True)
    (tmp_path / "src" / "cachetools" / "__init__.py").write_text(
        "class Cache:\n    @property\n    def currsize(self) -> int:\n        return 0\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_cache.py").write_text(
        "import cachetools\n\n\ndef test_it() -> None:\n    cache = cachetools.Cache()\n    assert cache.currsize == 0\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        plan = engine.plan(Rename("src/cachetools/__init__.py:Cache/currsize", "current_size"))
    assert plan.source.value == "lsp"
    assert sorted(path for change in plan.edit.operations for path in paths_of(change)) == ["src/cachetools/__init__.py", "tests/test_cache.py"]
    assert not any("jedi" in warning for warning in plan.warnings), plan.warnings  # the server's own answer


def test_self_uses_in_a_same_named_class_of_another_module_are_not_renamed(tmp_path: Path) -> None:
    """boltons: urlutils.py has its own copy of OrderedMultiDict (with its own _insert), then
    imports dictutils' over it. basedpyright took the copy's ``self._insert`` calls for the
    renamed method's; the graph resolves them to the copy's own _insert, and they stay."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    body = "    def _insert(self, k, v):\n        self[k] = v\n\n    def add(self, k, v):\n        self._insert(k, v)\n"
    (package / "dictutils.py").write_text("class OrderedMultiDict(dict):\n" + body)
    (package / "urlutils.py").write_text(
        "class OrderedMultiDict(dict):\n" + body + "\n\ntry:\n    from .dictutils import OrderedMultiDict\nexcept ImportError:\n    pass\n\n\n"
        "class QueryParamDict(OrderedMultiDict):\n    pass\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        plan = engine.plan(Rename("pkg/dictutils.py:OrderedMultiDict/_insert", "_append_item"))
        engine.edits().apply(plan.edit)
    assert (package / "dictutils.py").read_text().count("_append_item") == 2
    assert "_append_item" not in (package / "urlutils.py").read_text()


def test_a_property_with_a_setter_is_renamed_with_every_self_use_in_its_class(tmp_path: Path) -> None:
    """pyflakes' Checker.futuresAllowed: the graph resolves ``self.futuresAllowed`` to the
    setter, which is the same property as the getter the rename started from; the server's
    edits of those uses stay (they were taken back as another class's: 708 red tests)."""
    require("basedpyright")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'm'\n")
    (tmp_path / "m.py").write_text(
        "class Checker:\n    def __init__(self):\n        self._allowed = True\n\n    @property\n    def futuresAllowed(self):\n"
        "        return self._allowed\n\n    @futuresAllowed.setter\n    def futuresAllowed(self, value):\n        self._allowed = value\n\n"
        "    def handle(self):\n        if self.futuresAllowed:\n            self.futuresAllowed = False\n        return self.futuresAllowed\n")
    with served_engine(tmp_path, "basedpyright") as engine:
        plan = engine.plan(Rename("m.py:Checker/futuresAllowed[0]", "futures_allowed"))
        engine.edits().apply(plan.edit)
    text = (tmp_path / "m.py").read_text()
    assert "futuresAllowed" not in text and text.count("futures_allowed") == 6, text

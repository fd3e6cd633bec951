"""The graft CLI: JSON shapes, text output, exit codes, and bad input that must change nothing."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from frontends.cli import daemon_client, entry
from frontends.cli.main import main
from tests.conftest import SAMPLE, tree_fingerprint
from tests.test_outlines import SOURCE_FILES

SYMBOL_KEYS = {"name", "name_path", "kind", "file", "line", "end_line", "source", "confidence"}


THROUGH_DAEMON = False
"""Whether ``run`` hands each call to the workspace's daemon: every test here runs both ways,
and must see the same output and exit status either way (issue 17)."""


@pytest.fixture(scope="module")
def daemons() -> Iterator[set[Path]]:
    """The shared fixture's daemon, kept for the whole module and stopped when it is done."""
    started: set[Path] = set()
    yield started
    for root in started:
        daemon_client.stop(root)


@pytest.fixture(params=["in-process", "daemon"], autouse=True)
def cli_mode(request: pytest.FixtureRequest, daemons: set[Path]) -> Iterator[str]:
    global THROUGH_DAEMON
    THROUGH_DAEMON = request.param == "daemon"
    _DAEMONS_STARTED.clear()
    yield request.param
    THROUGH_DAEMON = False
    for root in _DAEMONS_STARTED - {SAMPLE.resolve()}:  # a test's own copy: its daemon goes with it
        daemon_client.stop(root)
    daemons.update(_DAEMONS_STARTED & {SAMPLE.resolve()})


_DAEMONS_STARTED: set[Path] = set()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run graft in-process, or through the workspace's daemon (started by the thin client's
    own routing, as a user's call would). These tests are about the CLI, so symbols come from
    the syntax tree unless a test asks otherwise; language-server sources are tested in
    test_lsp_e2e.py."""
    if "--source" not in argv:
        argv = ("--source", "ast", *argv)
    try:
        code = _through_daemon(list(argv)) if THROUGH_DAEMON else main(list(argv))
    except SystemExit as exit_:  # argparse reports usage errors this way
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _through_daemon(argv: list[str]) -> int:
    command, options = entry.scan_call(argv)
    root = Path(options["--root"]) if "--root" in options else Path.cwd()
    if command is None or not root.is_dir() or entry._asks_for_help(argv):
        return main(argv)  # the thin client answers these itself (tested in test_daemon.py)
    root = root.resolve()
    if daemon_client.status(root) is None:
        daemon_client.start(root)
    _DAEMONS_STARTED.add(root)
    call = daemon_client.Call(argv, str(Path.cwd()), dict(os.environ), False, False, None)
    return daemon_client.run(root, call, sys.stdout, sys.stderr)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = run(capsys, "--json", *argv)
    return code, json.loads(out), err


def test_outline_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run_json(capsys, "--root", str(SAMPLE), "outline", "shop/models.py")
    assert code == 0 and data["ok"] is True
    assert (data["file"], data["language"], data["source"], data["confidence"]) == ("shop/models.py", "python", "ast", "high")
    order = next(s for s in data["symbols"] if s["name"] == "Order")
    assert SYMBOL_KEYS | {"children"} <= set(order)
    assert (order["kind"], order["line"], order["end_line"], order["file"]) == ("class", 28, 67, "shop/models.py")
    status = next(c for c in order["children"] if c["name"] == "Status")
    assert status["name_path"] == "Order/Status" and status["children"][0]["name_path"] == "Order/Status/OPEN"


def test_options_may_follow_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "outline", "shop/util.py", "--root", str(SAMPLE), "--json")
    assert code == 0 and json.loads(out)["file"] == "shop/util.py"


def test_outline_text_has_ranges_signatures_and_source_tags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(SAMPLE), "outline", "shop/models.py")
    assert code == 0
    assert out.splitlines()[0] == "# shop/models.py (python): symbols from ast, confidence high"
    assert "51-57    add[2]  def add(self, item_or_sku, quantity=1, unit_price=Decimal(\"0\")) …   [method · ast]" in out
    # A nested function is indented one level deeper than its method.
    assert "64-65      line  def line(item: LineItem) -> str …   [function · ast]" in out


def test_find_json_workspace_wide(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run_json(capsys, "--root", str(SAMPLE), "find", "Store/Restock")
    assert code == 0
    [match] = data["matches"]
    assert SYMBOL_KEYS <= set(match) and "children" not in match
    assert match["file"] == "go/inventory/restock.go" and match["address"] == "go/inventory/restock.go:Store/Restock"
    assert data["files_searched"] == len(SOURCE_FILES)


def test_find_with_kind(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(SAMPLE), "find", "Count", "--kind", "interface")
    assert code == 1 and out == ""
    code, out, _ = run(capsys, "--root", str(SAMPLE), "find", "Counter", "--kind", "interface")
    assert code == 0 and out.startswith("go/inventory/inventory.go:Counter   interface   lines 22-24")


def test_read_prints_header_with_hash_and_mtime_then_gutter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--root", str(SAMPLE), "read", "shop/models.py:LineItem/total")
    assert code == 0
    header, *body = out.splitlines()
    digest = hashlib.sha256((SAMPLE / "shop/models.py").read_bytes()).hexdigest()
    assert f"sha256={digest}" in header and "mtime=" in header and "lines 23-25" in header
    assert body == [
        "23 |     @property",
        "24 |     def total(self) -> Decimal:",
        "25 |         return self.unit_price * self.quantity",
    ]


def test_read_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run_json(capsys, "--root", str(SAMPLE), "read", "rust/src/lib.rs:Entry/new")
    assert code == 0
    assert (data["start_line"], data["end_line"]) == (34, 36)
    assert data["text"].splitlines()[0] == "    pub fn new(account: &str, amount: i64) -> Self {"
    assert data["symbol"]["source"] == "ast" and len(data["sha256"]) == 64 and data["mtime"].endswith("Z")


def test_read_by_position(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run_json(capsys, "--root", str(SAMPLE), "read", "web/cart.ts:31")
    assert code == 0 and data["symbol"]["name_path"] == "Cart/add[2]"


def test_symbols_of_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run_json(capsys, "--root", str(SAMPLE), "symbols", "go")
    assert code == 0
    assert [f["file"] for f in data["files"]] == ["go/inventory/inventory.go", "go/inventory/restock.go"]
    assert data["skipped"] == []


def test_not_found_exits_1_with_reason_and_suggestions(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, err = run_json(capsys, "--root", str(SAMPLE), "find", "shop/models.py:Order/totl")
    assert code == 1 and data["ok"] is False
    assert data["error"]["code"] == "not_found"
    assert "shop/models.py:Order/total" in data["error"]["suggestions"]
    assert "no symbol Order/totl in shop/models.py" in err


def test_ambiguous_read_lists_ready_to_paste_candidates(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, err = run_json(capsys, "--root", str(SAMPLE), "read", "total")
    assert code == 1 and data["error"]["code"] == "ambiguous"
    assert [c["address"] for c in data["error"]["candidates"]] == [
        "java/com/example/Ledger.java:Ledger/total", "shop/models.py:LineItem/total", "shop/models.py:Order/total",
        "web/cart.ts:Cart/total",
    ]
    assert "is ambiguous: 4 candidates" in err


def test_an_overload_set_reads_as_its_implementation(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run_json(capsys, "--root", str(SAMPLE), "read", "Order/add")
    assert code == 0 and data["symbol"]["name_path"] == "Order/add[2]"
    assert [o["address"] for o in data["overloads"]] == ["shop/models.py:Order/add[0]", "shop/models.py:Order/add[1]"]


@pytest.mark.parametrize("argv", [["read", "Order.total"], ["find", "x.py:Order//b"]])
def test_malformed_address_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, data, err = run_json(capsys, "--root", str(SAMPLE), *argv)
    assert code == 2 and data["error"]["code"] == "malformed_address"
    assert "^" in err


@pytest.mark.parametrize("argv", [[], ["outline"], ["nosuch"], ["find", "x", "--kind", "gizmo"]])
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run(capsys, "--root", str(SAMPLE), *argv)
    assert code == 2 and "usage:" in err


@pytest.mark.parametrize("argv", [["outline"], ["nosuch"], ["find", "x", "--kind", "gizmo"], ["--source", "bogus", "outline", "a.py"],
                                  ["index", "--max-file-bytes", "many"]])
def test_usage_errors_answer_in_json_when_asked(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, "--json", "--root", str(SAMPLE), *argv)
    assert code == 2 and "usage:" in err
    data = json.loads(out)
    assert data["ok"] is False and data["error"]["code"] == "usage" and "usage:" in data["error"]["message"]


def _commands() -> list[list[str]]:
    from frontends.cli.arguments import FRONT_ENDS, build_parser

    def subcommands(parser: Any) -> dict[str, Any]:
        found = [a for a in parser._actions if isinstance(getattr(a, "choices", None), dict)]
        return found[0].choices if found else {}

    listed = []
    for name, sub in subcommands(build_parser()).items():
        if name in FRONT_ENDS:
            continue
        listed.append([name])
        listed += [[name, inner] for inner in subcommands(sub)]
    return listed


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code, out, err = run(capsys, *command, "--help")
    assert code == 0 and out.startswith("usage: graft") and not err, err


def test_unsafe_path_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, data, err = run_json(capsys, "--root", str(SAMPLE / "shop"), "outline", "../web/cart.ts")
    assert code == 1 and data["error"]["code"] == "unsafe_path" and "outside the workspace" in err


def test_missing_root_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--root", str(tmp_path / "nope"), "symbols")
    assert code == 2 and "is not a folder" in err


# -- awkward input: a clear message, no crash, nothing written ----------------


@pytest.fixture
def awkward(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    files: dict[str, bytes] = {
        "binary.py": b"\x7fELF\x00\x00\x01",
        "latin1.py": "s = 'caf\xe9'\n".encode("latin-1"),
        "crlf.py": b"class A:\r\n    def m(self):\r\n        pass\r\n\r\ndef f():\r\n    return 1\r\n",
        "bom.py": b"\xef\xbb\xbfdef first():\n    pass\n",
        "empty.py": b"",
        "big.py": b"x = 1\n" * 900_000,
        "broken.py": b"def ok():\n    pass\n\ndef broken(:\n    return\n\nclass Later:\n    pass\n",
        "garbage.py": b")))(((\n" * 50 + b"def survivor():\n    pass\n",
        "notes.txt": b"def looks_like_code():\n",
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    return tmp_path


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("binary.py", "binary.py: binary file (it contains NUL bytes)"),
        ("latin1.py", "latin1.py: not valid UTF-8 (byte 0xe9 on line 1)"),
        ("big.py", "big.py: 5.1 MiB is over the 4.0 MiB limit for source files (raise it with --max-file-bytes N)"),
    ],
)
def test_unreadable_files_are_refused_clearly(
    capsys: pytest.CaptureFixture[str], awkward: Path, name: str, message: str
) -> None:
    before = tree_fingerprint(awkward)
    code, data, err = run_json(capsys, "--root", str(awkward), "outline", name)
    assert code == 1 and data["error"]["code"] == "unreadable_file" and message in err
    assert tree_fingerprint(awkward) == before


def test_crlf_bom_and_empty_files_outline_exactly(capsys: pytest.CaptureFixture[str], awkward: Path) -> None:
    before = tree_fingerprint(awkward)
    code, data, _ = run_json(capsys, "--root", str(awkward), "outline", "crlf.py")
    assert code == 0
    assert [(s["name_path"], s["line"], s["end_line"]) for s in data["symbols"]] == [("A", 1, 3), ("f", 5, 6)]
    assert data["symbols"][0]["children"][0]["name_path"] == "A/m"
    code, data, _ = run_json(capsys, "--root", str(awkward), "outline", "bom.py")
    assert code == 0 and data["symbols"][0]["selection"] == {"line": 1, "column": 5, "end_column": 10}
    code, out, _ = run(capsys, "--root", str(awkward), "outline", "empty.py")
    assert code == 0 and "(no symbols)" in out
    code, out, _ = run(capsys, "--root", str(awkward), "read", "crlf.py:A/m")
    assert code == 0 and out.splitlines()[1:] == ["2 |     def m(self):", "3 |         pass"]
    assert tree_fingerprint(awkward) == before


def test_syntax_errors_lower_confidence_or_fall_back_to_regex(capsys: pytest.CaptureFixture[str], awkward: Path) -> None:
    code, data, _ = run_json(capsys, "--root", str(awkward), "outline", "broken.py")
    assert code == 0 and (data["source"], data["confidence"]) == ("ast", "medium")
    assert "ok" in [s["name"] for s in data["symbols"]] and "Later" in [s["name"] for s in data["symbols"]]
    assert data["notes"] == ["the file has syntax errors; symbols near them may be missing or cut short"]
    code, data, _ = run_json(capsys, "--root", str(awkward), "outline", "garbage.py")
    assert code == 0 and (data["source"], data["confidence"]) == ("regex", "low")
    assert [s["name"] for s in data["symbols"]] == ["survivor"]
    assert data["symbols"][0]["source"] == "regex"


def test_unknown_language_uses_generic_patterns(capsys: pytest.CaptureFixture[str], awkward: Path) -> None:
    code, data, _ = run_json(capsys, "--root", str(awkward), "outline", "notes.txt")
    assert code == 0 and data["language"] is None and data["source"] == "regex"
    assert [s["name"] for s in data["symbols"]] == ["looks_like_code"]


def test_symbols_lists_skipped_files_with_reasons(capsys: pytest.CaptureFixture[str], awkward: Path) -> None:
    before = tree_fingerprint(awkward)
    code, data, err = run_json(capsys, "--root", str(awkward), "symbols")
    assert code == 0
    skipped = {s["path"]: s["reason"] for s in data["skipped"]}
    assert set(skipped) == {"binary.py", "latin1.py", "big.py"}
    assert "skipped big.py: 5.1 MiB is over" in err
    assert "crlf.py" in [f["file"] for f in data["files"]]
    assert tree_fingerprint(awkward) == before


def test_console_script_runs(tmp_path: Path) -> None:
    graft = Path(sys.executable).with_name("graft")
    assert graft.exists(), "the package is not installed: pip install -e '.[test]'"
    result = subprocess.run(
        [str(graft), "--root", str(SAMPLE), "--json", "--source", "ast", "find", "Entry/new"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["matches"][0]["address"] == "rust/src/lib.rs:Entry/new"


# -- the project graph from the command line -------------------------------------


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "sample"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".graft"))
    return target


def test_index_json_and_stats(capsys: pytest.CaptureFixture[str], sample_copy: Path) -> None:
    code, data, _ = run_json(capsys, "--root", str(sample_copy), "index", "--stats")
    assert code == 0 and data["mode"] == "cold" and data["files"] == len(SOURCE_FILES)
    assert data["files_by_language"]["python"] == 6 and data["symbols_by_source"]["regex"] == 6
    assert {"contains", "imports", "calls", "inherits", "tested_by"} <= set(data["edges_by_kind"])
    code, out, _ = run(capsys, "--root", str(sample_copy), "index", "--stats")
    assert code == 0 and "(warm: 0 extracted" in out and "edges by kind:" in out


def test_graph_queries_from_the_command_line(capsys: pytest.CaptureFixture[str], sample_copy: Path) -> None:
    root = ("--root", str(sample_copy))
    code, data, _ = run_json(capsys, *root, "graph", "callers", "shop/util.py:round_cents")
    assert code == 0 and {e["from"] for e in data["edges"]} == {
        "shop/pricing.py:apply_discount", "shop/pricing.py:with_vat", "shop/pricing.py:HalfPrice/apply", "shop/util.py:money"
    }
    assert all(e["source"] == "ast" and e["confidence"] == "medium" for e in data["edges"])
    code, data, _ = run_json(capsys, *root, "graph", "affected-tests", "shop/pricing.py:with_vat")
    assert [t["address"] for t in data["tests"]] == ["tests/test_shop.py", "tests/test_shop.py:test_vat_and_rules"]
    code, data, _ = run_json(capsys, *root, "graph", "impact", "shop/models.py:LineItem", "--depth", "1")
    assert {d["address"] for d in data["dependants"]} >= {"shop/__init__.py", "shop/models.py:Order/add[2]", "tests/test_shop.py"}
    code, out, _ = run(capsys, *root, "graph", "dead-code")
    assert code == 0 and "shop/models.py:Order/Status   class   no import, call or subclass reaches it" in out
    # `from . import util` in pricing.py runs shop/__init__.py, which imports pricing: a real cycle.
    code, data, _ = run_json(capsys, *root, "graph", "cycles")
    assert data["cycles"] == [{"files": ["shop/__init__.py", "shop/pricing.py"], "edges": [
        {"from": "shop/__init__.py", "to": "shop/pricing.py", "line": 4},
        {"from": "shop/pricing.py", "to": "shop/__init__.py", "line": 8},
    ]}]
    code, out, _ = run(capsys, *root, "graph", "overview", "web", "--depth", "2")
    lines = out.splitlines()
    assert lines[:3] == ["web/", "  cart.ts   [typescript · ast]", "    interface CartLine  line 4"]
    assert "      method add[2]  line 30" in lines  # depth 2 shows members under their class


def test_graph_refusals(capsys: pytest.CaptureFixture[str], sample_copy: Path) -> None:
    code, data, err = run_json(capsys, "--root", str(sample_copy), "graph", "deps", "Nope/none")
    assert code == 1 and data["error"]["code"] == "not_found" and "nothing in the index is named Nope/none" in err
    code, data, err = run_json(capsys, "--root", str(sample_copy), "graph", "deps", "total")
    assert code == 1 and data["error"]["code"] == "ambiguous"
    assert "shop/models.py:LineItem/total" in [c["address"] for c in data["error"]["candidates"]]


# -- edits from the command line ----------------------------------------------------


def _edit_file(root: Path) -> Path:
    (root / "m.py").write_text("def f():\n    return 1\n")
    edit = {"changes": {"m.py": [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 5}}, "newText": "g"}]}}
    path = root / "edit.json"
    path.write_text(json.dumps(edit))
    return path


def test_apply_is_a_dry_run_by_default_then_applies_undoes_and_lists(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    edit = _edit_file(tmp_path)
    root = ("--root", str(tmp_path))
    code, data, _ = run_json(capsys, *root, "apply", str(edit))
    assert code == 0 and data["applied"] is False and "-def f():\n+def g():" in data["diff"]
    assert (tmp_path / "m.py").read_text().startswith("def f")
    code, data, _ = run_json(capsys, *root, "apply", str(edit), "--apply")
    assert code == 0 and data["applied"] and data["files"] == [{"path": "m.py", "status": "modified", "added": 1, "removed": 1}]
    transaction = data["transaction"]
    assert (tmp_path / "m.py").read_text().startswith("def g")
    code, data, _ = run_json(capsys, *root, "history")
    assert [t["transaction"] for t in data["transactions"]] == [transaction]
    code, data, _ = run_json(capsys, *root, "undo")
    assert code == 0 and (tmp_path / "m.py").read_text().startswith("def f")
    code, data, err = run_json(capsys, *root, "undo", transaction)
    assert code == 1 and data["error"]["code"] == "undo_refused"


def test_a_failing_verify_command_rolls_back(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    edit = _edit_file(tmp_path)
    code, data, err = run_json(capsys, "--root", str(tmp_path), "apply", str(edit), "--apply", "--verify", "grep -q 'def f' m.py")
    assert code == 1 and data["error"]["code"] == "verify_failed" and "rolled back" in err
    assert (tmp_path / "m.py").read_text().startswith("def f")
    code, data, _ = run_json(capsys, "--root", str(tmp_path), "apply", str(edit), "--apply", "--verify", "grep -q 'def g' m.py")
    assert code == 0 and (tmp_path / "m.py").read_text().startswith("def g")


def test_apply_refusals_and_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _edit_file(tmp_path)
    breaking = {"changes": {"m.py": [{"range": {"start": {"line": 0, "character": 5}, "end": {"line": 0, "character": 6}}, "newText": ""}]}}
    (tmp_path / "break.json").write_text(json.dumps(breaking))
    code, data, _ = run_json(capsys, "--root", str(tmp_path), "apply", str(tmp_path / "break.json"), "--apply")
    assert code == 1 and data["error"]["code"] == "syntax_errors"
    assert (tmp_path / "m.py").read_text() == "def f():\n    return 1\n"
    (tmp_path / "bad.json").write_text("{not json")
    code, data, _ = run_json(capsys, "--root", str(tmp_path), "apply", str(tmp_path / "bad.json"))
    assert code == 2 and data["error"]["code"] == "malformed_edit"
    (tmp_path / "escape.json").write_text(json.dumps({"changes": {"../x.py": []}}))
    code, data, _ = run_json(capsys, "--root", str(tmp_path), "apply", str(tmp_path / "escape.json"), "--apply")
    assert code == 1 and data["error"]["code"] == "unsafe_path"


def test_recover_reports_an_interrupted_transaction(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import subprocess
    import sys as system

    from tests.apply_worker import make_files
    from tests.conftest import REPO

    make_files(tmp_path, 3)
    subprocess.run([system.executable, "-m", "tests.apply_worker", str(tmp_path), "3", "exit-at", "replaced:1"], cwd=REPO, check=False)
    assert (tmp_path / "f000.txt").read_text().startswith("new")
    code, data, err = run_json(capsys, "--root", str(tmp_path), "recover")
    assert code == 0 and [r["action"] for r in data["recovered"]] == ["rolled-back"]
    assert "rolled back transaction" in err  # the engine recovers on start, and says so
    assert (tmp_path / "f000.txt").read_text().startswith("old")


def test_symbol_edit_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text("def keep():\n    return gone_soon()\n\n\ndef gone_soon():\n    return 1\n\n\ndef spare():\n    return 2\n")
    (tmp_path / "body.py").write_text("def spare():\n    return 3\n")
    root = ("--root", str(tmp_path))
    code, data, _ = run_json(capsys, *root, "replace", "m.py:spare", "--body-file", str(tmp_path / "body.py"))
    assert code == 0 and data["operation"] == "replace" and data["applied"] is False and "+    return 3" in data["diff"]
    assert (data["source"], data["confidence"]) == ("ast", "high")
    code, data, err = run_json(capsys, *root, "delete", "m.py:gone_soon")
    assert code == 1 and data["error"]["code"] == "references_remain" and "m.py:2 (in keep)" in err
    code, data, _ = run_json(capsys, *root, "delete", "m.py:spare", "--apply")
    assert code == 0 and data["applied"] and (tmp_path / "m.py").read_text().endswith("def gone_soon():\n    return 1\n")
    code, _, err = run(capsys, *root, "replace", "m.py:keep", "--body-file", str(tmp_path / "missing.py"))
    assert code == 2 and "cannot read" in err


def test_rename_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "m.py").write_text('__all__ = ["old"]\n\n\ndef old():\n    return 1\n\n\nVALUE = old()  # old is called here\n')
    code, data, err = run_json(capsys, "--root", str(tmp_path), "rename", "m.py:old", "new", "--apply")
    assert code == 0 and data["applied"] and data["source"] == "ast"
    assert (tmp_path / "m.py").read_text() == '__all__ = ["new"]\n\n\ndef new():\n    return 1\n\n\nVALUE = new()  # old is called here\n'
    assert "1 mention(s) of 'old' in text left as they are (comment: m.py:8)" in data["warnings"]
    code, data, _ = run_json(capsys, "--root", str(tmp_path), "rename", "m.py:new", "VALUE")
    assert code == 1 and data["error"]["code"] == "name_clash"


def test_the_thin_client_lets_a_server_answer_for_the_same_sources_as_the_engine() -> None:
    """startup.SERVER_SOURCES spells engine.choices.SourcePreference's values without importing enum."""
    from engine.choices import SourcePreference
    from frontends.cli import startup

    assert startup.SERVER_SOURCES == (SourcePreference.AUTO.value, SourcePreference.LSP.value)
    assert startup.may_use_server("find", {}) and startup.may_use_server("find", {"--source": "lsp"})
    assert not startup.may_use_server("find", {"--source": "ast"}) and not startup.may_use_server("search", {})


def test_an_option_that_turns_a_setting_off_says_so_once(capsys: pytest.CaptureFixture[str]) -> None:
    """``--no-mirrors``'s help once read "turn off: rename ... ; off leaves them": say what on does, then the option."""
    code, out, _ = run(capsys, "rename", "--help")
    help_text = " ".join(out.split())
    assert code == 0 and "turn off:" not in help_text
    assert "off leaves them, each named in a warning. On by default: --no-mirrors turns it off" in help_text

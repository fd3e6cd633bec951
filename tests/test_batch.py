"""``graft batch`` and the file tools on the command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from frontends.cli.main import main
from tests.conftest import SAMPLE, tree_fingerprint

RENAME = {"op": "rename", "address": "shop/pricing.py:apply_discount", "new_name": "discounted_total"}
MOVE = {"op": "move", "address": "shop/pricing.py:with_vat", "dest": "shop/tax.py", "create": True}
REFUSED = {"op": "rename", "address": "shop/pricing.py:with_vat", "new_name": "class"}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    return root


def graft(project: Path, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["--root", str(project), "--source", "ast", "--json", *argv])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def project_tests_pass(project: Path) -> bool:
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, capture_output=True, text=True)
    return ran.returncode == 0


def test_dry_run_shows_every_step_and_changes_nothing(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        '[[step]]\nop = "rename"\naddress = "shop/pricing.py:apply_discount"\nnew_name = "discounted_total"\n\n'
        '[[step]]\nop = "move"\naddress = "shop/pricing.py:with_vat"\ndest = "shop/tax.py"\ncreate = true\n'
    )
    before = tree_fingerprint(project)
    code, out, _ = graft(project, "batch", str(plan), capsys=capsys)
    assert code == 0 and out["applied"] is False
    assert [s["op"] for s in out["steps"]] == ["rename", "move"]
    assert "+def discounted_total" in out["diff"] and "+++ b/shop/tax.py" in out["diff"]
    assert tree_fingerprint(project) == before


def test_applied_batch_is_one_transaction_with_one_undo(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([RENAME, MOVE]))
    before = tree_fingerprint(project)
    code, out, _ = graft(project, "batch", str(plan), "--apply", "--allow-dirty", capsys=capsys)
    assert code == 0 and out["applied"] is True
    transactions = {s["transaction"] for s in out["steps"]}
    assert transactions == {out["transaction"]} and out["transaction"] is not None
    assert (project / "shop" / "tax.py").is_file() and project_tests_pass(project)
    code, _out, _ = graft(project, "undo", capsys=capsys)
    assert code == 0 and tree_fingerprint(project) == before


def test_a_refused_step_leaves_nothing_applied(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "steps:\n  - op: rename\n    address: shop/pricing.py:apply_discount\n    new_name: discounted_total\n"
        "  - op: rename\n    address: shop/pricing.py:with_vat\n    new_name: class\n"
    )
    before = tree_fingerprint(project)
    code, out, err = graft(project, "batch", str(plan), "--apply", "--allow-dirty", capsys=capsys)
    assert code != 0 and out["ok"] is False
    assert "step 2 (rename shop/pricing.py:with_vat)" in out["error"]["message"] and "nothing was changed" in out["error"]["message"]
    assert tree_fingerprint(project) == before


def test_each_keeps_the_steps_before_a_refusal(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [RENAME, REFUSED]}))
    code, out, _ = graft(project, "batch", str(plan), "--apply", "--each", "--allow-dirty", capsys=capsys)
    assert code != 0 and "steps 1-1 stay applied (--each)" in out["error"]["message"]
    assert "def discounted_total" in (project / "shop" / "pricing.py").read_text()


def test_a_malformed_plan_is_a_usage_error(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"op": "explode", "address": "x"}]))
    code, out, _ = graft(project, "batch", str(plan), capsys=capsys)
    assert code == 2 and "op must be one of" in out["error"]["message"]


def test_file_tools_on_the_command_line(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, view, _ = graft(project, "read-file", "shop/pricing.py", "--outline", capsys=capsys)
    assert code == 0 and view["outline"] and view["lines"]
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("def with_vat(")
    new.write_text("def with_vat_included(")
    code, out, _ = graft(project, "edit-file", "shop/pricing.py", "--old-file", str(old), "--new-file", str(new), "--apply", capsys=capsys)
    assert code == 2 and "--expect-sha256" in out["error"]["message"]
    code, out, _ = graft(project, "edit-file", "shop/pricing.py", "--old-file", str(old), "--new-file", str(new),
                         "--expect-sha256", view["sha256"], "--apply", "--allow-dirty", capsys=capsys)
    assert code == 0 and out["applied"] is True
    assert "def with_vat_included(" in (project / "shop" / "pricing.py").read_text()
    code, out, _ = graft(project, "search", "with_vat_included", "--glob", "*.py", capsys=capsys)
    assert code == 0 and out["hits"][0]["symbol"] == "with_vat_included"
    code, out, _ = graft(project, "find-files", "*.py", capsys=capsys)
    assert "shop/pricing.py" in out["files"]


def test_a_batch_applied_with_a_check_reports_it_and_is_labelled_by_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39: `graft batch PLAN --apply --check MODE` checks the net change as any apply does, and
    the batch's confidence follows that check (it was the steps' alone: `--check none` said high);
    with --each every step carries its own check."""
    from tests.test_lsp_e2e import require
    from tests.test_verification import _two_hops

    require("basedpyright")
    _two_hops(tmp_path)

    def batch(*steps: dict[str, str], options: tuple[str, ...]) -> dict[str, Any]:
        plan = tmp_path / "plan.json"
        plan.write_text(json.dumps(list(steps)))
        code = main(["--root", str(tmp_path), "--json", "batch", str(plan), "--apply", *options])
        out = json.loads(capsys.readouterr().out)
        assert code == 0, out
        return out

    full = batch({"op": "rename", "address": "a.py:f", "new_name": "first"}, options=("--check", "full"))
    verified = full["verified"]
    assert (verified["files_checked"], verified["files_in_scope"], verified["new_errors"]) == (4, 4, [])
    assert full["confidence"] == "high" and "checked 4 of 4 file(s): no new errors" in full["diagnostics_note"]
    unchecked = batch({"op": "rename", "address": "a.py:first", "new_name": "second"}, options=("--check", "none"))
    assert unchecked["verified"]["mode"] == "none" and unchecked["confidence"] == "medium"
    each = batch({"op": "rename", "address": "c.py:h", "new_name": "aitch"}, {"op": "rename", "address": "a.py:second", "new_name": "third"},
                 options=("--each", "--check", "full"))
    assert [s["verified"]["files_checked"] for s in each["steps"]] == [2, 4]
    assert all(s["verified"]["complete"] and s["confidence"] == "high" for s in each["steps"])
    assert "step 1: checked 2 of 2 file(s)" in each["diagnostics_note"] and "step 2: checked 4 of 4" in each["diagnostics_note"]

"""The Go corpus's judge (benchmarks/real_projects_go.py) fails what a wrong refactoring leaves:
nothing changed, a use left in a _test.go file (the tests do not build), a use left in a file
of another build (go build is green: the stale identifier is what catches it), a file left
unformatted, a file changed that did not mention the name, and it passes the right result."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
if TYPE_CHECKING:
    from benchmarks import real_projects_go as corpus
else:
    import real_projects_go as corpus

pytestmark = pytest.mark.skipif(shutil.which("go") is None or shutil.which("gofmt") is None, reason="go is not installed")

_FILES = {
    "go.mod": "module example.com/judge\n\ngo 1.22\n",
    "sum.go": "package judge\n\n// Total adds.\nfunc Total(a, b int) int { return a + b }\n",
    "other.go": "package judge\n\n// Twice doubles.\nfunc Twice(a int) int { return Total(a, a) }\n",
    "plan9.go": "//go:build plan9\n\npackage judge\n\nfunc onPlan9() int { return Total(1, 2) }\n",
    "sum_test.go": "package judge\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif Total(1, 2) != 3 {\n\t\tt.Fatal(\"no\")\n\t}\n}\n",
    "alone.go": "package judge\n\n// Alone says nothing of the others.\nconst Alone = 1\n",
}
_CASE: dict[str, object] = {"op": "rename", "address": "sum.go:Total", "new_name": "Sum", "old": "Total"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> corpus.Baseline:
    source = tmp_path_factory.mktemp("judge") / "module"
    source.mkdir()
    for name, text in _FILES.items():
        (source / name).write_text(text)
    return corpus.baseline_at(source, "judge", [])


def _copy(base: corpus.Baseline, tmp_path: Path) -> Path:
    root = tmp_path / "module"
    shutil.copytree(base.source, root)
    return root


def _rename(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.write_text(path.read_text().replace("Total", "Sum"))


def test_the_right_rename_passes(base: corpus.Baseline, tmp_path: Path) -> None:
    root = _copy(base, tmp_path)
    _rename(root, ["sum.go", "other.go", "plan9.go", "sum_test.go"])
    assert corpus.judge(root, base, _CASE) == ""


def test_a_no_op_fails(base: corpus.Baseline, tmp_path: Path) -> None:
    assert corpus.judge(_copy(base, tmp_path), base, _CASE).startswith("no-op")


def test_a_use_left_in_a_test_file_fails(base: corpus.Baseline, tmp_path: Path) -> None:
    root = _copy(base, tmp_path)
    _rename(root, ["sum.go", "other.go", "plan9.go"])
    assert corpus.judge(root, base, _CASE) == "new go vet findings: vet: ./sum_test.go: undefined: Total"


def test_a_use_left_in_a_file_of_another_build_fails_though_the_build_is_green(base: corpus.Baseline, tmp_path: Path) -> None:
    root = _copy(base, tmp_path)
    _rename(root, ["sum.go", "other.go", "sum_test.go"])
    assert corpus.judge(root, base, _CASE) == "stale: 1 'Total' names left (expected 0): plan9.go:5"
    assert corpus.judge(root, base, {**_CASE, "remaining_at": ["plan9.go:5"]}) == ""


def test_an_unformatted_file_fails(base: corpus.Baseline, tmp_path: Path) -> None:
    root = _copy(base, tmp_path)
    _rename(root, ["sum.go", "other.go", "plan9.go", "sum_test.go"])
    (root / "other.go").write_text((root / "other.go").read_text().replace("return Sum(a, a)", "return   Sum(a, a)"))
    assert corpus.judge(root, base, _CASE) == "gofmt -l lists other.go"


def test_a_file_that_did_not_mention_the_name_changed_fails(base: corpus.Baseline, tmp_path: Path) -> None:
    root = _copy(base, tmp_path)
    _rename(root, ["sum.go", "other.go", "plan9.go", "sum_test.go"])
    (root / "alone.go").write_text((root / "alone.go").read_text().replace("= 1", "= 2"))
    assert corpus.judge(root, base, _CASE) == "unexpected files changed: alone.go"

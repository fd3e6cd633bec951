"""``graft batch --repos`` progress on stderr when it is not a terminal (issue 48, item 4):
a line per repository, a heartbeat while none finishes, and ``--progress json`` events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frontends.cli.fleet_progress import HEARTBEAT_VARIABLE
from frontends.cli.main import main
from tests.test_fleet import PLAN, _repository


def _fleet(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    root = tmp_path / "repos"
    made = [_repository(root, name) for name in ("alpha", "bravo")]
    made.append(_repository(root, "charlie-no-symbol", symbol=False))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    return plan, root, made


def _batch(plan: Path, root: Path, out: Path, *more: str) -> int:
    return main(["--source", "ast", "--json", "batch", str(plan), "--repos", str(root), "--executor", "local",
                 "--out", str(out), *more])


def test_without_a_terminal_each_repository_has_its_line_and_silence_has_a_heartbeat(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plan, root, made = _fleet(tmp_path)
    monkeypatch.setenv(HEARTBEAT_VARIABLE, "3600")  # no heartbeat however slow the machine is
    code = _batch(plan, root, tmp_path / "quiet")
    lines = capsys.readouterr().err.splitlines()
    assert code == 1  # one refused
    finished = [line for line in lines if line.startswith("graft batch: [")]
    assert len(finished) == len(made)
    for repo in made:
        assert sum(f"{repo}: " in line for line in finished) == 1
    assert any(f"{made[-1]}: refused" in line for line in finished)
    assert lines[0] == "graft batch: 3 repositories to run, 1 at a time"
    assert len(lines) == len(made) + 1  # the start, then one per repository: nothing else

    # Every repository takes longer than this (git and the plan): some beat falls while none finishes.
    monkeypatch.setenv(HEARTBEAT_VARIABLE, "0.001")
    _batch(plan, root, tmp_path / "beating")
    lines = capsys.readouterr().err.splitlines()
    assert len([line for line in lines if line.startswith("graft batch: [")]) == len(made)
    beats = [line for line in lines if " s elapsed" in line and not line.startswith("graft batch: [")]
    assert beats and all(" running · " in line and "/3 done" in line for line in beats)


def test_progress_json_gives_one_event_per_line_for_ci(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    plan, root, made = _fleet(tmp_path)
    monkeypatch.setenv(HEARTBEAT_VARIABLE, "0.001")
    code = _batch(plan, root, tmp_path / "out", "--progress", "json")
    captured = capsys.readouterr()
    assert code == 1
    events = [json.loads(line) for line in captured.err.splitlines()]
    kinds = [event["event"] for event in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and "heartbeat" in kinds
    assert set(kinds) == {"start", "repo", "heartbeat", "end"}
    assert events[0]["total"] == 3 and events[0]["done"] == 0
    finished = [event for event in events if event["event"] == "repo"]
    assert sorted(event["repo"] for event in finished) == sorted(str(repo) for repo in made)
    assert [event["done"] for event in finished] == [1, 2, 3]
    assert {event["repo"]: event["status"] for event in finished}[str(made[-1])] == "refused"
    assert all(isinstance(event["seconds"], float) for event in finished)
    assert events[-1]["counts"] == {"planned": 2, "refused": 1} and events[-1]["repositories"] == 3
    assert json.loads(captured.out)["counts"] == {"planned": 2, "refused": 1}  # stdout's own answer is untouched


def test_progress_none_says_nothing_and_a_bad_interval_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    plan, root, _ = _fleet(tmp_path)
    assert _batch(plan, root, tmp_path / "out", "--progress", "none") == 1
    assert capsys.readouterr().err == ""
    monkeypatch.setenv(HEARTBEAT_VARIABLE, "soon")
    assert _batch(plan, root, tmp_path / "again", "--progress", "json") == 2
    assert HEARTBEAT_VARIABLE in capsys.readouterr().err

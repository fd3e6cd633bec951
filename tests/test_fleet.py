"""One plan across many repositories on real Dask (issue 18): an embedded LocalCluster of
processes, and an external ``dask scheduler`` with two ``dask worker`` processes started here on
127.0.0.1 and stopped by their pids; one of those workers is killed mid-task.

Six generated git repositories: four good, one without the symbol (refused), and one whose test
the rename breaks (verify_failed; rolled back with apply). Symbols come from the syntax tree
(jedi's rename) so that the tests cost Dask and git, not six language servers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
from distributed import Client

from engine import fleet
from engine.choices import SourcePreference
from frontends.cli.main import main
from tests.conftest import tree_fingerprint

DASK = shutil.which("dask", path=str(Path(sys.executable).parent))
PLAN = [{"op": "rename", "address": "pkg/core.py:old_api", "new_name": "new_api"}]
VERIFY = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
GOOD = ("alpha", "bravo", "charlie", "delta")


def _git(repo: Path, *argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t"}).stdout


def _repository(root: Path, name: str, *, symbol: bool = True, fragile: bool = False) -> Path:
    repo = root / name
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pyproject.toml").write_text(f"[project]\nname = '{name}'\n")
    (repo / "pkg" / "__init__.py").write_text("")
    core = "def old_api():\n    return 1\n" if symbol else "def other():\n    return 1\n"
    (repo / "pkg" / "core.py").write_text(core)
    (repo / "pkg" / "use.py").write_text("from pkg.core import old_api\n\n\ndef twice():\n    return 2 * old_api()\n"
                                         if symbol else "from pkg.core import other\n")
    test = "from pkg import use\n\n\ndef test_twice():\n    assert use.twice() == 2\n" if symbol else "def test_nothing():\n    pass\n"
    if fragile:  # looks the old name up in a way no refactoring can see: the rename breaks it
        test += "\n\ndef test_name():\n    from pkg import core\n    assert hasattr(core, 'old' + '_api')\n"
    (repo / "tests" / "test_core.py").write_text(test)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "initial")
    return repo


@pytest.fixture
def repos(tmp_path: Path) -> list[Path]:
    root = tmp_path / "repos"
    made = [_repository(root, name) for name in GOOD]
    made.append(_repository(root, "echo-no-symbol", symbol=False))
    made.append(_repository(root, "foxtrot-fragile", fragile=True))
    return made


def _by_name(rows: list[fleet.FleetRow]) -> dict[str, fleet.FleetRow]:
    names = [Path(row.repo).name for row in rows]
    assert len(names) == len(set(names)), "two rows for one repository"
    return {Path(row.repo).name: row for row in rows}


def _results(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / fleet.RESULTS).read_text().splitlines()]


def test_a_plan_only_run_on_an_embedded_cluster_writes_patches_and_changes_nothing(repos: list[Path], tmp_path: Path) -> None:
    before = {repo.name: tree_fingerprint(repo) for repo in repos}
    out = tmp_path / "out"
    rows = _by_name(fleet.run(PLAN, [str(r) for r in repos], out=out, executor="dask", workers=2,
                              options=fleet.FleetOptions(verify=VERIFY, source=SourcePreference.AST)))
    assert {name: row.status for name, row in rows.items()} == {
        **{name: "planned" for name in GOOD}, "echo-no-symbol": "refused", "foxtrot-fragile": "verify_failed"}
    assert "old_api" in rows["echo-no-symbol"].reason and rows["foxtrot-fragile"].verify_status not in (None, 0)
    assert "test_name" in rows["foxtrot-fragile"].verify_tail
    assert all(row.worker.startswith("tcp://127.0.0.1:") for row in rows.values())
    for repo in repos:
        assert tree_fingerprint(repo) == before[repo.name], f"{repo.name} was changed by a plan-only run"
        assert _git(repo, "status", "--porcelain") == ""
        row = rows[repo.name]
        if row.status == "planned":
            assert row.patch is not None and row.files == ["pkg/core.py", "pkg/use.py"]
            _git(repo, "apply", "--check", row.patch)
        else:
            assert row.patch is None and not (out / f"{repo.name}.patch").exists()
    written = _results(out)
    assert sorted(Path(str(r["repo"])).name for r in written) == sorted(repo.name for repo in repos)


def test_apply_writes_in_place_and_a_failed_verify_is_rolled_back(repos: list[Path], tmp_path: Path) -> None:
    fragile = next(r for r in repos if r.name == "foxtrot-fragile")
    untouched = tree_fingerprint(fragile)
    rows = _by_name(fleet.run(PLAN, [str(r) for r in repos], out=tmp_path / "out", executor="dask", workers=2,
                              options=fleet.FleetOptions(apply=True, verify=VERIFY, source=SourcePreference.AST)))
    assert [name for name, row in rows.items() if row.status == "applied"] == sorted(GOOD, key=list(rows).index)
    assert rows["foxtrot-fragile"].status == "verify_failed" and tree_fingerprint(fragile) == untouched
    for name in GOOD:
        repo = next(r for r in repos if r.name == name)
        assert "def new_api():" in (repo / "pkg" / "core.py").read_text()
        assert "old_api" not in (repo / "pkg" / "use.py").read_text()
        _git(repo, "apply", "--check", "-R", str(rows[name].patch))  # the patch is exactly what was written


def test_resume_skips_the_repositories_with_a_row(repos: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = fleet.run(PLAN, [str(r) for r in repos[:3]], out=out, executor="local",
                      options=fleet.FleetOptions(source=SourcePreference.AST))
    assert len(first) == 3 and all(row.worker == "local" for row in first)
    again = fleet.run(PLAN, [str(r) for r in repos], out=out, executor="local", resume=True,
                      options=fleet.FleetOptions(source=SourcePreference.AST))
    assert len(again) == len(repos) and len(_results(out)) == len(repos)  # three kept, three run: one row each


def test_the_python_api_takes_path_objects_or_strings(repos: list[Path], tmp_path: Path) -> None:
    """``repos`` as Path objects and ``out`` as a string: the rows name each repository as a string."""
    rows = fleet.run(PLAN, repos[:2], out=str(tmp_path / "out"), executor="local",
                     options=fleet.FleetOptions(source=SourcePreference.AST))
    assert [row.repo for row in rows] == [str(r) for r in repos[:2]]
    assert [json.loads(line)["repo"] for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()] == \
        [str(r) for r in repos[:2]]


def test_the_command_line_runs_a_fleet_and_says_what_failed(repos: list[Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    listing = tmp_path / "repos.txt"
    listing.write_text("# the fleet\n" + "\n".join(f"repos/{r.name}" for r in repos) + "\n")
    code = main(["--source", "ast", "--json", "batch", str(plan), "--repos", str(listing), "--executor", "local",
                 "--out", str(tmp_path / "out")])
    shown = json.loads(capsys.readouterr().out)
    assert code == 1  # one refused: the exit status says a repository failed
    assert shown["counts"] == {"planned": 5, "refused": 1}
    code = main(["batch", str(plan), "--repos", str(tmp_path / "missing.txt"), "--executor", "local"])
    assert code == 2 and "no such file or folder" in capsys.readouterr().err


@pytest.fixture
def external_cluster(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    """``dask scheduler`` and two ``dask worker`` processes (no nanny: the worker is the process
    that runs tasks), each in its own process group, stopped by their pids afterwards."""
    if DASK is None:
        pytest.skip("the dask command is not installed")
    scheduler_file = tmp_path / "scheduler.json"
    log = (tmp_path / "dask.log").open("wb")
    scheduler = subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(scheduler_file)], stdout=log, stderr=log, start_new_session=True)
    processes = [scheduler]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert time.monotonic() < deadline and scheduler.poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        workers = [subprocess.Popen([DASK, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                     "--host", "127.0.0.1"], stdout=log, stderr=log, start_new_session=True) for _ in range(2)]
        processes += workers
        yield address, workers
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def test_an_external_cluster_and_a_worker_killed_mid_task(repos: list[Path], tmp_path: Path,
                                                          external_cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    """The verify of one repository hangs the first time and says which worker runs it; that
    worker is killed (with the verify) after the change was written and before its commit. Dask
    gives the task to the other worker; the retry's engine rolls back what the killed one left,
    plans again and applies: the repository ends all-new, with one row."""
    address, workers = external_cluster
    victim = next(r for r in repos if r.name == "bravo")
    (victim / ".hang-once").write_text("")  # untracked: not part of any change
    marks = tmp_path / "marks"
    marks.mkdir()
    verify = (f"if [ -e .hang-once ]; then rm .hang-once; echo $PPID > {marks}/worker.pid; sleep 120; fi; {VERIFY}")
    with Client(address) as client:  # both workers registered before the run starts
        client.wait_for_workers(2, timeout=60)
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while not (marks / "worker.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int((marks / "worker.pid").read_text())
        assert pid in [w.pid for w in workers]
        os.killpg(pid, signal.SIGKILL)
        killed.append(pid)

    thread = threading.Thread(target=killer)
    thread.start()
    rows = _by_name(fleet.run(PLAN, [str(r) for r in repos], out=tmp_path / "out", scheduler=address,
                              options=fleet.FleetOptions(apply=True, verify=verify, source=SourcePreference.AST)))
    thread.join()
    assert killed, "the hanging verify never ran"
    survivor = next(w for w in workers if w.pid != killed[0])
    assert rows["bravo"].status == "applied", rows["bravo"].reason
    assert rows["bravo"].worker.startswith("tcp://127.0.0.1:")
    assert "def new_api():" in (victim / "pkg" / "core.py").read_text()
    assert "old_api" not in (victim / "pkg" / "use.py").read_text()
    assert not list((victim / ".graft" / "journal").iterdir())  # the killed transaction was recovered, not left
    assert survivor.poll() is None
    assert len(_results(tmp_path / "out")) == len(repos)
    assert {row.status for name, row in rows.items() if name in GOOD} == {"applied"}

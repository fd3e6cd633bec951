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
from distributed import Client, Scheduler

from engine import fleet
from engine.choices import SourcePreference
from engine.ports import FleetExecutor
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


def _repository(root: Path, name: str, *, symbol: bool = True, fragile: bool = False, red: bool = False) -> Path:
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
    if red:  # committed red: a test that fails with or without any change
        test += "\n\ndef test_broken():\n    assert 1 + 1 == 3\n"
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


@pytest.mark.parametrize("scheduler", ["embedded", "external"])
def test_apply_on_both_schedulers_rolls_back_a_failed_verify_and_says_so(
        scheduler: str, repos: list[Path], tmp_path: Path, request: pytest.FixtureRequest,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 45, item 1: the repository whose test the rename breaks is rolled back and reported
    as verify_failed with the command's output, on the embedded cluster and on an external
    scheduler alike, and the command's exit status says a repository failed."""
    where = ["--workers", "2"] if scheduler == "embedded" else ["--scheduler", _external(request).address]
    fragile = next(r for r in repos if r.name == "foxtrot-fragile")
    untouched = tree_fingerprint(fragile)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    code = main(["--source", "ast", "--json", "batch", str(plan), "--repos", str(tmp_path / "repos"), "--apply",
                 "--verify", VERIFY, "--out", str(tmp_path / "out"), *where])
    shown = json.loads(capsys.readouterr().out)
    assert code == 1
    rows = _by_name([fleet.FleetRow.from_json(row) for row in shown["rows"]])
    assert {name: row.status for name, row in rows.items()} == {
        **{name: "applied" for name in GOOD}, "echo-no-symbol": "refused", "foxtrot-fragile": "verify_failed"}
    failed = rows["foxtrot-fragile"]
    assert failed.verify_status not in (None, 0) and "test_name" in failed.verify_tail, failed.verify_tail
    assert failed.baseline_status == 0 and "rolled back" in failed.reason and failed.patch is None
    assert tree_fingerprint(fragile) == untouched
    assert all(row.worker.startswith("tcp://127.0.0.1:") for row in rows.values())
    for name in GOOD:
        repo = next(r for r in repos if r.name == name)
        assert "def new_api():" in (repo / "pkg" / "core.py").read_text()
        assert "old_api" not in (repo / "pkg" / "use.py").read_text()
        _git(repo, "apply", "--check", "-R", str(rows[name].patch))  # the patch is exactly what was written
    assert _results(tmp_path / "out") == shown["rows"]


def _external(request: pytest.FixtureRequest) -> "ExternalCluster":
    cluster: ExternalCluster = request.getfixturevalue("cluster")
    cluster.live_workers()
    return cluster


def test_resume_skips_the_repositories_with_a_row(repos: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = fleet.run(PLAN, [str(r) for r in repos[:3]], out=out, executor="local",
                      options=fleet.FleetOptions(source=SourcePreference.AST))
    assert len(first) == 3 and all(row.worker == "local" for row in first)
    for repo in repos[:3]:
        (repo / "pkg" / "core.py").unlink()  # run again, these would be refused: their kept rows show they were not
    again = fleet.run(PLAN, [str(r) for r in repos], out=out, executor="local", resume=True,
                      options=fleet.FleetOptions(source=SourcePreference.AST))
    assert len(again) == len(repos) and len(_results(out)) == len(repos)  # three kept, three run: one row each
    kept = _by_name(again)
    assert [kept[r.name].status for r in repos[:3]] == [row.status for row in first] == ["planned"] * 3


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


LOCK_LEASES = {"DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "5s",
               "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL": "1s"}
"""A killed worker's repository lock lapses after 5 s instead of Dask's 30: the retry waits less."""


class ExternalCluster:
    """``dask scheduler`` and ``dask worker`` processes (no nanny: the worker is the process that
    runs tasks) on 127.0.0.1, each in its own process group, stopped by their pids at the end.
    One per module: tests that kill a worker start a new one."""

    def __init__(self, folder: Path) -> None:
        assert DASK is not None
        self.log = (folder / "dask.log").open("wb")
        scheduler_file = folder / "scheduler.json"
        self.processes = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                            "--scheduler-file", str(scheduler_file)], stdout=self.log, stderr=self.log,
                                           start_new_session=True, env={**os.environ, **LOCK_LEASES})]
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert time.monotonic() < deadline and self.processes[0].poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        self.address: str = json.loads(scheduler_file.read_text())["address"]
        self.workers = [self.add_worker() for _ in range(2)]

    def add_worker(self) -> subprocess.Popen[bytes]:
        assert DASK is not None
        worker = subprocess.Popen([DASK, "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                   "--host", "127.0.0.1"], stdout=self.log, stderr=self.log, start_new_session=True,
                                  env={**os.environ, **LOCK_LEASES})
        self.processes.append(worker)
        return worker

    def live_workers(self, count: int = 2) -> list[subprocess.Popen[bytes]]:
        """Two live workers registered (a dead one replaced), before a run starts."""
        self.workers = [w for w in self.workers if w.poll() is None]
        while len(self.workers) < count:
            self.workers.append(self.add_worker())
        with Client(self.address) as client:
            client.wait_for_workers(count, timeout=60)
            deadline = time.monotonic() + 60
            while len(client.scheduler_info()["workers"]) > count and time.monotonic() < deadline:
                time.sleep(0.2)  # a killed worker's departure reaches the scheduler
        return self.workers

    def close(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        self.log.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExternalCluster]:
    if DASK is None:
        pytest.skip("the dask command is not installed")
    made = ExternalCluster(tmp_path_factory.mktemp("dask"))
    try:
        yield made
    finally:
        made.close()


def test_an_external_cluster_and_a_worker_killed_mid_task(repos: list[Path], tmp_path: Path, cluster: ExternalCluster) -> None:
    """The verify of one repository hangs the first time and says which worker runs it; that
    worker is killed (with the verify) after the change was written and before its commit. Dask
    gives the task to the other worker; the retry's engine rolls back what the killed one left,
    plans again and applies: the repository ends all-new, with one row."""
    workers = cluster.live_workers()
    address = cluster.address
    victim = next(r for r in repos if r.name == "bravo")
    (victim / ".hang-once").write_text("")  # untracked: not part of any change
    marks = tmp_path / "marks"
    marks.mkdir()
    verify = (f"if [ -e .hang-once ]; then rm .hang-once; echo $PPID > {marks}/worker.pid; sleep 120; fi; {VERIFY}")
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


# -- issue 48: exactly once per repository, a baseline for --verify, patches that apply ----------

INSERT = [{"op": "insert-after", "address": "pkg/core.py:old_api", "text": "def added():\n    return 3\n"}]
"""Not idempotent: applied twice, a repository would have two copies (counted on disk)."""


def _added(repo: Path) -> int:
    return (repo / "pkg" / "core.py").read_text().count("def added():")


def test_a_red_repository_is_baseline_failed_with_both_tails_and_its_baseline_is_cached(tmp_path: Path) -> None:
    """A repository whose tests fail without the change is neither blamed nor applied: its row
    has the verify's output before and after the change. The baseline is cached by the commit
    and the command: the second run (with --apply) takes it from the cache."""
    root = tmp_path / "repos"
    good, red = _repository(root, "alpha"), _repository(root, "golf-red", red=True)
    untouched = tree_fingerprint(red)
    options = fleet.FleetOptions(verify=VERIFY, source=SourcePreference.AST)
    rows = _by_name(fleet.run(PLAN, [good, red], out=tmp_path / "dry", executor="local", options=options))
    assert rows["alpha"].status == "planned" and rows["alpha"].baseline_status is None  # green after: no baseline run
    row = rows["golf-red"]
    assert row.status == "baseline_failed", row.reason
    assert "test_broken" in row.baseline_tail and row.baseline_status not in (None, 0)
    assert "test_broken" in row.verify_tail and row.verify_status not in (None, 0)
    assert "before the change too" in row.reason and "cached" not in row.reason and row.patch is None
    applied = _by_name(fleet.run(PLAN, [good, red], out=tmp_path / "applied", executor="local",
                                 options=fleet.FleetOptions(apply=True, verify=VERIFY, source=SourcePreference.AST)))
    assert applied["alpha"].status == "applied"
    assert applied["golf-red"].status == "baseline_failed" and "cached from" in applied["golf-red"].reason
    assert "test_broken" in applied["golf-red"].baseline_tail and "rolled back" in applied["golf-red"].reason
    assert tree_fingerprint(red) == untouched


def test_a_dry_run_over_dirty_or_untracked_files_says_so_and_every_patch_applies_to_a_clean_checkout(
        tmp_path: Path) -> None:
    root = tmp_path / "repos"
    clean = _repository(root, "alpha")
    untracked = _repository(root, "hotel-untracked")
    _git(untracked, "rm", "-q", "--cached", "pkg/use.py")  # the file stays, git no longer has it
    _git(untracked, "commit", "-qm", "use.py untracked")
    modified = _repository(root, "india-modified")
    (modified / "pkg" / "use.py").write_text((modified / "pkg" / "use.py").read_text() + "# not committed\n")
    out = tmp_path / "out"
    rows = _by_name(fleet.run(PLAN, [clean, untracked, modified], out=out, executor="local",
                              options=fleet.FleetOptions(source=SourcePreference.AST)))
    assert {name: row.status for name, row in rows.items()} == {
        "alpha": "planned", "hotel-untracked": "dirty_files", "india-modified": "dirty_files"}
    assert "pkg/use.py" in rows["hotel-untracked"].reason and rows["hotel-untracked"].patch is None
    patches = sorted(out.glob("*.patch"))
    assert [p.name for p in patches] == ["alpha.patch"]
    for patch in patches:  # each written patch, on a clean checkout of its repository's HEAD
        checkout = tmp_path / "checkouts" / patch.stem
        subprocess.run(["git", "clone", "-q", str(root / patch.stem), str(checkout)], check=True)
        _git(checkout, "apply", "--check", str(patch))
    allowed = _by_name(fleet.run(PLAN, [modified], out=tmp_path / "allowed", executor="local",
                                 options=fleet.FleetOptions(source=SourcePreference.AST, allow_dirty=True)))
    assert allowed["india-modified"].status == "planned"
    assert any("not a clean checkout" in warning for warning in allowed["india-modified"].warnings)


def test_a_task_run_again_reports_the_committed_change_from_the_journal_without_applying_it_again(tmp_path: Path) -> None:
    """The run's id is in the repository's journal: the same task run a second time, and a
    resumed run that lost the row, report the first outcome (its patch rebuilt from the journal)."""
    repo = _repository(tmp_path / "repos", "alpha")
    out = tmp_path / "out"
    options = fleet.FleetOptions(apply=True, source=SourcePreference.AST)
    [first] = fleet.run(INSERT, [repo], out=out, executor="local", options=options)
    assert first.status == "applied" and first.transaction and _added(repo) == 1
    patch = Path(str(first.patch)).read_text()
    this_run = fleet.FleetRun(first.run, fleet.plan_hash(INSERT))
    again = fleet.run_repo(INSERT, options, this_run, str(repo))
    assert again["status"] == "applied" and again["transaction"] == first.transaction and again["patch_text"] == patch
    warnings = again["warnings"]
    assert isinstance(warnings, list) and any("not applied again" in warning for warning in warnings), warnings
    assert _added(repo) == 1
    (out / fleet.RESULTS).write_text("")  # the driver died before it wrote the row
    Path(str(first.patch)).unlink()
    [resumed] = fleet.run(INSERT, [repo], out=out, executor="local", options=options, resume=True)
    assert resumed.status == "applied" and resumed.transaction == first.transaction and resumed.run == first.run
    assert Path(str(resumed.patch)).read_text() == patch and _added(repo) == 1
    other = fleet.run(INSERT, [repo], out=tmp_path / "other", executor="local", options=options)  # a new run applies again
    assert other[0].status == "applied" and other[0].run != first.run and _added(repo) == 2
    with pytest.raises(Exception, match="another plan"):
        fleet.run(PLAN, [repo], out=out, executor="local", options=options, resume=True)


def test_a_task_whose_driver_has_gone_rolls_back_and_leaves_a_note(tmp_path: Path) -> None:
    repo = _repository(tmp_path / "repos", "alpha")
    untouched = tree_fingerprint(repo)
    options = fleet.FleetOptions(apply=True, source=SourcePreference.AST)
    gone = fleet.FleetRun("r" * 32, fleet.plan_hash(INSERT), alive=lambda: False)
    row = fleet.run_repo(INSERT, options, gone, str(repo))
    assert row["status"] == "error" and "run_gone" in str(row["reason"])
    assert tree_fingerprint(repo) == untouched and _added(repo) == 0
    back = fleet.FleetRun(gone.run_id, gone.plan_hash)
    row = fleet.run_repo(INSERT, options, back, str(repo))
    assert row["status"] == "applied" and _added(repo) == 1
    warnings = row["warnings"]
    assert isinstance(warnings, list) and any("driver had gone" in warning for warning in warnings), warnings


def test_the_dask_executor_lets_each_result_go_once_the_driver_has_it(cluster: ExternalCluster) -> None:
    """A finished task's result is not kept on a worker after the driver has it: a worker that
    dies later holds nothing Dask would compute again."""
    from process_tools.dask_fleet import DaskExecutor

    cluster.live_workers()
    executor = DaskExecutor(scheduler=cluster.address, workers=None)

    def task(repo: str) -> dict[str, object]:
        return {"status": "planned", "repo": repo}

    def held(client: str, dask_scheduler: Scheduler | None = None) -> int:
        """The tasks the scheduler keeps for this executor's client. The cluster is the module's:
        an earlier test's killed driver leaves its own tasks there until the scheduler lets it go."""
        assert dask_scheduler is not None, "Dask passes its scheduler"
        return sum(any(wanting.client_key == client for wanting in state.who_wants or ())
                   for state in dask_scheduler.tasks.values())

    client = executor._client.id
    try:
        seen = 0
        for _repo, row in executor.map(task, [f"r{n}" for n in range(6)]):
            seen += 1
            assert row["status"] == "planned"
            deadline = time.monotonic() + 30
            while executor._client.run_on_scheduler(held, client) > 6 - seen and time.monotonic() < deadline:
                time.sleep(0.1)
            assert executor._client.run_on_scheduler(held, client) <= 6 - seen
    finally:
        executor.close()


def test_a_driver_killed_mid_run_then_resumed_changes_every_repository_once(
        repos: list[Path], tmp_path: Path, cluster: ExternalCluster) -> None:
    """Issue 48's acceptance, on an external scheduler: the driver is SIGKILLed while a task
    verifies its change, and the run is resumed at once; that task, asking the lease before its
    commit, rolls back and leaves a note, and the resumed run applies what is left. Every repository on disk matches its row, and
    none has the (not idempotent) insert twice."""
    cluster.live_workers()
    victim = next(r for r in repos if r.name == "bravo")
    (victim / ".hold").write_text("")  # untracked, and not a file the plan touches
    marks = tmp_path / "marks"
    marks.mkdir()
    verify = f"if [ -e .hold ]; then rm .hold; touch {marks}/held; sleep 8; fi; {VERIFY}"
    plan = tmp_path / "insert.json"
    plan.write_text(json.dumps(INSERT))
    out = tmp_path / "out"
    driver = subprocess.Popen(
        [sys.executable, "-c", "import sys; from frontends.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "--source", "ast", "batch", str(plan), "--repos", str(tmp_path / "repos"), "--apply", "--verify", verify,
         "--scheduler", cluster.address, "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (marks / "held").exists():
            assert time.monotonic() < deadline and driver.poll() is None, "the held verify never ran"
            time.sleep(0.05)
        os.kill(driver.pid, signal.SIGKILL)
    finally:
        if driver.poll() is None:
            os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    assert str(victim) not in {row["repo"] for row in _results(out)}
    # Resumed at once: bravo's new task waits for the dead driver's task, still verifying, to
    # roll back (its lease is gone), and then applies the change itself.
    rows = _by_name(fleet.run(INSERT, [str(r) for r in repos], out=out, scheduler=cluster.address, resume=True,
                              options=fleet.FleetOptions(apply=True, verify=verify, source=SourcePreference.AST)))
    assert set(rows) == {r.name for r in repos} and len(_results(out)) == len(repos)
    assert {name: row.status for name, row in rows.items()} == {
        **{r.name: "applied" for r in repos if r.name != "echo-no-symbol"}, "echo-no-symbol": "refused"}
    for repo in repos:
        row = rows[repo.name]
        assert _added(repo) == (1 if row.status == "applied" else 0), repo.name
        if row.status == "applied":
            _git(repo, "apply", "--check", "-R", str(row.patch))
    assert any("driver had gone" in warning for warning in rows["bravo"].warnings), rows["bravo"].warnings
    assert "driver had gone" in (victim / ".graft" / "fleet" / "notes.jsonl").read_text()
    assert len({row.run for row in rows.values()}) == 1


# -- issue 48, item 5: cheaper per repository ---------------------------------------------------

def test_an_unchanged_repository_is_taken_from_the_result_cache_and_each_row_says_what_it_cost(tmp_path: Path) -> None:
    """On an embedded cluster: the first run plans (a language server starts: its row counts it),
    runs the verify and keeps each row; the second run on the same commits takes every row from
    the cache (same status and patch, nothing planned or verified). A new commit, or an untracked
    file, makes the repository run again."""
    if shutil.which("basedpyright-langserver", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("basedpyright is not installed: no server start to count")
    root = tmp_path / "repos"
    good, refused, moved = (_repository(root, "alpha"), _repository(root, "echo-no-symbol", symbol=False),
                            _repository(root, "hotel"))
    repos = [good, refused, moved]
    options = fleet.FleetOptions(verify="true")  # the verify's cost is counted, not its verdict
    from process_tools.dask_fleet import DaskExecutor

    executor = DaskExecutor(scheduler=None, workers=1)  # one embedded cluster for the three runs
    try:
        _cached_runs(tmp_path, repos, options, executor)
    finally:
        executor.close()


def _cached_runs(tmp_path: Path, repos: list[Path], options: fleet.FleetOptions, executor: "FleetExecutor") -> None:
    good, _refused, moved = repos
    first = _by_name(fleet.run(PLAN, repos, out=tmp_path / "first", executor=executor, options=options))
    assert {name: row.status for name, row in first.items()} == {"alpha": "planned", "echo-no-symbol": "refused",
                                                                 "hotel": "planned"}
    assert not any(row.cached for row in first.values())
    assert first["alpha"].costs["server_start"] > 0 and first["alpha"].costs["plan"] >= first["alpha"].costs["server_start"]
    assert first["alpha"].costs["verify"] > 0
    (moved / "pkg" / "extra.py").write_text("")  # untracked: this repository is not the commit it was
    second = _by_name(fleet.run(PLAN, repos, out=tmp_path / "second", executor=executor, options=options))
    for name in ("alpha", "echo-no-symbol"):
        assert second[name].cached and second[name].status == first[name].status, name
        assert second[name].costs == dict.fromkeys(("server_start", "plan", "verify", "baseline"), 0.0)
        assert second[name].reason == first[name].reason
    assert Path(str(second["alpha"].patch)).read_text() == Path(str(first["alpha"].patch)).read_text()
    assert not second["hotel"].cached and second["hotel"].costs["plan"] > 0
    _git(good, "commit", "-q", "--allow-empty", "-m", "next")
    third = _by_name(fleet.run(PLAN, [good], out=tmp_path / "third", executor=executor, options=options))
    assert not third["alpha"].cached and third["alpha"].status == "planned"
    assert "costs" in _results(tmp_path / "third")[0] and "cached" in _results(tmp_path / "third")[0]


def test_a_worker_holding_finished_results_killed_changes_no_repository_twice(
        repos: list[Path], tmp_path: Path, cluster: ExternalCluster) -> None:
    """Issue 48's acceptance, on an external scheduler, with ``insert-after`` (not idempotent):
    the driver holds still at its first row until every repository's change is committed, so
    the workers hold finished results the driver has not fetched; one of those workers is
    SIGKILLed. Dask runs its finished tasks again on the other worker; each finds its run's
    transaction in the journal and reports it. Every repository has the insert once (none for the
    refused one), and a row run again says it was not applied again."""
    workers = cluster.live_workers()
    marks = tmp_path / "marks"
    marks.mkdir()
    verify = f"echo $PPID > {marks}/$(basename $PWD).pid; {VERIFY}"
    expected = {r.name for r in repos if r.name != "echo-no-symbol"}
    killed: list[int] = []

    def hold_then_kill(progress: fleet.FleetProgress) -> None:
        if progress.last is None or killed:
            return
        deadline = time.monotonic() + 240
        while not all(_added(r) == 1 and not list((r / ".graft" / "journal").iterdir()) for r in repos
                      if r.name in expected and r.name != Path(progress.last.repo).name):
            assert time.monotonic() < deadline, "the other repositories' changes were never committed"
            time.sleep(0.1)
        holders = {int((marks / f"{name}.pid").read_text()) for name in expected
                   if name != Path(progress.last.repo).name}
        victim = next(w for w in workers if w.pid in holders)
        os.killpg(victim.pid, signal.SIGKILL)
        killed.append(victim.pid)

    rows = _by_name(fleet.run(INSERT, [str(r) for r in repos], out=tmp_path / "out", scheduler=cluster.address,
                              progress=hold_then_kill,
                              options=fleet.FleetOptions(apply=True, verify=verify, source=SourcePreference.AST)))
    assert killed, "no worker was killed"
    assert set(rows) == {r.name for r in repos} and len(_results(tmp_path / "out")) == len(repos)
    for repo in repos:
        row = rows[repo.name]
        assert row.status == ("applied" if repo.name in expected else "refused"), (repo.name, row.reason)
        assert _added(repo) == (1 if row.status == "applied" else 0), repo.name
        if row.status == "applied":
            _git(repo, "apply", "--check", "-R", str(row.patch))
    again = [name for name, row in rows.items() if any("not applied again" in w for w in row.warnings)]
    assert again, "no finished task was run again: the killed worker held no result"


def test_a_worker_killed_mid_apply_of_insert_after_changes_every_repository_once(
        repos: list[Path], tmp_path: Path, cluster: ExternalCluster) -> None:
    """Issue 48's acceptance, on an external scheduler, with ``insert-after`` (not idempotent): the
    worker applying bravo is SIGKILLed while its verify runs, with the insert written and not
    committed. Dask gives the task to the other worker, whose engine rolls back what the killed
    one left before planning again: every repository on disk matches its row, the insert once."""
    workers = cluster.live_workers()
    victim = next(r for r in repos if r.name == "bravo")
    (victim / ".hang-once").write_text("")  # untracked, and not a file the plan touches
    marks = tmp_path / "marks"
    marks.mkdir()
    verify = f"if [ -e .hang-once ]; then rm .hang-once; echo $PPID > {marks}/worker.pid; sleep 120; fi; {VERIFY}"
    killed: list[int] = []
    half_done: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while not (marks / "worker.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        half_done.append(_added(victim))  # the insert is on disk, its transaction not committed
        pid = int((marks / "worker.pid").read_text())
        os.killpg(pid, signal.SIGKILL)
        killed.append(pid)

    thread = threading.Thread(target=killer)
    thread.start()
    rows = _by_name(fleet.run(INSERT, [str(r) for r in repos], out=tmp_path / "out", scheduler=cluster.address,
                              options=fleet.FleetOptions(apply=True, verify=verify, source=SourcePreference.AST)))
    thread.join()
    assert killed and killed[0] in [w.pid for w in workers] and half_done == [1]
    assert set(rows) == {r.name for r in repos} and len(_results(tmp_path / "out")) == len(repos)
    for repo in repos:
        row = rows[repo.name]
        assert row.status == ("refused" if repo.name == "echo-no-symbol" else "applied"), (repo.name, row.reason)
        assert _added(repo) == (1 if row.status == "applied" else 0), repo.name
        if row.status == "applied":
            _git(repo, "apply", "--check", "-R", str(row.patch))
            assert not list((repo / ".graft" / "journal").iterdir()), repo.name  # nothing left half-done

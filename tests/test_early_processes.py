"""Server processes started before the pool is imported (lsp_pool.early) and adopted by it
(lsp_pool.adopted): the adopted process answers, dies and shuts down as one the pool started;
one started otherwise, or not adopted, is killed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from lsp_pool import early
from lsp_pool.errors import ServerDied
from lsp_pool.features import LanguageApi
from lsp_pool.pool import Pool
from lsp_pool.registry import SPECS_BY_ID, locate
from tests.conftest import REPO, SAMPLE
from tests.lsp_helpers import fake_spec, job_workspace, names, process_alive, run_with_pool


@pytest.fixture(autouse=True)
def nothing_left_waiting() -> Iterator[None]:
    yield
    early.discard_all()  # a failed test's processes must not be another test's


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return job_workspace(tmp_path)


def test_the_pool_adopts_the_early_process_which_answers_and_is_shut_down_with_the_pool(root: Path) -> None:
    spec = fake_spec("normal")
    started = early.spawn(spec.id, spec.command, str(root))
    assert started is not None and process_alive(started.process.pid)

    async def body(api: LanguageApi, pool: Pool) -> list[str]:
        connection = await pool.server(spec.id, root).ensure_started()
        assert connection.pid == started.process.pid
        return names(await api.document_symbols(root / "job.py"))

    assert run_with_pool(spec, root, body) == ["Job", "Job/run"]  # which also checks the process is gone
    assert early.waiting() == {}


def test_an_adopted_process_that_dies_fails_its_request_with_its_exit_code_and_stderr(root: Path, tmp_path: Path) -> None:
    spec = fake_spec("crash-mid-request", once=tmp_path / "once")
    started = early.spawn(spec.id, spec.command, str(root))
    assert started is not None

    async def body(api: LanguageApi, pool: Pool) -> None:
        connection = await pool.server(spec.id, root).ensure_started()
        assert connection.pid == started.process.pid
        with pytest.raises(ServerDied) as died:
            await api.document_symbols(root / "job.py")
        assert died.value.exit_code == 3 and "crashing on purpose" in died.value.stderr_tail
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]  # a process of its own
        restarted = pool.running()[0].connection
        assert restarted is not None and restarted.pid != started.process.pid

    run_with_pool(spec, root, body)


def test_an_early_process_started_with_another_command_is_killed_and_the_pool_starts_its_own(root: Path) -> None:
    spec = fake_spec("normal")
    other = early.spawn(spec.id, (*spec.command, "--unused"), str(root))
    assert other is not None

    async def body(api: LanguageApi, pool: Pool) -> int | None:
        return (await pool.server(spec.id, root).ensure_started()).pid

    pid = run_with_pool(spec, root, body)
    assert pid != other.process.pid
    assert other.process.poll() is not None and early.waiting() == {}


def test_discarding_kills_only_the_processes_nobody_adopted(root: Path, tmp_path: Path) -> None:
    spec = fake_spec("normal")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    adopted = early.spawn(spec.id, spec.command, str(root))
    left = early.spawn(spec.id, spec.command, str(elsewhere))
    assert adopted is not None and left is not None
    assert early.spawn(spec.id, spec.command, str(root)) is None  # one waits there already
    assert early.take(spec.id, str(root), spec.command) is adopted.process
    early.discard([adopted, left])
    assert left.process.poll() is not None and early.waiting() == {}
    assert adopted.process.poll() is None  # the taker's to stop
    adopted.process.kill()
    adopted.process.communicate()


def test_the_project_config_chooses_the_server_and_a_broken_config_starts_nothing(tmp_path: Path) -> None:
    jedi = locate(SPECS_BY_ID["jedi-language-server"])
    if jedi is None:
        pytest.skip(f"jedi-language-server is not installed here ({SPECS_BY_ID['jedi-language-server'].install_hint})")
    (tmp_path / ".graft.toml").write_text('[servers]\npython = "jedi-language-server"\n')
    discard = early.start_early(tmp_path, ["python", "python"])
    try:
        assert list(early.waiting()) == [("jedi-language-server", os.path.realpath(tmp_path))]
    finally:
        discard()
    assert early.waiting() == {}
    (tmp_path / ".graft.toml").write_text("servers = [\n")
    early.start_early(tmp_path, ["python"])()
    assert early.waiting() == {}


_FIRST_CALL = """
import json, sys, time
from pathlib import Path
from engine.workspace import Workspace
from frontends.cli.startup import start_early
from lsp_pool import early
root = Path(sys.argv[1]).resolve()
files, discard = start_early(["rename", "shop/models.py:Order/total", "grand_total"], root)
before = {"lsprotocol": "lsprotocol" in sys.modules, "waiting": [[*key, pid] for key, pid in early.waiting().items()]}
from engine.ports import load_language_services
services = load_language_services(Workspace(root))
services.warm_up(files)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:  # the pool starts it on its own thread
    running = {s.id: s.pid for s in services.status() if s.pid}
    if running:
        break
    time.sleep(0.05)
symbols = services.document_symbols(Workspace(root).read("shop/models.py"))
discard()
print(json.dumps({**before, "running": running, "symbols": len(symbols.symbols), "left": len(early.waiting())}))
services.close()
"""


def test_a_call_starts_basedpyright_before_the_pool_is_imported_and_the_pool_adopts_it(tmp_path: Path) -> None:
    if locate(SPECS_BY_ID["basedpyright"]) is None:
        pytest.skip(f"basedpyright is not installed here ({SPECS_BY_ID['basedpyright'].install_hint})")
    shutil.copytree(SAMPLE / "shop", tmp_path / "shop")
    done = subprocess.run([sys.executable, "-c", _FIRST_CALL, str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["lsprotocol"] is False
    [[server, folder, pid]] = seen["waiting"]
    assert (server, folder) == ("basedpyright", os.path.realpath(tmp_path))
    assert seen["running"] == {"basedpyright": pid}
    assert seen["symbols"] > 0 and seen["left"] == 0


_FAILED_CALL = """
import sys
from frontends.cli import entry
from lsp_pool import early
pids = []
real_spawn = early.spawn
def spawn(*args):
    started = real_spawn(*args)
    pids.append(started.process.pid)
    return started
early.spawn = spawn
try:
    entry._in_process(["rename", "shop/models.py:Order/total"])  # no new name: refused before any plan
except SystemExit:
    pass
from tests.lsp_helpers import process_alive
print(len(pids), sum(process_alive(pid) for pid in pids), len(early.waiting()))
"""


def test_an_in_process_call_that_fails_before_its_plan_kills_the_server_it_started(tmp_path: Path) -> None:
    if locate(SPECS_BY_ID["basedpyright"]) is None:
        pytest.skip(f"basedpyright is not installed here ({SPECS_BY_ID['basedpyright'].install_hint})")
    shutil.copytree(SAMPLE / "shop", tmp_path / "shop")
    (tmp_path / "pyproject.toml").write_text("")
    done = subprocess.run([sys.executable, "-c", _FAILED_CALL], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
    assert done.stdout.split() == ["1", "0", "0"], (done.stdout, done.stderr)
    assert "new" in done.stderr.lower()  # the usage error itself is still reported


def test_an_early_process_that_cannot_be_taken_over_is_killed_and_the_start_says_why(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsp_pool import connection
    from lsp_pool.errors import ServerStartFailed

    async def broken(popen: object, limit: int) -> object:
        raise OSError("no pipes to attach")

    monkeypatch.setattr(connection, "adopt", broken)
    spec = fake_spec("normal")
    started = early.spawn(spec.id, spec.command, str(root))
    assert started is not None

    async def body(api: LanguageApi, pool: Pool) -> None:
        with pytest.raises(ServerStartFailed, match="no pipes to attach"):
            await pool.server(spec.id, root).ensure_started()

    run_with_pool(spec, root, body)
    assert started.process.poll() is not None

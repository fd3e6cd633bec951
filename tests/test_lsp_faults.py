"""Fault handling of the pool, against a deliberately misbehaving fake server (fixtures/servers/)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.positions import PositionEncoding
from engine.workspace import Workspace
from engine.refactor.operations.rename_symbol import Rename
from lsp_pool.adapter import PoolServices
from lsp_pool.config import PoolConfig
from lsp_pool.connection import Connection, _ClientProtocol
from lsp_pool.documents import MAX_OPEN_DOCUMENTS
from lsp_pool.errors import NotReady, ProtocolError, RequestTimeout, ServerDied, ServerRequestFailed, ServiceUnavailable
from lsp_pool.features import LanguageApi
from lsp_pool.pool import Pool
from lsp_pool.registry import ReadinessPolicy
from lsp_pool.server import ManagedServer
from tests.conftest import REPO
from tests.lsp_helpers import JOB, fake_spec, job_workspace, names, process_alive, run_with_pool


def _connection(server: ManagedServer) -> Connection:
    """The connection of a server that has been started."""
    assert server.connection is not None, server.state
    return server.connection


def _pid(server: ManagedServer) -> int:
    """The process id of a server that is running (it has a connection and a process)."""
    pid = _connection(server).pid
    assert pid is not None, server.state
    return pid


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return job_workspace(tmp_path)


def test_normal_answer(root: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> list[str]:
        return names(await api.document_symbols(root / "job.py"))

    assert run_with_pool(fake_spec("normal"), root, body) == ["Job", "Job/run"]


def test_crash_mid_request_fails_at_once_with_exit_code_and_stderr_then_restarts(root: Path, tmp_path: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.server_for(root / "job.py").ensure_started()  # the budget below is the request's, not startup's
        started = time.monotonic()
        with pytest.raises(ServerDied) as died:
            await api.document_symbols(root / "job.py")
        assert time.monotonic() - started < 2.0  # not the 3 s request timeout
        assert died.value.exit_code == 3 and "crashing on purpose" in died.value.stderr_tail
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert pool.running()[0].restarts == 1

    run_with_pool(fake_spec("crash-mid-request", once=tmp_path / "once"), root, body)


def test_every_pending_request_fails_when_the_server_dies(root: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        results = await asyncio.gather(
            *(api.document_symbols(root / "job.py") for _ in range(3)), return_exceptions=True
        )
        assert all(isinstance(r, ServerDied) for r in results), results

    run_with_pool(fake_spec("crash-mid-request"), root, body)


def test_hang_times_out_sends_cancel_and_the_server_stays_usable(root: Path, tmp_path: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        # Started first: the 1 s budget is the request's, and starting an interpreter on a loaded
        # machine may take longer than that (startup has its own budget).
        await api.server_for(root / "job.py").ensure_started()
        started = time.monotonic()
        with pytest.raises(RequestTimeout, match="did not answer textDocument/documentSymbol within 1 s"):
            await api.document_symbols(root / "job.py")
        assert 0.9 < time.monotonic() - started < 2.5
        server = pool.running()[0]
        pid = _pid(server)
        cancelled = await server.request("fake/cancelled", None, wait_ready=False)
        assert cancelled.value == ["documentSymbol"]  # the server saw our $/cancelRequest
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert _pid(server) == pid and server.restarts == 0

    run_with_pool(fake_spec("hang", once=tmp_path / "once", timeout=1.0), root, body)


@pytest.mark.parametrize("mode", ["malformed-json", "wrong-content-length"])
def test_protocol_breakage_fails_fast_and_the_server_is_restarted(root: Path, tmp_path: Path, mode: str) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.server_for(root / "job.py").ensure_started()  # the budget below is the request's, not startup's
        started = time.monotonic()
        with pytest.raises(ProtocolError, match="unreadable message"):
            await api.document_symbols(root / "job.py")
        assert time.monotonic() - started < 2.0
        first_pid = _pid(pool.running()[0])
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert _pid(pool.running()[0]) != first_pid
        assert not process_alive(first_pid)

    run_with_pool(fake_spec(mode, once=tmp_path / "once"), root, body)


def test_never_ready_is_refused_within_the_budget(root: Path) -> None:
    policy = ReadinessPolicy(progress_pattern="Indexing", budget=1.0)

    async def body(api: LanguageApi, pool: Pool) -> None:
        started = time.monotonic()
        with pytest.raises(NotReady, match="still indexing after its 1 s readiness budget"):
            await api.document_symbols(root / "job.py")
        assert time.monotonic() - started < 3.0
        assert pool.running()[0].state.value == "indexing"

    run_with_pool(fake_spec("never-ready", readiness=policy), root, body)


def test_never_ready_server_gives_a_labelled_fallback_in_auto_mode(root: Path) -> None:
    policy = ReadinessPolicy(progress_pattern="Indexing", budget=1.0)
    workspace = Workspace(root)
    services = PoolServices(workspace, PoolConfig(preference={"python": ("fake",)}), specs=(fake_spec("never-ready", readiness=policy),))
    engine = Engine(workspace, services=services, source=SourcePreference.AUTO)
    try:
        listing = engine.outline("job.py")
    finally:
        engine.close()
    assert listing.source.value == "ast"
    assert listing.notes[0].startswith("language server unavailable: fake is still indexing")
    assert [s.name_path for top in listing.symbols for s in top.walk()] == ["Job", "Job/run"]


def test_explicit_lsp_source_refuses_instead_of_falling_back(root: Path, tmp_path: Path) -> None:
    workspace = Workspace(root)
    services = PoolServices(workspace, PoolConfig(preference={"python": ("fake",)}), specs=(fake_spec("crash-mid-request"),))
    engine = Engine(workspace, services=services, source=SourcePreference.LSP)
    try:
        with pytest.raises(ServerDied):
            engine.outline("job.py")
    finally:
        engine.close()


def test_error_replies_are_typed_and_the_next_call_works(root: Path, tmp_path: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        with pytest.raises(ServerRequestFailed, match="fails on purpose"):
            await api.document_symbols(root / "job.py")
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert pool.running()[0].restarts == 0

    run_with_pool(fake_spec("error-replies", once=tmp_path / "once"), root, body)


def test_exit_during_initialize_then_restart_with_backoff(root: Path, tmp_path: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        with pytest.raises(ServiceUnavailable) as failed:
            await api.document_symbols(root / "job.py")
        assert "code 4" in failed.value.message and "refusing to initialize" in failed.value.message
        started = time.monotonic()
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert time.monotonic() - started >= 0.4  # the first backoff step is 0.5 s

    run_with_pool(fake_spec("exit-during-initialize", once=tmp_path / "once"), root, body)


def test_a_flood_of_notifications_neither_blocks_nor_grows_memory(root: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert len(pool.running()[0].log) <= 200

    run_with_pool(fake_spec("flood", timeout=20.0), root, body)


def test_an_initialize_answer_lsprotocol_rejects_is_used_raw(root: Path, tmp_path: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        server = pool.running()[0]
        protocol = _connection(server)._client.protocol
        assert isinstance(protocol, _ClientProtocol) and protocol.raw_fallbacks >= 1
        assert server.encoding is PositionEncoding.UTF8  # taken from the raw answer

    run_with_pool(fake_spec("bad-initialize-result", once=tmp_path / "once"), root, body)


def test_idle_servers_are_shut_down(root: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.document_symbols(root / "job.py")
        server = pool.running()[0]
        pid = _pid(server)
        await asyncio.sleep(1.5)  # the test waits for the idle timer; the pool itself never sleeps
        assert server.state.value == "stopped" and not process_alive(pid)
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]  # and start again

    run_with_pool(fake_spec("normal"), root, body, idle_timeout=0.5)


def test_servers_do_not_outlive_a_killed_engine(root: Path) -> None:
    """SIGKILL gives the engine no chance to clean up; the parent-death signal must."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from tests.lsp_helpers import fake_spec\n"
        "from lsp_pool.config import PoolConfig\n"
        "from lsp_pool.sync import SyncLanguageApi\n"
        f"root = Path({str(root)!r})\n"
        "api = SyncLanguageApi(root, PoolConfig(preference={'python': ('fake',)}), (fake_spec('normal'),))\n"
        "api.call(lambda a: a.document_symbols(root / 'job.py'))\n"
        "print(api.pool.running()[0].connection.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    engine = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert engine.stdout is not None
        server_pid = int(engine.stdout.readline())
        assert process_alive(server_pid)
        engine.send_signal(signal.SIGKILL)
        engine.wait(10)
        deadline = time.monotonic() + 10
        while process_alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(server_pid)
    finally:
        engine.kill()


def test_sync_wrapper_leaves_no_thread_behind(root: Path) -> None:
    from lsp_pool.sync import SyncLanguageApi

    before = set(threading.enumerate())
    api = SyncLanguageApi(root, PoolConfig(preference={"python": ("fake",)}), (fake_spec("normal"),))
    answer = api.call(lambda a: a.document_symbols(root / "job.py"))
    pid = _pid(api.pool.running()[0])
    started = [thread for thread in threading.enumerate() if thread not in before]
    api.close()
    assert names(answer) == ["Job", "Job/run"]
    # Compared as the wrapper's own threads, not a count: other tests' threads may end meanwhile.
    for thread in started:
        thread.join(timeout=10)
    assert [thread.name for thread in started if thread.is_alive()] == []
    assert not process_alive(pid)


def test_documents_are_opened_on_demand_changed_from_disk_and_closed_when_idle(root: Path) -> None:
    job, other = root / "job.py", root / "other.py"
    other.write_text(JOB)

    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.document_symbols(job)
        server = pool.running()[0]

        async def open_documents() -> dict[str, list[object]]:
            return (await server.request("fake/open-documents", None, wait_ready=False)).value

        assert await open_documents() == {job.as_uri(): [1, JOB]}
        job.write_text(JOB + "# edited elsewhere\n")
        await api.document_symbols(job)
        assert await open_documents() == {job.as_uri(): [2, JOB + "# edited elsewhere\n"]}
        await asyncio.sleep(0.6)  # past the document idle timeout
        await api.document_symbols(other)
        assert await open_documents() == {other.as_uri(): [1, JOB]}

    run_with_pool(fake_spec("normal", needs_open=True), root, body, document_idle_timeout=0.5)


def test_a_rename_whose_server_never_gets_ready_falls_back_to_jedi_with_the_reason(root: Path) -> None:
    """The server's rename runs on a thread while the passes scan files; its failure still
    reaches the plan, which falls back to jedi and says why."""
    (root / "use.py").write_text("from job import Job\n\nJob().run()\n")
    policy = ReadinessPolicy(progress_pattern="Indexing", budget=1.0)
    workspace = Workspace(root)
    services = PoolServices(workspace, PoolConfig(preference={"python": ("fake",)}), specs=(fake_spec("never-ready", readiness=policy),))
    engine = Engine(workspace, services=services, source=SourcePreference.AUTO)
    try:
        plan = engine.plan(Rename("job.py:Job", "Task"))
    finally:
        engine.close()
    assert plan.source.value == "ast"
    assert plan.warnings[0].startswith("language server unavailable: fake is still indexing")
    assert sorted(plan.files) == ["job.py", "use.py"]


def test_a_sweep_over_many_files_keeps_only_the_most_recent_open(root: Path) -> None:
    files = [root / f"m{number:02}.py" for number in range(MAX_OPEN_DOCUMENTS + 4)]
    for path in files:
        path.write_text(JOB)

    async def body(api: LanguageApi, pool: Pool) -> None:
        for path in files:
            await api.document_symbols(path)
        server = pool.running()[0]
        still_open = (await server.request("fake/open-documents", None, wait_ready=False)).value
        assert sorted(still_open) == sorted(path.as_uri() for path in files[-MAX_OPEN_DOCUMENTS:])

    run_with_pool(fake_spec("normal", needs_open=True), root, body)


def test_a_request_codegraft_cannot_encode_is_our_error_not_the_servers(root: Path) -> None:
    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.document_symbols(root / "job.py")
        server = pool.running()[0]
        with pytest.raises(TypeError, match="could not encode its fake/anything request"):
            await server.request("fake/anything", object(), wait_ready=False)
        assert _connection(server).failure is None
        assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert server.restarts == 0

    run_with_pool(fake_spec("normal"), root, body)


def test_a_death_while_indexing_wakes_the_waiting_caller_at_once(root: Path, tmp_path: Path) -> None:
    policy = ReadinessPolicy(progress_pattern="Indexing", budget=30.0)

    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.server_for(root / "job.py").ensure_started()  # the budget below is the request's, not startup's
        started = time.monotonic()
        with pytest.raises(ServerDied) as died:
            await api.document_symbols(root / "job.py")
        assert time.monotonic() - started < 5.0  # not the 30 s readiness budget
        assert died.value.exit_code == 5 and "died while indexing" in died.value.stderr_tail

    run_with_pool(fake_spec("crash-while-indexing", readiness=policy), root, body)


def test_pulled_diagnostics_and_their_completeness(root: Path) -> None:
    async def complete_answer(api: LanguageApi, pool: Pool) -> None:
        answer = await api.diagnostics(root / "job.py")
        assert answer.complete
        assert [(d.file, d.range.start.line, d.severity, d.message) for d in answer.value] == [
            ("job.py", 1, "warning", "fake: run is suspicious")
        ]

    run_with_pool(fake_spec("normal"), root, complete_answer)

    async def while_indexing(api: LanguageApi, pool: Pool) -> None:
        answer = await api.diagnostics(root / "job.py")
        assert not answer.complete and len(answer.value) == 1  # still given, but labelled incomplete

    run_with_pool(fake_spec("never-ready", readiness=ReadinessPolicy(progress_pattern="Indexing", budget=1.0)), root, while_indexing)


def test_server_requests_with_the_ids_of_pending_client_requests_resolve_nothing_of_ours(root: Path) -> None:
    """A server picks its own request ids; they may equal the ids of requests the client is
    waiting on. The reply to the server's request must neither resolve nor drop the client's."""

    async def body(api: LanguageApi, pool: Pool) -> None:
        await api.server_for(root / "job.py").ensure_started()  # the budget below is the request's, not startup's
        started = time.monotonic()
        for _ in range(3):
            assert names(await api.document_symbols(root / "job.py")) == ["Job", "Job/run"]
        assert time.monotonic() - started < 2.5  # not a timeout's worth

    run_with_pool(fake_spec("colliding-ids", timeout=3.0), root, body)


@pytest.mark.parametrize("mode", ["hang-initialize", "garbage-then-silence"])
def test_a_start_that_goes_unanswered_is_tried_once_then_remembered(root: Path, mode: str) -> None:
    """A server that never answers initialize (or writes garbage, then nothing) made one rename
    wait many budgets: each request of a command tried to start it again with the full budget."""
    from dataclasses import replace as with_fields

    spec = with_fields(fake_spec(mode), initialize_timeout=1.0)

    async def body(api: LanguageApi, pool: Pool) -> None:
        started = time.monotonic()
        with pytest.raises(ServiceUnavailable):
            await api.document_symbols(root / "job.py")
        assert time.monotonic() - started < 5.0  # the initialize budget, not the 30 s request budget
        started = time.monotonic()
        for _ in range(3):
            with pytest.raises(ServiceUnavailable):
                await api.document_symbols(root / "job.py")
        assert time.monotonic() - started < 3.0  # remembered, or failing fast: never the budget again

    run_with_pool(spec, root, body)

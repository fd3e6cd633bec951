"""The CLI's warm daemon, with real processes: the installed ``graft`` client, a daemon it starts,
and the failures the issue names (killed mid-request, stale files, older code, two calls at
once, files changed behind its back). Symbols come from the syntax tree, except where a test
is about the language server, so that each test costs a daemon start and not a server's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

from frontends.cli import daemon_client
from tests.conftest import SAMPLE

GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))
REPO = Path(__file__).resolve().parents[1]
HEAVY = {"libcst", "networkx", "pygls", "lsprotocol", "tree_sitter", "jedi", "lsp_pool", "diskcache"}
pytestmark = pytest.mark.skipif(GRAFT is None, reason="the graft console script is not installed")


def graft(*argv: str, cwd: Path, daemon: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    if not daemon:
        environment["GRAFT_DAEMON"] = "0"
    return subprocess.run([str(GRAFT), *argv], cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    yield root
    _kill_daemon(root)


def _daemon_pid(root: Path) -> int:
    info = daemon_client.read_info(root)
    assert info is not None, "no daemon.json"
    pid = info["pid"]
    assert isinstance(pid, int)
    return pid


def _kill_daemon(root: Path) -> None:
    """Whatever daemon the test left: the whole process group (the daemon and what it started)."""
    info = daemon_client.read_info(root)
    pid = info.get("pid") if info else None
    if isinstance(pid, int) and daemon_client.pid_alive(pid):
        daemon_client.stop(root)
        if daemon_client.pid_alive(pid):
            os.killpg(pid, signal.SIGKILL)


def _wait_for(condition: object, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not callable(condition) or not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _modules_after(argv: list[str], cwd: Path, daemon: bool) -> tuple[str, list[str]]:
    """Run the thin client in a fresh interpreter; its output and the heavy modules it imported."""
    script = (
        "import sys\nsys.argv = ['graft', *sys.argv[1:]]\nfrom frontends.cli import entry\n"
        "try:\n    entry.main()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY', sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r})))\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    if not daemon:
        environment["GRAFT_DAEMON"] = "0"
    done = subprocess.run([sys.executable, "-c", script, *argv], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=120)
    heavy = next(line for line in done.stdout.splitlines() if line.startswith("HEAVY "))
    return done.stdout, json.loads(heavy.removeprefix("HEAVY ").replace("'", '"'))


def test_help_answers_from_the_grammar_alone(project: Path) -> None:
    for argv in (["--help"], ["rename", "--help"], ["graph", "callers", "--help"]):
        out, heavy = _modules_after(argv, project, daemon=False)
        assert out.startswith("usage: graft") and heavy == [], (argv, heavy)
    assert "NEW_NAME" in _modules_after(["rename", "--help"], project, daemon=False)[0]


def test_a_call_through_the_daemon_imports_nothing_heavy_in_the_client(project: Path) -> None:
    assert graft("daemon", "start", cwd=project).returncode == 0
    out, heavy = _modules_after(["--source", "ast", "find", "shop/models.py:Order/total"], project, daemon=True)
    assert "shop/models.py:Order/total" in out and heavy == []


#: Standard modules that cost milliseconds each to import and that a call through the daemon does not need.
SLOW_STANDARD = {"pathlib", "dataclasses", "inspect", "typing", "hashlib", "_hashlib", "subprocess", "urllib", "socket", "selectors",
                 "re", "json", "enum"}


def test_a_call_through_the_daemon_imports_only_the_light_standard_modules(project: Path) -> None:
    """What the client imports on each call, beyond what Python itself starts with: `-S`, so
    that site-packages' start-up hooks (an editable install's finder imports pathlib and
    dataclasses) do not hide what the client itself imports."""
    assert graft("daemon", "start", cwd=project).returncode == 0
    script = (
        "import sys\nbefore = set(sys.modules)\nsys.argv = ['graft', *sys.argv[1:]]\nfrom frontends.cli import entry\n"
        "code = entry.main()\n"
        f"print('SLOW', sorted({{m.split('.')[0] for m in set(sys.modules) - before}} & set({sorted(SLOW_STANDARD)!r})), code)\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    environment["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-S", "-c", script, "--source", "ast", "find", "shop/models.py:Order/total"],
                          cwd=project, env=environment, capture_output=True, text=True, timeout=120)
    assert "shop/models.py:Order/total" in done.stdout, done.stderr
    assert done.stdout.rstrip().endswith("SLOW [] 0"), done.stdout[-300:]


def test_start_status_stop_and_a_socket_only_its_owner_can_open(project: Path) -> None:
    started = graft("--json", "daemon", "start", cwd=project)
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    folder = daemon_client.daemon_folder(project)
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    socket_mode = os.lstat(folder / daemon_client.SOCKET_NAME).st_mode
    assert stat.S_ISSOCK(socket_mode) and stat.S_IMODE(socket_mode) == 0o600
    status = json.loads(graft("--json", "daemon", "status", cwd=project).stdout)
    assert status["running"] and status["pid"] == pid and status["rss_mb"] > 0
    assert graft("daemon", "start", cwd=project).returncode == 0 and _daemon_pid(project) == pid  # one per workspace
    stopped = graft("daemon", "stop", cwd=project)
    assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
    _wait_for(lambda: not daemon_client.pid_alive(pid), 30)  # its servers closed; the interpreter exits
    assert not (folder / daemon_client.SOCKET_NAME).exists()
    assert json.loads(graft("--json", "daemon", "status", cwd=project).stdout)["running"] is False


def _normalised(done: subprocess.CompletedProcess[str], root: Path) -> tuple[int, str, str]:
    return done.returncode, done.stdout.replace(str(root), "ROOT"), done.stderr.replace(str(root), "ROOT")


CALLS = [
    ["outline", "shop/models.py"],
    ["--json", "find", "shop/models.py:Order/total"],
    ["read", "shop/pricing.py:apply_discount"],
    ["find", "shop/models.py:Nope"],                       # refused: exit 1, the reason on stderr
    ["--json", "read", "shop/models.py:Order/"],           # malformed: exit 2, JSON on stdout
    ["graph", "callers", "shop/pricing.py:apply_discount"],
    ["symbols", "shop"],
    ["rename", "shop/pricing.py:apply_discount", "discounted"],   # a dry run: the diff
    ["rename", "shop/pricing.py:apply_discount", "class"],        # refused: not a name
    ["read-file", "shop/util.py", "--start", "1", "--end", "3"],
]


def test_output_and_exit_status_are_the_same_with_and_without_the_daemon(project: Path) -> None:
    here = [_normalised(graft("--source", "ast", *argv, cwd=project, daemon=False), project) for argv in CALLS]
    assert graft("daemon", "start", cwd=project).returncode == 0
    served = [_normalised(graft("--source", "ast", *argv, cwd=project), project) for argv in CALLS]
    for argv, expected, got in zip(CALLS, here, served):
        assert got == expected, argv
    assert {code for code, _out, _err in here} == {0, 1, 2}  # the list covers success, refusal and usage errors
    calls = json.loads(graft("--json", "daemon", "status", cwd=project).stdout)["calls"]
    assert calls == len(CALLS)  # every call was the daemon's


def test_a_write_and_its_undo_through_the_daemon(project: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    assert graft("daemon", "start", cwd=project).returncode == 0
    try:
        for argv in (["rename", "shop/pricing.py:apply_discount", "discounted", "--apply"], ["undo"]):
            served = graft("--source", "ast", *argv, cwd=project)
            here = graft("--source", "ast", *argv, cwd=twin, daemon=False)
            assert served.returncode == here.returncode == 0, served.stderr + here.stderr
            pattern = r"(?:transaction|undid|redid) \S+"  # ids differ between the two workspaces
            assert re.sub(pattern, "T", served.stdout) == re.sub(pattern, "T", here.stdout)
            assert (project / "shop" / "pricing.py").read_text() == (twin / "shop" / "pricing.py").read_text()
    finally:
        _kill_daemon(twin)
    assert (project / "shop" / "pricing.py").read_text() == (SAMPLE / "shop" / "pricing.py").read_text()


def test_a_daemon_killed_mid_request_is_reported_and_the_call_runs_here(project: Path, tmp_path: Path) -> None:
    """The daemon is killed while the rename's verify command runs (after the write, before the
    commit): the client finds none of the call's transactions committed, says so and runs the
    call itself; the journal rolls the half-done transaction back first."""
    mark = tmp_path / "verify-started"
    verify = f"if [ -e {mark} ]; then exit 0; fi; : > {mark}; exec sleep 60"
    assert graft("daemon", "start", cwd=project).returncode == 0
    pid = _daemon_pid(project)
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    client = subprocess.Popen(
        [str(GRAFT), "--source", "ast", "rename", "shop/pricing.py:apply_discount", "discounted", "--apply", "--verify", verify],
        cwd=project, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _wait_for(mark.exists)
    os.killpg(pid, signal.SIGKILL)  # the daemon and the verify command it started
    out, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    assert "the daemon stopped before it answered, before it committed anything of this call" in err
    assert "running the command in this process instead" in err
    assert "rolled back" in err or "recovered" in err.lower()  # the interrupted transaction, undone before the retry
    text = (project / "shop" / "pricing.py").read_text()
    assert "def discounted(" in text and "apply_discount" not in text
    assert "applied as transaction" in out


def test_a_stale_socket_and_pid_file_are_cleaned_up(project: Path) -> None:
    assert graft("daemon", "start", cwd=project).returncode == 0
    pid = _daemon_pid(project)
    os.killpg(pid, signal.SIGKILL)
    _wait_for(lambda: not daemon_client.pid_alive(pid))
    folder = daemon_client.daemon_folder(project)
    assert (folder / daemon_client.SOCKET_NAME).exists()  # left behind by the kill
    found = graft("--source", "ast", "find", "shop/models.py:Order/total", cwd=project)
    assert found.returncode == 0 and "shop/models.py:Order/total" in found.stdout
    assert not (folder / daemon_client.SOCKET_NAME).exists() and not (folder / daemon_client.INFO_NAME).exists()
    assert graft("daemon", "start", cwd=project).returncode == 0 and _daemon_pid(project) != pid


def test_a_daemon_running_older_code_is_replaced(project: Path, tmp_path: Path) -> None:
    """A daemon started from another copy of codegraft (another install: other files, other
    mtimes) answers the current client's first call with "stale" and is replaced."""
    old = tmp_path / "old-install"
    for package in ("engine", "frontends", "lsp_pool", "process_tools"):
        shutil.copytree(REPO / package, old / package, copy_function=shutil.copy,
                        ignore=shutil.ignore_patterns("__pycache__"))
    environment = {**os.environ, "PYTHONPATH": str(old)}
    environment.pop("GRAFT_DAEMON", None)
    older = subprocess.Popen([sys.executable, "-m", "frontends.cli.daemon_server", str(project)], cwd=project, env=environment,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
    assert older.stdout is not None and older.stdout.readline().strip() == daemon_client.READY
    info = daemon_client.read_info(project)
    assert info is not None and info["fingerprint"] != daemon_client.code_fingerprint()
    found = graft("--source", "ast", "find", "shop/models.py:Order/total", cwd=project)
    assert found.returncode == 0 and "shop/models.py:Order/total" in found.stdout, found.stderr
    older.wait(timeout=60)  # it stopped
    replaced = daemon_client.read_info(project)
    assert replaced is not None and replaced["pid"] != older.pid and replaced["fingerprint"] == daemon_client.code_fingerprint()


PROTOCOL_1_DAEMON = """
import fcntl, json, os, socket, sys, time
root = sys.argv[1]
folder = os.path.join(root, ".graft", "daemon")
os.makedirs(folder, mode=0o700, exist_ok=True)
os.chmod(folder, 0o700)
lock = open(os.path.join(folder, "lock"), "wb")
fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
path = os.path.join(folder, "socket")
if os.path.exists(path):
    os.unlink(path)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
os.umask(0o177)
listener.bind(path)
listener.listen(16)
with open(os.path.join(folder, "daemon.json"), "w") as handle:
    json.dump({"pid": os.getpid(), "fingerprint": "protocol-1", "started": time.time(), "root": root}, handle)
print("graft-daemon-ready", flush=True)
while True:  # as protocol 1 did: one JSON line a request, and a line it cannot parse is hung up on
    connection, _ = listener.accept()
    line = connection.makefile("rb").readline()
    try:
        request = json.loads(line)
    except ValueError:
        connection.close()
        continue
    if request.get("control") == "stop":
        connection.sendall(b'{"stopping": true}\\n')
        sys.exit(0)
    connection.close()
"""


def test_a_daemon_of_the_older_protocol_is_ended_and_replaced(project: Path, tmp_path: Path) -> None:
    """A daemon of an install before the framed protocol reads the client's greeting as a JSON
    line it cannot parse and hangs up: the client ends it (it would hold the workspace's lock
    until its idle stop, and every call would run in-process) and starts its own."""
    old = tmp_path / "protocol-1"
    (old / "frontends" / "cli").mkdir(parents=True)
    (old / "frontends" / "__init__.py").write_text("")
    (old / "frontends" / "cli" / "__init__.py").write_text("")
    (old / "frontends" / "cli" / "daemon_server.py").write_text(PROTOCOL_1_DAEMON)
    environment = {**os.environ, "PYTHONPATH": str(old)}
    older = subprocess.Popen([sys.executable, "-m", "frontends.cli.daemon_server", str(project.resolve())], cwd=project,
                             env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
    try:
        assert older.stdout is not None and older.stdout.readline().strip() == daemon_client.READY
        found = graft("find", "shop/models.py:Order/total", cwd=project)  # a command that may start a daemon
        assert found.returncode == 0 and "shop/models.py:Order/total" in found.stdout, found.stderr
        assert "running in this process" not in found.stderr, found.stderr
        assert older.wait(timeout=60) != 0  # ended by a signal: it could not be asked
        replaced = daemon_client.read_info(project)
        assert replaced is not None and replaced["fingerprint"] == daemon_client.code_fingerprint()
    finally:
        if older.poll() is None:
            older.kill()


def test_a_call_does_not_import_re_json_or_enum_even_through_the_installed_script(project: Path) -> None:
    """The installed `graft` itself (not only frontends.cli.entry): pip's generated console
    scripts import `re`, which brings `enum`, paid on every call. `-S` as above: an editable
    install's start-up hook imports `re` itself."""
    assert GRAFT is not None and graft("daemon", "start", cwd=project).returncode == 0
    environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
    environment["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-S", "-X", "importtime", GRAFT, "--source", "ast", "find", "shop/models.py:Order/total"],
                          cwd=project, env=environment, capture_output=True, text=True, timeout=120)
    assert "shop/models.py:Order/total" in done.stdout, done.stderr
    imported_by_site = {line.split("|")[-1].strip() for line in subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", "pass"], capture_output=True, text=True, check=True).stderr.splitlines()}
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not (imported - imported_by_site) & {"re", "json", "enum"}, sorted(imported - imported_by_site)


def test_calls_at_once_are_all_answered_and_writes_take_the_apply_lock(tmp_path: Path) -> None:
    """Three renames at once in three unrelated modules, two through the daemon and one in its
    own process beside it, and two reads: every call is answered, every rename lands."""
    root = tmp_path / "three"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'three'\n")
    for name in ("a", "b", "c"):
        (root / "pkg" / f"{name}.py").write_text(f"def old_{name}():\n    return 1\n\n\nVALUE = old_{name}()\n")
    try:
        assert graft("daemon", "start", cwd=root).returncode == 0
        environment = {k: v for k, v in os.environ.items() if k != "GRAFT_DAEMON"}
        clients = [subprocess.Popen([str(GRAFT), "--source", "ast", "rename", f"pkg/{name}.py:old_{name}", f"new_{name}", "--apply",
                                     *(["--no-daemon"] if name == "c" else [])], cwd=root, env=environment,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for name in ("a", "b", "c")]
        reads = [subprocess.Popen([str(GRAFT), "--source", "ast", "--json", "outline", "pkg/a.py"], cwd=root, env=environment,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        for process in clients:
            _out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
        for process in reads:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0 and json.loads(out)["file"] == "pkg/a.py", err
        history = json.loads(graft("--json", "history", cwd=root).stdout)
        assert len(history["transactions"]) == 3
        for name in ("a", "b", "c"):
            assert (root / "pkg" / f"{name}.py").read_text() == f"def new_{name}():\n    return 1\n\n\nVALUE = new_{name}()\n"
    finally:
        _kill_daemon(root)


def test_files_changed_behind_the_daemon_are_seen_before_the_next_answer(project: Path) -> None:
    assert graft("daemon", "start", cwd=project).returncode == 0
    lookup = ["--source", "ast", "graph", "lookup", "shop/util.py:behind_its_back"]
    assert graft(*lookup, cwd=project).stdout.strip() == "(none)"  # the graph is loaded, and has no such symbol
    util = project / "shop" / "util.py"
    original = util.read_text()
    util.write_text(original + "\n\ndef behind_its_back():\n    return round_cents(1)\n")
    seen = graft(*lookup, cwd=project)
    assert seen.returncode == 0 and "behind_its_back" in seen.stdout, seen.stderr
    callers = graft("--source", "ast", "graph", "callers", "shop/util.py:round_cents", cwd=project)
    assert "behind_its_back" in callers.stdout
    util.write_text(original)  # as a git checkout would put it back
    assert graft(*lookup, cwd=project).stdout.strip() == "(none)"


def test_a_refactoring_with_the_words_indexed_still_reads_files_changed_or_added_behind_the_daemon(project: Path) -> None:
    """After its first answer the daemon keeps the files' words (engine.refactor.mentions), and a
    search reads only the files whose words may hold the name: a file changed since (its words
    lacked the name) or added since (never indexed) must still be read."""
    assert graft("daemon", "start", cwd=project).returncode == 0
    rename = ["--source", "ast", "rename", "shop/util.py:round_cents", "round_to_cents", "--json"]
    first = json.loads(graft(*rename, cwd=project).stdout)
    _wait_for(lambda: _words_indexed(project) > 0)  # once the daemon is idle (frontends.cli.daemon_housekeeping)
    with (project / "shop" / "models.py").open("a") as models:  # its words were indexed without the name
        models.write('\nTARGET = "shop.util.round_cents"\n')
    (project / "tests" / "test_extra.py").write_text('PATCHED = "shop.util.round_cents"\n')
    second = json.loads(graft(*rename, cwd=project).stdout)
    assert {f["path"] for f in second["files"]} == {f["path"] for f in first["files"]} | {"shop/models.py", "tests/test_extra.py"}
    assert second["diff"].count('"shop.util.round_to_cents"') == 2


def _words_indexed(root: Path) -> int:
    engines = (daemon_client.status(root) or {}).get("engines") or []
    assert isinstance(engines, list), engines
    indexed = [int(n) for line in engines for n in re.findall(r"words of (\d+) files indexed", line)]
    return indexed[0] if indexed else 0


def _housekeeping(root: Path) -> dict[str, int]:
    """The daemon's own-work counters (rounds, calls_since), as its status reports them."""
    housekeeping = (daemon_client.status(root) or {})["housekeeping"]
    assert isinstance(housekeeping, dict), housekeeping
    return housekeeping


def test_a_call_waiting_is_answered_before_the_daemons_own_work(project: Path) -> None:
    """The daemon's full collection and words indexing (tens of ms on Django) wait while a call
    is queued: two calls in a row get one round of that work after both, not one after each.
    The second call is connected before the first is read, so it is queued whatever the timing."""
    assert graft("daemon", "start", cwd=project).returncode == 0
    argv = ["--source", "ast", "find", "shop/util.py:round_cents"]
    # A first call imports the engine, whose memory may count as a heavy call's (a round at once):
    # counted from after its round.
    assert graft(*argv, cwd=project).returncode == 0
    _wait_for(lambda: _housekeeping(project)["calls_since"] == 0)
    rounds = _housekeeping(project)["rounds"]
    call = daemon_client.Call(argv, str(project), dict(os.environ), False, False, None)
    first, second = daemon_client.connect(project), daemon_client.connect(project)
    try:
        daemon_client._send(first, call.message())
        daemon_client._send(second, call.message())
        # Each read on its own, as two clients would: the daemon may take either first, and the one
        # it takes must answer its "taken" while the other waits.
        with ThreadPoolExecutor(2) as readers:
            answers = list(readers.map(lambda connection: list(daemon_client.conversation(connection)), (first, second)))
    finally:
        first.close()
        second.close()
    assert all(messages[-1] == {"exit": 0} for messages in answers), answers
    def work() -> tuple[int, int]:
        housekeeping = _housekeeping(project)
        return housekeeping["rounds"], housekeeping["calls_since"]

    # Asked within the grace, the work is still owed for both calls; later, one round did it.
    assert work() in ((rounds, 2), (rounds + 1, 0)), work()
    _wait_for(lambda: work() == (rounds + 1, 0))


def test_the_call_that_starts_the_daemon_says_it_outlives_the_call_and_how_to_stop_it(project: Path) -> None:
    note = ("graft: a daemon now serves this workspace and keeps its language servers warm; it stops after 10 minutes "
            "without a call (`graft daemon stop` to stop it now)")
    first = graft("find", "shop/models.py:Order/total", cwd=project)
    assert first.returncode == 0 and note in first.stderr, first.stderr
    assert daemon_client.read_info(project) is not None  # the daemon it names is the one running
    second = graft("find", "shop/models.py:Order/total", cwd=project)
    assert second.returncode == 0 and "daemon" not in second.stderr, second.stderr  # said once: the daemon was already up
    assert first.stdout == second.stdout

"""The warm CLI of issue 17: `graft` as a user runs it, through the workspace's daemon and without it.

Run: ``.venv/bin/python benchmarks/bench_cli.py [--runs N] [--cold-runs N] [--fresh-runs N] [--live] [--profile DIR]``

Measured as process wall time (a subprocess per call, medians), side by side in one run:

1. Warm CLI on Django 5.1.4's full sdist (``django/``, ``tests/``, ``docs/``, ...: what a user
   indexes). The daemon is started, warmed (one find and one rename, then left until the language
   servers stop using CPU, then a few untimed renames), and then timed:
   - ``graft find django/db/models/query.py:QuerySet/filter`` (target <= 0.3 s);
   - ``graft rename django/utils/functional.py:cached_property memoized_property --json`` (a plan,
     no --apply), the second time and later (target <= 1.0 s, and <= 1.5x the raw basedpyright
     rename measured in this run on its own copy with the bare client of bench_rename.py, one raw
     rename just before each of codegraft's so that the host's bursts of load weigh on both; raw
     blocks before and after codegraft's are reported beside, as earlier sessions measured);
   - ``graft index``, warm through the daemon, against ``--no-daemon`` (a warm cache on disk);
   - find and rename with ``--no-daemon`` for comparison (a cold process, and for rename a cold
     server, each time), after the daemon is stopped.
2. A first rename on a fresh ~15k-line project (parso 0.8.4 from benchmarks/real_projects.toml,
   16.6k lines of Python with its tests): a fresh copy, ``git init`` and a commit, no daemon, no
   cache, then ``graft rename ADDRESS NEW --apply`` end to end, which starts the daemon and a cold
   server (target <= 5 s); the same with ``--no-daemon``; rope's rename of the same symbol (a
   process of its own: import, project, plan, apply) on its own fresh copy.
3. Memory: the daemon's resident memory without its servers after the warm calls, at rest (``graft
   --json daemon status``'s rss_mb once the work it defers while calls come is done; target <= 300
   MB), and each server's (process tree) beside it.

By default the code measured is a snapshot of the committed HEAD (``git archive`` into a scratch
folder), installed as a user installs it (``pip install``, not editable) in a virtual environment
of its own whose ``graft`` every call runs: other people editing the work tree would otherwise
change the code's fingerprint mid-run, and the client would replace the warm daemon with a cold
one. ``--editable`` puts the snapshot first on PYTHONPATH behind this checkout's editable install
instead (every interpreter start then pays for setuptools' finder); ``--live`` measures the work tree. ``--profile DIR`` records
one warm rename inside the daemon with py-spy (speedscope JSON in DIR).

Every daemon started is stopped at the end, also on errors. Prints figures and ratios; never
fails on timing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from benchmarks.bench_real_projects import unpacked
from benchmarks.bench_rename import RawServer
from benchmarks.corpus import DJANGO_VERSION, django_source

GRAFT = REPO / ".venv" / "bin" / "graft"
PYTHON = REPO / ".venv" / "bin" / "python"
FIND_ADDRESS = "django/db/models/query.py:QuerySet/filter"
RENAME_FILE, RENAME_NAME, RENAME_NEW = "django/utils/functional.py", "cached_property", "memoized_property"
FRESH_PROJECT: dict[str, object] = {"name": "parso", "version": "0.8.4"}
FRESH_FILE, FRESH_NAME, FRESH_NEW = "parso/parser.py", "ParserSyntaxError", "ParseSyntaxError"
WARM_RENAMES = 3
"""Untimed renames through the daemon after its warm-up: the server's first few renames after
answering the index's requests are slower (bench_rename.py measured it), a steady state is timed."""
PAUSE_BESIDE = 0.5
"""Seconds before each of the alternated raw and graft renames (less than the daemon's 1 s grace:
its own work between calls is left to every eighth call, as in a script)."""
IDLE_CPU_SECONDS = 0.05
"""Servers are taken as done with background analysis when their process trees use less CPU
than this over QUIET_SECONDS."""
QUIET_SECONDS = 3.0
ROPE_SCRIPT = """
import sys
import warnings
warnings.simplefilter("ignore")
import rope.base.project
from rope.refactor.rename import Rename
root, file, line, column, new = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
project = rope.base.project.Project(root, ropefolder=None)
resource = project.get_resource(file)
text = resource.read()
offset = sum(len(l) for l in text.splitlines(keepends=True)[:line]) + column
parses = []
for candidate in project.get_python_files():  # parso's tests hold files with deliberate syntax errors, which stop rope
    try:
        compile(candidate.read(), candidate.path, "exec")
        parses.append(candidate)
    except (SyntaxError, ValueError):
        pass
changes = Rename(project, resource, offset).get_changes(new, in_hierarchy=True, resources=parses)
project.do(changes)
print(len(changes.get_changed_resources()))
project.close()
"""


# -- running graft ------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    seconds: float
    code: int
    stdout: str
    stderr: str


@dataclass
class Runner:
    """Runs ``graft`` as a user would: ``graft`` is the console script of the install measured,
    and ``code``, when set, is put first on PYTHONPATH (an editable install's snapshot)."""

    code: Path | None
    graft: Path = GRAFT
    started: set[Path] = field(default_factory=set)

    def env(self, *, no_daemon: bool = False) -> dict[str, str]:
        env = dict(os.environ)
        env.pop("GRAFT_DAEMON", None)
        env.pop("PYTHONPATH", None)
        if self.code is not None:
            env["PYTHONPATH"] = str(self.code)
        if no_daemon:
            env["GRAFT_DAEMON"] = "0"
        return env

    def run(self, root: Path, *args: str, no_daemon: bool = False, json_out: bool = False) -> Call:
        argv = [str(self.graft), "--root", str(root), *(["--json"] if json_out else []), *(["--no-daemon"] if no_daemon else []), *args]
        if not no_daemon:
            self.started.add(root)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=root, env=self.env(no_daemon=no_daemon), capture_output=True, text=True, check=False)
        return Call(time.perf_counter() - start, done.returncode, done.stdout, done.stderr)

    def checked(self, root: Path, *args: str, **options: bool) -> Call:
        call = self.run(root, *args, **options)
        if call.code != 0:
            raise SystemExit(f"graft {' '.join(args)} failed ({call.code}):\n{call.stderr[-2000:]}")
        return call

    def status(self, root: Path) -> dict[str, Any]:
        return dict(json.loads(self.checked(root, "daemon", "status", json_out=True).stdout))

    def at_rest(self, root: Path, seconds: float = 30.0) -> dict[str, Any]:
        """The status once the daemon has done its own work owed after the last calls (garbage
        collection, words, freed heap: frontends.cli.daemon_housekeeping), which it does when no
        call comes: its memory at rest rather than in the middle of a batch."""
        deadline = time.monotonic() + seconds
        while True:
            status = self.status(root)
            housekeeping = dict(status.get("housekeeping") or {})  # absent: older code, nothing deferred
            owed = housekeeping.get("calls_since", 0) or housekeeping.get("heap_held", False)
            if not owed or time.monotonic() > deadline:
                return status
            time.sleep(0.3)

    def stop_all(self) -> None:
        for root in sorted(self.started):
            self.run(root, "daemon", "stop")


def timed(runner: Runner, root: Path, args: tuple[str, ...], runs: int, **options: bool) -> list[float]:
    return [runner.checked(root, *args, **options).seconds for _ in range(runs)]


# -- processes, CPU and memory ----------------------------------------------------------------


def _process_tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    tree, stack = [], [pid]
    while stack:
        current = stack.pop()
        tree.append(current)
        stack.extend(children.get(current, []))
    return tree


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) of these processes and their descendants."""
    ticks = 0
    for pid in {p for root in pids for p in _process_tree(root)}:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident memory of a process tree, MB."""
    total = 0
    for member in _process_tree(pid):
        try:
            total += int(Path(f"/proc/{member}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)


def wait_until_quiet(pids: list[int], timeout: float = 600.0) -> float:
    """Seconds waited until the processes used less than IDLE_CPU_SECONDS over QUIET_SECONDS."""
    start = time.perf_counter()
    before = cpu_seconds(pids)
    while time.perf_counter() - start < timeout:
        time.sleep(QUIET_SECONDS)
        after = cpu_seconds(pids)
        if after - before < IDLE_CPU_SECONDS:
            break
        before = after
    return time.perf_counter() - start


@dataclass(frozen=True)
class ServerLine:
    name: str
    pid: int | None
    reported_mb: int | None


def server_lines(status: dict[str, Any]) -> list[ServerLine]:
    """``basedpyright: ready, pid 6584, 1342 MB`` lines of ``graft --json daemon status``."""
    lines = []
    for text in status.get("servers") or []:
        pid = re.search(r"pid (\d+)", str(text))
        memory = re.search(r"(\d+) MB", str(text))
        lines.append(ServerLine(str(text).split(":")[0], int(pid[1]) if pid else None, int(memory[1]) if memory else None))
    return lines


# -- workspaces -------------------------------------------------------------------------------


def code_snapshot(base: Path, commit: str = "HEAD") -> Path:
    """A commit's packages in a scratch folder, byte-compiled (so no call pays for it)."""
    target = base / "code"
    target.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    subprocess.run([str(PYTHON), "-m", "compileall", "-q", *(str(target / p) for p in ("engine", "frontends", "lsp_pool", "process_tools"))],
                   check=True, stdout=subprocess.DEVNULL)
    return target


def installed_snapshot(base: Path, snapshot: Path) -> Path:
    """The snapshot installed as a user installs codegraft (``pip install``, not editable) in a
    virtual environment of its own; its ``graft``. The dependencies are this checkout's, seen
    through a path file: an editable install's start-up hook (setuptools' finder, 12-14 ms of
    every call's interpreter start) is a developer's, not a user's, cost."""
    venv = base / "venv"
    subprocess.run([str(PYTHON), "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    dependencies = subprocess.run([str(PYTHON), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
    (purelib / "_graft_dependencies.pth").write_text(dependencies + "\n")
    # pip is the checkout's, seen through that path file; it byte-compiles what it installs.
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps", str(snapshot)], check=True)
    return venv / "bin" / "graft"


def django_copy(base: Path, label: str) -> Path:
    root = base / label
    shutil.copytree(django_source().parent, root, symlinks=True)
    return root


def fresh_git_copy(source: Path, base: Path, label: str) -> Path:
    """A copy of a project, committed in a new repository (the dirty guard of --apply needs one)."""
    root = base / label
    shutil.copytree(source, root, symlinks=True)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fresh"], cwd=root, check=True)
    return root


def definition_position(root: Path, file: str, name: str) -> tuple[int, int]:
    """(0-based line, column) of ``class NAME``/``def NAME`` in the file."""
    pattern = re.compile(rf"^\s*(?:class|def)\s+({re.escape(name)})\b")
    for number, line in enumerate((root / file).read_text().splitlines()):
        if found := pattern.match(line):
            return number, found.start(1)
    raise SystemExit(f"{name} not found in {file}")


def python_lines(root: Path) -> int:
    return sum(len(path.read_bytes().splitlines()) for path in root.rglob("*.py"))


# -- 1. warm CLI on Django --------------------------------------------------------------------


@dataclass
class RawRename:
    runs: list[float] = field(default_factory=list)
    files: int = 0
    server_mb: float = 0.0


def raw_server(root: Path) -> RawServer:
    """basedpyright behind the bare client on its own copy, warmed and quiet (bench_rename.py)."""
    line, column = definition_position(root, RENAME_FILE, RENAME_NAME)
    server = RawServer(root, line, column)
    wait_until_quiet([server.client.process.pid])
    return server


def raw_rename(server: RawServer, runs: int) -> RawRename:
    """basedpyright's own rename plan on the same symbol, ``runs`` times in a row."""
    result = RawRename([server.plan() for _ in range(runs)], server.files)
    result.server_mb = rss_mb(server.client.process.pid)
    return result


@dataclass
class Warm:
    warm_up_seconds: float = 0.0
    first_rename: float = 0.0
    settle_seconds: float = 0.0
    find: list[float] = field(default_factory=list)
    rename: list[float] = field(default_factory=list)
    raw_beside: list[float] = field(default_factory=list)
    """The raw server's rename, each just before one of ``rename``: the same moments' machine."""
    rename_files: int = 0
    rename_source: str = ""
    index: list[float] = field(default_factory=list)
    index_mode: str = ""
    daemon_mb: int = 0
    daemon_mb_after_index: int = 0
    load: tuple[float, float] = (0.0, 0.0)
    servers: list[tuple[ServerLine, float]] = field(default_factory=list)
    replaced: bool = False


def warm_daemon(runner: Runner, root: Path, runs: int, profile: Path | None, raw: RawServer) -> Warm:
    result = Warm()
    start = time.perf_counter()
    runner.checked(root, "daemon", "start")
    runner.checked(root, "find", FIND_ADDRESS)
    result.warm_up_seconds = time.perf_counter() - start
    rename = ("rename", f"{RENAME_FILE}:{RENAME_NAME}", RENAME_NEW, "--json")
    result.first_rename = runner.checked(root, *rename).seconds
    status = runner.status(root)
    pid = status["pid"]
    result.settle_seconds = wait_until_quiet([line.pid for line in server_lines(status) if line.pid])
    for _ in range(WARM_RENAMES):
        runner.checked(root, *rename)
    result.load = (os.getloadavg()[0], 0.0)
    result.find = timed(runner, root, ("find", FIND_ADDRESS), runs)
    # Each warm rename beside a raw one: this host's load comes in bursts of seconds, which blocks
    # of raw and graft runs measured at other moments fall into unevenly. A pause before each:
    # a server works on after its answer (40 ms or so after a rename), and back to back the next
    # call, whichever it is, pays for it, so each call starts from rest.
    for _ in range(runs):
        time.sleep(PAUSE_BESIDE)
        result.raw_beside.append(raw.plan())
        time.sleep(PAUSE_BESIDE)
        result.rename.append(runner.checked(root, *rename).seconds)
    answer = json.loads(runner.checked(root, *rename).stdout)
    result.rename_files, result.rename_source = len(answer["files"]), str(answer.get("source"))
    status = runner.at_rest(root)
    result.daemon_mb = int(status["rss_mb"])
    result.servers = [(line, rss_mb(line.pid) if line.pid else 0.0) for line in server_lines(status)]
    result.index = timed(runner, root, ("index",), runs)
    result.index_mode = str(json.loads(runner.checked(root, "index", json_out=True).stdout).get("mode"))
    if profile is not None:
        profile_rename(runner, root, int(pid), rename, profile)
    result.load = (result.load[0], os.getloadavg()[0])
    status = runner.at_rest(root)
    result.replaced = status["pid"] != pid
    result.daemon_mb_after_index = int(status["rss_mb"])
    return result


def profile_rename(runner: Runner, root: Path, pid: int, rename: tuple[str, ...], folder: Path) -> None:
    """One warm rename with py-spy recording the daemon (speedscope JSON, and a top-down dump)."""
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / "warm_rename.speedscope.json"
    spy = subprocess.Popen([str(REPO / ".venv" / "bin" / "py-spy"), "record", "-p", str(pid), "-r", "200", "--format", "speedscope",
                            "-o", str(output), "--nonblocking"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # py-spy attaches
    seconds = runner.checked(root, *rename).seconds
    spy.send_signal(2)
    _, errors = spy.communicate(timeout=60)
    print(f"py-spy: one warm rename took {seconds:.2f} s; profile in {output} {errors.strip()[-200:]}", file=sys.stderr)


@dataclass
class Cold:
    find: list[float] = field(default_factory=list)
    rename: list[float] = field(default_factory=list)
    index: list[float] = field(default_factory=list)


def no_daemon(runner: Runner, root: Path, runs: int, cold_runs: int) -> Cold:
    """The same calls in a process of their own each (the daemon stopped first; the graph's cache
    on disk is warm, the server is started and analyses the project in every rename)."""
    runner.checked(root, "daemon", "stop")
    rename = ("rename", f"{RENAME_FILE}:{RENAME_NAME}", RENAME_NEW, "--json")
    return Cold(
        find=timed(runner, root, ("find", FIND_ADDRESS), cold_runs, no_daemon=True),
        rename=timed(runner, root, rename, cold_runs, no_daemon=True),
        index=timed(runner, root, ("index",), runs, no_daemon=True),
    )


# -- 2. a first rename on a fresh project -------------------------------------------------------


@dataclass
class Fresh:
    lines: int = 0
    files: int = 0
    daemon: list[float] = field(default_factory=list)
    in_process: list[float] = field(default_factory=list)
    rope: list[float] = field(default_factory=list)
    rope_files: int = 0
    notes: list[str] = field(default_factory=list)


def first_rename(runner: Runner, source: Path, base: Path, no_daemon_flag: bool, label: str) -> Call:
    root = fresh_git_copy(source, base, label)
    os.sync()
    args = ("rename", f"{FRESH_FILE}:{FRESH_NAME}", FRESH_NEW, "--apply")
    call = runner.checked(root, *args, no_daemon=no_daemon_flag)
    if not no_daemon_flag:
        runner.checked(root, "daemon", "stop")
    return call


def rope_rename(source: Path, base: Path, label: str) -> tuple[float, int]:
    root = fresh_git_copy(source, base, label)
    line, column = definition_position(root, FRESH_FILE, FRESH_NAME)
    os.sync()
    start = time.perf_counter()
    done = subprocess.run([str(PYTHON), "-c", ROPE_SCRIPT, str(root), FRESH_FILE, str(line), str(column), FRESH_NEW],
                          capture_output=True, text=True, check=True)
    return time.perf_counter() - start, int(done.stdout.split()[-1])


def fresh_project(runner: Runner, base: Path, runs: int) -> Fresh:
    source = unpacked(FRESH_PROJECT)
    result = Fresh(lines=python_lines(source), files=sum(1 for _ in source.rglob("*.py")))
    for number in range(runs):  # interleaved, so that the machine's drift weighs on every side
        call = first_rename(runner, source, base, False, f"fresh-daemon-{number}")
        result.daemon.append(call.seconds)
        if number == 0:
            result.notes = [line for line in call.stderr.splitlines() if line.startswith("note")][:3]
        result.in_process.append(first_rename(runner, source, base, True, f"fresh-inproc-{number}").seconds)
        seconds, result.rope_files = rope_rename(source, base, f"fresh-rope-{number}")
        result.rope.append(seconds)
    return result


# -- report --------------------------------------------------------------------------------------


def _ms(values: list[float]) -> str:
    return " ".join(f"{v * 1000:.0f}" for v in values)


def _quartiles(values: list[float]) -> str:
    ordered = sorted(values)
    return f"{ordered[len(ordered) // 4]:.2f}-{ordered[(3 * len(ordered)) // 4]:.2f}"


def _row(label: str, values: list[float], target: str = "") -> str:
    return f"{label:<52} {median(values):7.2f} s  {target:<17} min {min(values):5.2f} s  (runs, ms: {_ms(values)})"


def report(raw: RawRename, warm: Warm, cold: Cold, fresh: Fresh, commit: str) -> Iterator[str]:
    rename, find = median(warm.rename), median(warm.find)
    yield f"commit {commit}; corpus: Django {DJANGO_VERSION} full sdist; process wall time, medians"
    yield (f"-- 1. warm CLI on Django (daemon warmed: start + first find {warm.warm_up_seconds:.1f} s, "
           f"first rename {warm.first_rename:.1f} s with the cold index, servers quiet after {warm.settle_seconds:.0f} s more)")
    yield f"   1-minute load average on 2 cores: {warm.load[0]:.1f} before the timed warm calls, {warm.load[1]:.1f} after"
    yield _row("graft find QuerySet/filter (daemon)", warm.find, "target <= 0.3 s")
    yield _row("graft find QuerySet/filter (--no-daemon)", cold.find)
    yield _row(f"graft rename cached_property --json (daemon, {warm.rename_files} files, {warm.rename_source})", warm.rename, "target <= 1.0 s")
    yield _row("graft rename cached_property --json (--no-daemon)", cold.rename)
    yield _row(f"raw basedpyright rename (bare client, {raw.files} files), each before one", warm.raw_beside)
    yield _row("raw basedpyright rename, in blocks before and after", raw.runs)
    yield f"{'rename: daemon / raw basedpyright (alternated)':<52} {rename / median(warm.raw_beside):7.2f} x  target <= 1.5x"
    pairs = [ours / theirs for ours, theirs in zip(warm.rename, warm.raw_beside)]
    yield f"{'   median of the 1:1 ratios':<52} {median(pairs):7.2f} x  (quartiles {_quartiles(pairs)})"
    yield f"{'rename: daemon / raw basedpyright (blocks)':<52} {rename / median(raw.runs):7.2f} x"
    yield f"{'find: daemon / --no-daemon':<52} {find / median(cold.find):7.2f} x"
    yield f"{'rename: daemon / --no-daemon':<52} {rename / median(cold.rename):7.2f} x"
    yield _row(f"graft index warm (daemon; mode {warm.index_mode})", warm.index)
    yield _row("graft index warm (--no-daemon, cache on disk)", cold.index)
    yield f"{'index: daemon / --no-daemon':<52} {median(warm.index) / median(cold.index):7.2f} x"
    yield f"-- 2. first rename with --apply on a fresh project: parso {FRESH_PROJECT['version']} ({fresh.files} .py files, {fresh.lines} lines)"
    yield _row("graft rename --apply (starts the daemon, cold server)", fresh.daemon, "target <= 5 s")
    yield _row("graft rename --apply (--no-daemon)", fresh.in_process)
    yield _row(f"rope rename + apply (own process, {fresh.rope_files} files)", fresh.rope)
    yield f"{'first rename: graft (daemon) / rope':<52} {median(fresh.daemon) / median(fresh.rope):7.2f} x"
    yield f"{'first rename: graft (--no-daemon) / rope':<52} {median(fresh.in_process) / median(fresh.rope):7.2f} x"
    for note in fresh.notes:
        yield f"    graft said: {note[:160]}"
    yield "-- 3. memory after the warm calls"
    yield f"{'daemon resident, servers apart (status rss_mb)':<52} {warm.daemon_mb:7d} MB  target <= 300 MB (at rest after the finds and renames)"
    yield f"{'daemon resident after the index calls too':<52} {warm.daemon_mb_after_index:7d} MB  ({len(warm.index) + 1} warm `graft index` calls)"
    for line, measured in warm.servers:
        yield f"{'server ' + line.name:<52} {measured:7.0f} MB  (status says {line.reported_mb} MB)"
    yield f"{'raw basedpyright after its renames':<52} {raw.server_mb:7.0f} MB"
    if warm.replaced:
        yield "WARNING: the daemon was replaced during the timed calls (its pid changed): the warm figures are not warm"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each warm call")
    parser.add_argument("--cold-runs", type=int, default=5, help="timed runs of each --no-daemon find and rename")
    parser.add_argument("--fresh-runs", type=int, default=3, help="fresh copies for the first rename, each side")
    parser.add_argument("--raw-runs", type=int, default=11, help="raw server renames, before and after codegraft each")
    parser.add_argument("--live", action="store_true", help="measure the work tree, not a snapshot of HEAD")
    parser.add_argument("--editable", action="store_true",
                        help="run the snapshot through this checkout's editable install (PYTHONPATH) instead of installing it")
    parser.add_argument("--profile", type=Path, help="record one warm rename in the daemon with py-spy into this folder")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    base = Path(tempfile.mkdtemp(prefix="graft-cli-"))
    runner = Runner(None)
    try:
        if not args.live:
            snapshot = code_snapshot(base)
            if args.editable:
                runner.code = snapshot
            else:
                runner.graft = installed_snapshot(base, snapshot)
        roots = {label: django_copy(base, label) for label in ("raw", "graft")}
        os.sync()
        server = raw_server(roots["raw"])
        try:
            raw = raw_rename(server, args.raw_runs)
            warm = warm_daemon(runner, roots["graft"], args.runs, args.profile, server)
            cold = no_daemon(runner, roots["graft"], args.runs, args.cold_runs)
            after = raw_rename(server, args.raw_runs)
        finally:
            server.close()
        raw.runs += after.runs
        raw.server_mb = max(raw.server_mb, after.server_mb)
        fresh = fresh_project(runner, base, args.fresh_runs)
        code = "the work tree" if args.live else "snapshot of HEAD, " + ("editable" if args.editable else "installed")
        for line in report(raw, warm, cold, fresh, f"{commit} ({code})"):
            print(line)
    finally:
        runner.stop_all()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

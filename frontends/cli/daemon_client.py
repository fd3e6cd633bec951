"""The CLI's side of the workspace's warm daemon: find it, start it, hand it one call, and
stream the answer back as if the call had run here.

Standard library only: this runs in the thin client (frontends.cli.entry) before anything of
the engine is imported, and its whole point is to spare each call that import.

The daemon listens on ``<root>/.graft/daemon/socket``: a Unix socket (never TCP) in a folder
only the owner may enter, created with mode 0600, owned by the user; the client checks all of
that (lstat, no symlink followed) before it connects, and the daemon checks the peer's uid.
``daemon.json`` beside it holds the daemon's pid and the fingerprint of the code it runs.

The client opens with :data:`GREETING`, then each side sends messages: a dict framed as its
length (4 bytes, big-endian) and its ``marshal`` form. The client sends the call (argv, cwd,
environment, whether its stdout and stderr are terminals, stdin when a ``-`` argument reads
it, and the call's request id, which every transaction the call writes records in the
journal). The daemon reads it on a thread of its own within :data:`READ_SECONDS` (a client
that stalls mid-frame is dropped, and never holds up the others) and answers ``{"queued":
True}`` at once, however busy it is; calls then run one at a time. When the call's turn
comes the daemon sends ``{"taken": True}`` and waits for the client's ``{"go": True}``: only
then does the call run, so a client that gave up waiting (and ran the call itself) never has
it run a second time by a daemon that wakes up later. Then come ``{"out": …}`` and ``{"err":
…}`` chunks and ``{"exit": N}``, with ``{"working": True}`` every :data:`HEARTBEAT_SECONDS`
while the call waits or runs. The client waits :data:`ANSWER_SECONDS` for the first answer
and :data:`SILENCE_SECONDS` between two messages: a stopped or stalled daemon is given up on
(:class:`DaemonUnavailable` before "go": nothing of the call ran; :class:`DaemonLost` after:
the journal says whether it committed, see frontends.cli.lost_call). A daemon running other
code than the client's answers ``{"stale": …}`` and exits, and the client starts a new one. ``marshal`` is built into the interpreter: the client
pays nothing to import it, where ``json`` imports ``re`` (with ``enum``), a large share of every
call here. Both ends are the same user's (the folder, the socket's mode and the peer's uid say
so), and run the same interpreter (the fingerprint holds its version).
"""

from __future__ import annotations

# Only what a call through a warm daemon needs, imported on every `graft` call: pathlib,
# dataclasses, typing, hashlib, subprocess and socket together cost a large share of a call
# here, and json (with re and enum) more, so paths are strings, messages are marshal's, the
# fingerprint's hash is blake2's C module, the socket is the C type, and starting or stopping a
# daemon (the rare paths) imports what it needs when it runs. tests/test_daemon.py holds the
# client to this.
import marshal
import os
import stat
import sys
import time

try:
    # The socket type itself: the `socket` module around it imports enum and selectors for its
    # flag types, paid on every call, and the client needs none of that.
    import _socket as sockets
except ImportError:  # an interpreter without it (not CPython)
    import socket as sockets  # type: ignore[no-redef]

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from pathlib import Path
    from typing import IO, Any, Iterator

    Root = str | os.PathLike[str]

PROTOCOL = 3
GREETING = b"graft-daemon 3\n"
"""The first bytes of every connection. A daemon of protocol 1 (JSON lines) reads them as a line
it cannot parse and hangs up, where it would otherwise wait for a line break that the frames
after may never hold: the client then replaces it (:func:`stop`)."""
_MOST_MESSAGE_BYTES = 1 << 30
DAEMON_FOLDER = ("daemon",)
SOCKET_NAME = "socket"
INFO_NAME = "daemon.json"
READY = "graft-daemon-ready"
START_TIMEOUT = 60.0
"""Seconds a starting daemon may take to listen (it imports the engine first, slowly on a loaded machine)."""
ANSWER_SECONDS = 5.0
"""Seconds a daemon may take to answer a connection ("queued"): its reading thread does that at
once, however long the call before is, so past this it is stopped (SIGSTOP), hung or starved."""
HEARTBEAT_SECONDS = 1.0
"""How often the daemon says "working" to each call it holds, queued or running."""
SILENCE_SECONDS = 10.0
"""Seconds without a message after which a daemon that answered is taken to have stalled: a long
call (an index, a big rename with --apply) sends its heartbeats meanwhile, and is never cut off."""
READ_SECONDS = 5.0
"""Seconds the daemon gives a connection to send its whole request (and later its "go")."""
_PACKAGES = ("engine", "frontends", "lsp_pool", "process_tools")
_SUN_PATH_LIMIT = 100  # bytes of a socket path the kernel takes (108, with room for the terminator)


class DaemonUnavailable(Exception):
    """No usable daemon, and nothing of the call ran there: the reason says why, for the note the
    CLI prints when it runs in-process."""

    def __init__(self, reason: str, *, absent: bool = False, stale: bool = False, unresponsive: bool = False) -> None:
        super().__init__(reason)
        self.absent = absent
        """No daemon runs at all (the usual case, not worth a note), rather than one that failed."""
        self.stale = stale
        """A daemon runs other code than this client's: it has stopped, and a new one is wanted."""
        self.unresponsive = unresponsive
        """A daemon holds the socket but did not answer in time (stopped, hung): starting another
        would only find the workspace taken."""


class DaemonLost(Exception):
    """The daemon was told to run the call ("go") and gave no exit status: it may have written."""

    def __init__(self, reason: str, *, request: str, silent: bool, printed: bool) -> None:
        super().__init__(reason)
        self.request = request
        """The call's request id, which the journal records with every transaction it wrote."""
        self.silent = silent
        """The daemon stopped answering but its connection stayed open: it may be alive (stopped,
        hung) and still write. Otherwise it closed the connection: it is gone, or done with the call."""
        self.printed = printed
        """Some of the call's output already reached stdout."""


def new_request_id() -> str:
    """A call's id: 32 hex digits, from the system's random source (uuid's module costs imports)."""
    return os.urandom(16).hex()


class Call:
    """One command line, with the client's world: cwd, environment, terminals, stdin when a
    ``-`` argument reads it, and its request id."""

    __slots__ = ("argv", "cwd", "env", "stdout_tty", "stderr_tty", "stdin", "request")

    def __init__(self, argv: list[str], cwd: str, env: dict[str, str], stdout_tty: bool, stderr_tty: bool,
                 stdin: str | None, request: str | None = None) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.stdout_tty = stdout_tty
        self.stderr_tty = stderr_tty
        self.stdin = stdin
        self.request = request or new_request_id()

    def message(self) -> dict[str, object]:
        return {"protocol": PROTOCOL, "fingerprint": code_fingerprint(), "argv": self.argv, "cwd": self.cwd, "env": self.env,
                "stdout_tty": self.stdout_tty, "stderr_tty": self.stderr_tty, "stdin": self.stdin, "request": self.request}


def daemon_folder(root: Root) -> Path:
    from pathlib import Path

    return Path(root, ".graft", *DAEMON_FOLDER)


def code_fingerprint() -> str:
    """What identifies the code a process runs: the protocol, Python's version and every source
    file of codegraft by size and mtime. A daemon started before an upgrade (or an edit of a
    work tree) has another, and is replaced rather than asked."""
    base = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    digest = _blake2b(f"{PROTOCOL} {sys.version}".encode(), digest_size=8)
    # scandir, not os.walk: no listing of the __pycache__ folders, and no lists of every entry
    # built twice (this runs on every call).
    pending = [os.path.join(base, package) for package in reversed(_PACKAGES)]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except FileNotFoundError:
            continue  # a package this install does not have
        folders = []
        for entry in entries:
            if entry.name.endswith(".py"):
                info = entry.stat()
                digest.update(f"{entry.path} {info.st_size} {info.st_mtime_ns}\n".encode())
            elif entry.name != "__pycache__" and entry.is_dir():
                folders.append(entry.path)
        pending += reversed(folders)  # depth first, in name order
    return digest.hexdigest()[:16]


def _blake2b(data: bytes, *, digest_size: int) -> Any:
    try:
        from _blake2 import blake2b  # hashlib's own C implementation, without loading OpenSSL
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=digest_size)


def read_info(root: Root) -> dict[str, object] | None:
    """The running daemon's ``daemon.json`` (pid, fingerprint, started), or None."""
    try:
        import json  # not on a call's path: see the imports above

        folder = _checked_folder(root)
        with open(os.path.join(folder, INFO_NAME), encoding="utf-8") as handle:
            return dict(json.load(handle))
    except (DaemonUnavailable, OSError, ValueError):
        return None


def pid_alive(pid: int) -> bool:
    """Whether the process runs: a zombie (killed, not yet reaped by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        # The state follows the command name, which is in parentheses and may hold spaces.
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _checked_folder(root: Root) -> str:
    """The daemon's folder, if it is safe to talk through: real folders (no symlinks) owned by
    this user, the last one closed to everyone else."""
    folder = os.path.join(root, ".graft")
    for part in ("", *DAEMON_FOLDER):
        folder = os.path.join(folder, part) if part else folder
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            raise DaemonUnavailable("no daemon runs for this workspace", absent=True) from None
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            raise DaemonUnavailable(f"{folder} is not a folder of this user; not connecting through it")
    if stat.S_IMODE(os.lstat(folder).st_mode) & 0o077:
        raise DaemonUnavailable(f"{folder} is open to other users; not connecting through it")
    return folder


class socket_address:  # noqa: N801 - used as a context manager, like contextlib's (not imported: see above)
    """The socket's path, short enough for the kernel: a deep workspace's path is reached through
    a descriptor of the folder (``/proc/self/fd/N/socket``), open while the context lasts."""

    def __init__(self, folder: Root) -> None:
        self._folder = os.fspath(folder)
        self._descriptor: int | None = None

    def __enter__(self) -> str:
        path = os.path.join(self._folder, SOCKET_NAME)
        if len(os.fsencode(path)) < _SUN_PATH_LIMIT or not os.path.isdir("/proc/self/fd"):
            return path
        self._descriptor = os.open(self._folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        return f"/proc/self/fd/{self._descriptor}/{SOCKET_NAME}"

    def __exit__(self, *_exception: object) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None


def connect(root: Root) -> sockets.socket:
    """A connection to the workspace's daemon; DaemonUnavailable when none answers (a socket left
    by a dead daemon is removed on the way)."""
    folder = _checked_folder(root)
    path = os.path.join(folder, SOCKET_NAME)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise DaemonUnavailable("no daemon runs for this workspace", absent=True) from None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise DaemonUnavailable(f"{path} is not this user's socket; not connecting")
    connection = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    # A stopped daemon's listen queue still takes connections; a full one would block connect.
    connection.settimeout(ANSWER_SECONDS)
    try:
        with socket_address(folder) as address:
            connection.connect(address)
    except TimeoutError:
        connection.close()
        raise DaemonUnavailable(f"the daemon's socket did not take a connection within {ANSWER_SECONDS:.0f} s "
                                "(the daemon is stopped or hung?)", unresponsive=True) from None
    except OSError as error:
        connection.close()
        _clean_stale(root, folder)
        raise DaemonUnavailable(f"the daemon's socket did not answer ({error.strerror}); removed it", absent=True) from None
    return connection


def _clean_stale(root: Root, folder: str) -> None:
    """A socket nobody listens on, and the info of a pid that is gone, are left by a killed
    daemon: remove them so the next start is clean."""
    info = read_info(root)
    pid = info.get("pid") if info else None
    if isinstance(pid, int) and pid_alive(pid):
        return  # alive but not listening: starting up, or shutting down; leave it its files
    for name in (SOCKET_NAME, INFO_NAME):
        try:
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            pass


def start(root: Root, *, wait: float = START_TIMEOUT) -> dict[str, object]:
    """Start the workspace's daemon (a detached process whose output goes to its log) and wait
    until it listens; its info (``started_now`` set when this call started it). A daemon already
    running is left as it is."""
    import subprocess

    try:
        connect(root).close()
        info = read_info(root)
        if info is not None and info.get("fingerprint") == code_fingerprint():
            return info
        stop(root)  # another install's daemon: replaced
    except DaemonUnavailable:
        pass
    # The daemon says READY on its first output once it listens, then sends its output to its
    # log; before that, what it prints (why it could not start) comes through the same pipe.
    process = subprocess.Popen(
        [sys.executable, "-m", "frontends.cli.daemon_server", os.fspath(root)], cwd=root, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
    )
    said = _read_until_ready(process, time.monotonic() + wait)
    info = read_info(root) if said is None else None
    if info is None:
        if said == "":
            process.kill()  # still silent at the deadline: not left half-started
        raise DaemonUnavailable(f"the daemon did not start: {said}" if said else f"the daemon did not listen within {wait:.0f} s")
    return {**info, "started_now": True}


def started_note(info: dict[str, object]) -> str:
    """What a call that started the daemon says: the daemon outlives it, for how long, and how
    to end it now (a one-off command otherwise leaves language servers running unexplained)."""
    idle = info.get("idle_seconds")
    if not isinstance(idle, (int, float)):
        after = "its idle time (the daemon_idle setting)"
    else:
        after = f"{idle / 60:g} minutes" if idle % 60 == 0 else f"{idle:g} s"
    return (f"graft: a daemon now serves this workspace and keeps its language servers warm; it stops after {after} "
            "without a call (`graft daemon stop` to stop it now)")


def _read_until_ready(process: subprocess.Popen[bytes], deadline: float) -> str | None:
    """None once the daemon said READY; else what it said before it exited ("" at the deadline)."""
    import selectors

    if process.stdout is None:
        return "its output could not be read"
    said: list[str] = []
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                continue
            line = process.stdout.readline()
            if not line:
                process.wait()
                return (said[-1] if said else "no reason given") + f" (status {process.returncode})"
            text = line.decode(errors="replace").strip()
            if text == READY:
                process.stdout.close()
                return None
            said.append(text)
    return ""


def stop(root: Root) -> int | None:
    """Ask the daemon to stop, and wait until it has; its pid, or None if none ran."""
    info = read_info(root)
    pid = info.get("pid") if info else None
    # The daemon holds the connection open until it has closed its servers: the end of its
    # answer ("stopping", then the end of the stream) is the end of the daemon.
    answer = _control(root, "stop")
    if answer is None:
        return None
    if not any(message.get("stopping") for message in answer) and isinstance(pid, int):
        _end_older_daemon(root, pid)  # it hung up without a word: another protocol's daemon
    return pid if isinstance(pid, int) else None


_OLDER_DAEMON_SECONDS = 10.0


def _end_older_daemon(root: Root, pid: int) -> None:
    """End a daemon that cannot read this client's requests (an install before protocol 2), and
    the language servers it started (its process group): it would otherwise hold the workspace's
    lock until its idle stop, and every call would run in-process meanwhile. Only a process whose
    command line is a codegraft daemon of this workspace is signalled: a pid left in a stale
    ``daemon.json`` may since belong to another program. Needs Linux's pidfd (5.3 and later),
    which stays the same process while it is checked, signalled and waited for."""
    import select
    import signal

    try:
        process = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return  # gone already, or no pidfd here: nothing is signalled unchecked
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            words = handle.read().split(b"\0")
        if b"frontends.cli.daemon_server" not in words or os.fsencode(os.path.realpath(root)) not in words:
            return
        for signal_number in (signal.SIGTERM, signal.SIGKILL):
            os.killpg(pid, signal_number)
            if select.select([process], [], [], _OLDER_DAEMON_SECONDS)[0]:
                return  # it ended
    except OSError:
        return
    finally:
        os.close(process)


def status(root: Root) -> dict[str, object] | None:
    """What the running daemon says about itself (pid, uptime, requests, memory, engines), or None."""
    messages = _control(root, "status")
    found = next((message["status"] for message in messages or [] if "status" in message), None)
    return dict(found) if found is not None else None


def _control(root: Root, request: str) -> list[dict[str, Any]] | None:
    """Every message of the daemon's answer to a control request, read to the end of the
    stream; None when no daemon answers. DaemonUnavailable (unresponsive) when one holds the
    socket but says nothing within the deadlines."""
    try:
        connection = connect(root)
    except DaemonUnavailable as unavailable:
        if unavailable.unresponsive:
            raise
        return None
    messages: list[dict[str, Any]] = []
    try:
        connection.settimeout(ANSWER_SECONDS)
        _send(connection, {"protocol": PROTOCOL, "control": request})
        for message in _read_all(connection):
            connection.settimeout(SILENCE_SECONDS)
            if "working" not in message:
                messages.append(message)
        return messages
    except TimeoutError:
        if messages:
            return messages  # answered, then slow to close (its servers, on a stop)
        raise DaemonUnavailable(f"the daemon did not answer within {ANSWER_SECONDS:.0f} s (it is stopped or hung?)",
                                unresponsive=True) from None
    finally:
        connection.close()


def run(root: Root, call: Call, stdout: IO[str], stderr: IO[str]) -> int:
    """Hand the call to the daemon and copy its streams here as they come; its exit status.
    DaemonUnavailable before the daemon was told to run the call (nothing ran); DaemonLost after."""
    connection = connect(root)
    try:
        return _converse(connection, call, stdout, stderr)
    finally:
        connection.close()


def _converse(connection: sockets.socket, call: Call, stdout: IO[str], stderr: IO[str]) -> int:
    connection.settimeout(ANSWER_SECONDS)
    try:
        _send(connection, call.message())
    except TimeoutError:
        raise DaemonUnavailable(f"the daemon did not read the call within {ANSWER_SECONDS:.0f} s (it is stopped or hung?)",
                                unresponsive=True) from None
    except OSError as error:
        raise DaemonUnavailable(f"the daemon hung up before it read the call ({error.strerror})") from None
    answered = told = printed = False
    try:
        for message in conversation(connection):
            connection.settimeout(SILENCE_SECONDS)  # it answered: from now on, heartbeats at the least
            answered = True
            if "stale" in message:
                raise DaemonUnavailable(f"the daemon runs other code ({message['stale']})", stale=True)
            if "go" in message:
                told = True  # from here on the call may run there, and may have written
            elif "out" in message:
                printed = True
                stdout.write(str(message["out"]))
                stdout.flush()
            elif "err" in message:
                stderr.write(str(message["err"]))
                stderr.flush()
            elif "exit" in message and told:
                return int(message["exit"])
    except TimeoutError:
        if told:
            raise DaemonLost(f"the daemon stopped answering for {SILENCE_SECONDS:.0f} s while it ran the call (it is stopped "
                             "or hung?)", request=call.request, silent=True, printed=printed) from None
        waited = SILENCE_SECONDS if answered else ANSWER_SECONDS
        raise DaemonUnavailable(f"the daemon did not answer within {waited:.0f} s (it is stopped or hung?)",
                                unresponsive=True) from None
    except OSError as error:  # the "go" could not be sent whole: the daemon went away
        if not told:
            raise
        raise DaemonLost(f"the daemon went away as it was told to run the call ({error.strerror})", request=call.request,
                         silent=False, printed=printed) from None
    if told:
        raise DaemonLost("the daemon stopped before it answered", request=call.request, silent=False, printed=printed)
    if not answered:
        # A daemon of protocol 2 or older hangs up on this greeting; any other answers first.
        raise DaemonUnavailable("the daemon hung up without taking the call (an older install's?)", stale=True)
    raise DaemonUnavailable("the daemon stopped before it took the call")


def conversation(connection: sockets.socket) -> Iterator[dict[str, Any]]:
    """The daemon's messages about a call, with the client's side of the exchange: "taken" is
    answered with "go", yielded as ``{"go": True}`` just before it is sent."""
    for message in _read_all(connection):
        if "taken" in message:
            yield {"go": True}  # said before the send: a send that fails part way may still have reached it
            connection.sendall(frame({"go": True}))
            continue
        if "working" not in message:
            yield message


def _send(connection: sockets.socket, message: dict[str, object]) -> None:
    """The client's one message on a connection, after the greeting."""
    connection.sendall(GREETING + frame(message))


def frame(message: dict[str, Any]) -> bytes:
    data = marshal.dumps(message)
    return len(data).to_bytes(4, "big") + data


def read_request(connection: sockets.socket, deadline: float) -> dict[str, Any] | None:
    """The daemon's side of :func:`_send`: the client's message, or None when the connection does
    not open with this protocol's greeting, its message is cut short or malformed, or it is not
    all there by ``deadline`` (time.monotonic): a client that stalls is dropped."""
    greeting = _receive_exactly(connection, len(GREETING), deadline)
    if greeting != GREETING:
        return None
    return read_message(connection, deadline)


def read_message(connection: sockets.socket, deadline: float) -> dict[str, Any] | None:
    """One framed message, whole by ``deadline``; None otherwise."""
    header = _receive_exactly(connection, 4, deadline)
    size = int.from_bytes(header, "big") if header is not None else -1
    if not 0 <= size <= _MOST_MESSAGE_BYTES:
        return None
    data = _receive_exactly(connection, size, deadline)
    return _message(data) if data is not None else None


def _receive_exactly(connection: sockets.socket, size: int, deadline: float) -> bytes | None:
    """``size`` bytes, or None when the peer closes or the deadline passes first."""
    chunks, wanted = [], size
    while wanted > 0:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        connection.settimeout(left)
        try:
            chunk = connection.recv(min(wanted, _RECEIVE_BYTES))
        except OSError:  # the deadline (TimeoutError), a reset
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def _message(data: bytes) -> dict[str, Any] | None:
    try:
        message = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    return message if isinstance(message, dict) else None


_RECEIVE_BYTES = 1 << 16


def _read_all(connection: sockets.socket) -> Iterator[dict[str, Any]]:
    """The daemon's messages, until it closes the connection (a message cut short by a killed
    daemon ends them). One growing buffer, cut once per chunk received: a large answer arrives
    in many chunks, and building a new bytes object for each is quadratic in the answer's size."""
    pending = bytearray()
    while True:
        try:
            chunk = connection.recv(_RECEIVE_BYTES)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return
        pending += chunk
        start = 0
        while len(pending) - start >= 4:
            end = start + 4 + int.from_bytes(pending[start:start + 4], "big")
            if len(pending) < end:
                break
            message = _message(bytes(pending[start + 4:end]))
            if message is None:
                return
            yield message
            start = end
        del pending[:start]

"""The pool: which server answers for a language, one managed process per (server spec, workspace root)."""

from __future__ import annotations

import asyncio
import subprocess
from importlib import metadata
from dataclasses import dataclass
from pathlib import Path

from lsp_pool.config import PoolConfig
from engine.errors import ServiceUnavailable
from lsp_pool.errors import ServerNotFound, ServerNotTrusted, ServerTooOld
from lsp_pool.registry import SPECS, SPECS_BY_ID, ServerSpec, locate, version_numbers
from lsp_pool.server import ManagedServer
from lsp_pool.typescript7 import TSLS, Backend, project_folder, typescript_backend
from lsp_pool.typescript7 import SERVER_IDS as TYPESCRIPT_SERVERS
from lsp_pool.typescript_companion import COMPANION, companion_server
from lsp_pool.workspace_trust import confinement


@dataclass(frozen=True)
class Found:
    spec: ServerSpec
    command: tuple[str, ...] | None
    too_old: str = ""
    """Why the server found is older than codegraft supports ('' when it is not): it is not started."""


@dataclass(frozen=True)
class PassedOver:
    """A server found but not chosen: too old, or not started for a workspace not trusted."""

    spec_id: str
    why: str
    too_old: bool


@dataclass(frozen=True)
class Choice:
    """The server that would serve a language in a workspace, or why none would."""

    language: str
    preferred: tuple[str, ...]
    chosen: Found | None
    passed_over: tuple[PassedOver, ...] = ()
    """Servers found but not chosen, in order of preference."""
    install_hints: tuple[tuple[str, str], ...] = ()
    """(server id, how to install it) for each preferred server, when none serves."""
    backend: Backend | None = None
    """For a TypeScript project, which of its servers its own TypeScript calls for, and why."""

    @property
    def state(self) -> str:
        """ok | not-configured | too-old | not-trusted | not-found"""
        if self.chosen is not None:
            return "ok"
        if not self.preferred:
            return "not-configured"
        if self.passed_over and all(passed.too_old for passed in self.passed_over):
            return "too-old"
        return "not-trusted" if self.passed_over else "not-found"

    @property
    def reason(self) -> str:
        """Why none serves, with what to do ('' when one does)."""
        state = self.state
        if state == "ok":
            return ""
        if state == "not-configured":
            if self.backend is not None:
                return (f"{self.backend.why}; {self.backend.server} is not among the servers configured for "
                        f"{self.language} ([tool.graft.servers])")
            return f"no language server is configured for {self.language}"
        if state in ("too-old", "not-trusted"):
            return "; ".join(passed.why for passed in self.passed_over)
        hints = "; ".join(f"{spec_id}: {hint}" for spec_id, hint in self.install_hints)
        chosen_by = f"{self.backend.why}; " if self.backend is not None else ""
        return f"{chosen_by}no language server for {self.language} is installed ({hints})"

    def refusal(self) -> ServiceUnavailable:
        """The typed error a request meets when none serves."""
        kind = {"too-old": ServerTooOld, "not-trusted": ServerNotTrusted}.get(self.state, ServerNotFound)
        return kind(self.reason)


class Pool:
    """Owns every language-server process codegraft starts. Use from one event loop."""

    def __init__(self, config: PoolConfig | None = None, specs: tuple[ServerSpec, ...] = SPECS) -> None:
        self.config = config or PoolConfig()
        self.specs = {spec.id: spec for spec in specs}
        self._servers: dict[tuple[str, Path, tuple[str, ...] | None], ManagedServer] = {}
        self._located: dict[str, tuple[str, ...] | None] = {}
        self._too_old: dict[str, str] = {}

    def locate(self, spec_id: str) -> Found:
        spec = self.specs[spec_id]
        if spec_id not in self._located:
            self._located[spec_id] = locate(spec)
            command = self._located[spec_id]
            if command is not None and spec.minimum_version is not None:
                self._too_old[spec_id] = too_old(spec, probe_version(spec_id, command))
        return Found(spec, self._located[spec_id], self._too_old.get(spec_id, ""))

    def server_for(self, language: str, root: Path, path: Path | None = None) -> ManagedServer:
        """The preferred installed server for ``language`` in ``root`` (not started yet); for
        ``path``'s project where the project decides (TypeScript: its own version)."""
        choice = self.choose(language, root, path)
        if choice.chosen is not None:
            own = choice.chosen.command if choice.backend is not None and choice.backend.command else None
            return self.server(choice.chosen.spec.id, root, own)
        raise choice.refusal()

    def choose(self, language: str, root: Path, path: Path | None = None) -> Choice:
        """Which server would serve ``language`` in ``root`` (for ``path``'s project, else the
        root's) and why the ones before it would not, starting nothing: :meth:`server_for`'s
        decision, and what ``graft doctor`` reports."""
        preferred = self.config.preference.get(language, ())
        backend = None
        if any(spec_id in TYPESCRIPT_SERVERS for spec_id in preferred):
            # The project's own TypeScript picks its server, as in editors (lsp_pool.typescript7).
            backend = typescript_backend(root, project_folder(root, path or root), bool(self.config.trusted_by))
            preferred = tuple(i for i in preferred if i not in TYPESCRIPT_SERVERS or i == backend.server)
        passed_over: list[PassedOver] = []
        for spec_id in preferred:
            found = self.locate(spec_id)
            if backend is not None and backend.command is not None and spec_id == backend.server:
                found = Found(found.spec, backend.command)  # the trusted project's own compiler
            if found.command is None:
                continue
            if found.too_old:
                passed_over.append(PassedOver(spec_id, found.too_old, too_old=True))
                continue
            refusal = confinement(found.spec, root, found.command, self.config.trusted_by).refusal
            if not refusal:
                return Choice(language, preferred, found, tuple(passed_over), backend=backend)
            passed_over.append(PassedOver(spec_id, refusal, too_old=False))
        hints = tuple((i, self.specs[i].install_hint) for i in preferred if i in self.specs)
        return Choice(language, preferred, None, tuple(passed_over), hints, backend)

    def server(self, spec_id: str, root: Path, command: tuple[str, ...] | None = None) -> ManagedServer:
        """The managed server of ``spec_id`` in ``root``, started with ``command`` when given (a
        trusted project's own compiler), else with the one located."""
        # The root as requests pass it is resolved already: looked up as given before resolving it.
        managed = self._servers.get((spec_id, root, command))
        if managed is not None:
            return managed
        key = (spec_id, root.resolve(), command)
        managed = self._servers.get(key)
        if managed is None:
            found = self.locate(spec_id)
            if command is not None:
                found = Found(found.spec, command)
            if found.command is None:
                raise ServerNotFound(f"{spec_id} is not installed: {found.spec.install_hint}")
            if found.too_old:
                raise ServerTooOld(found.too_old)
            managed = ManagedServer(found.spec, found.command, key[1], self.config)
            self._servers[key] = managed
        return managed

    def companion(self, served: ManagedServer) -> ManagedServer:
        """The refactoring companion beside ``served`` (a TypeScript 7 project's ``tsc --lsp``:
        lsp_pool.typescript_companion), made on first use, started only when asked, stopped with
        the pool; UnsupportedByServer when it is not installed."""
        key = (COMPANION, served.root, None)
        managed = self._servers.get(key)
        if managed is None:
            ordinary = self.locate(TSLS) if TSLS in self.specs else None
            if ordinary is not None and ordinary.too_old:
                raise ServerTooOld(ordinary.too_old)
            managed = companion_server(served, ordinary.command if ordinary is not None else None, self.config)
            self._servers[key] = managed
        return managed

    def running(self) -> list[ManagedServer]:
        return list(self._servers.values())

    async def renew_over_memory(self) -> None:
        """Restart every server past its memory ceiling: called only between calls."""
        for server in list(self._servers.values()):
            await server.renew_if_over_memory()

    async def close(self) -> None:
        await asyncio.gather(*(server.stop() for server in self._servers.values()), return_exceptions=True)


def too_old(spec: ServerSpec, version: str | None) -> str:
    """Why ``spec``'s server at ``version`` is not supported ('' when it is)."""
    if spec.minimum_version is None:
        return ""
    numbers = version_numbers(version)
    wanted = ".".join(map(str, spec.minimum_version))
    if numbers is not None and numbers >= spec.minimum_version:
        return ""
    said = f"is version {version}" if numbers is not None else f"names no version ({version or 'it printed none'})"
    return f"{spec.id} {said}, and codegraft needs {wanted} or newer: {spec.install_hint}"


def probe_version(spec_id: str, command: tuple[str, ...], timeout: float = 10.0) -> str | None:
    """The server's version: its package's metadata, else the first line its version flag prints."""
    spec = SPECS_BY_ID.get(spec_id)
    if spec is None:
        return None
    if spec.package is not None:
        try:
            return metadata.version(spec.package)
        except metadata.PackageNotFoundError:
            pass
    if not spec.version_args:
        return None
    # The arguments that start the server itself are left out (``tsc --lsp --version`` would serve).
    executable = tuple(part for part in command if part not in ("--stdio", "--lsp"))
    try:
        result = subprocess.run(
            [*executable, *spec.version_args], capture_output=True, text=True, timeout=timeout, check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in (result.stdout + "\n" + result.stderr).splitlines() if line.strip()]
    # Some servers print JSON build information first (gopls); take the first plain line.
    plain = [line for line in lines if not line.startswith(("{", "}"))]
    # tsc prints "Version 7.0.2": the number alone, as the other servers print it.
    return plain[0].removeprefix("Version ") if plain else None

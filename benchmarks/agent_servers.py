"""bench_agent.py's servers: one call and one task's outcome, how codegraft and Serena each phrase a
task and how to read their answers, and how each is started."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.agent_targets import Targets  # noqa: E402 - after the path

VENV_BIN = Path(sys.executable).parent
CALL_TIMEOUT = 300.0
GIT_IDENTITY = ["-c", "user.name=bench-agent", "-c", "user.email=bench-agent@localhost", "-c", "commit.gpgsign=false"]

Request = tuple[str, dict[str, Any]]
"""A tool call: the tool's name and its arguments."""
Location = tuple[str, int]
"""(file relative to the project, 1-based line)."""



# -- one call, one task --------------------------------------------------------------------


@dataclass
class Call:
    """One tool call as the client saw it."""

    tool: str
    arguments: dict[str, Any]
    seconds: float
    text: str
    structured: Any
    is_error: bool

    @property
    def chars(self) -> int:
        """The answer's size: its text content plus the JSON of its structured content."""
        extra = json.dumps(self.structured, ensure_ascii=False) if self.structured is not None else ""
        return len(self.text) + len(extra)

    def headline(self, limit: int = 160) -> str:
        first = " ".join(self.text.split())
        return first[:limit] + ("…" if len(first) > limit else "")


@dataclass
class Outcome:
    task: str
    server: str
    calls: list[Call] = field(default_factory=list)
    verdict: str = "n/a"
    """'right', 'wrong' or 'n/a' (the server has no tool for it)."""
    reason: str = ""
    restored: int = 0
    """Files put back to the commit after the task."""
    broken: int | None = None
    """Tests of the project's suite that passed before and failed in the state the task's edit
    left (None: the suite was not run for this task)."""


class Session:
    """An MCP client session with timing around each call."""

    def __init__(self, client: Client, timeout: float) -> None:
        self.client = client
        self.timeout = timeout

    async def call(self, request: Request) -> Call:
        tool, arguments = request
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(self.client.call_tool(tool, arguments), self.timeout)
        except Exception as error:  # noqa: BLE001  (a transport error or a timeout is an answer too: a wrong one)
            return Call(tool, arguments, time.perf_counter() - started, f"client error: {type(error).__name__}: {error}", None, True)
        seconds = time.perf_counter() - started
        text = "".join(getattr(item, "text", None) or json.dumps(item.model_dump(mode="json")) for item in result.content)
        return Call(tool, arguments, seconds, text, result.structured_content, bool(result.is_error))


# -- the servers: how each phrases a task, and how to read its answers ---------------------


class Adapter(Protocol):
    """Each task phrased in one server's tools; None when it has no tool for it. The parsers turn
    an answer into plain values (names, locations, text) for the judges."""

    name: str

    def refused(self, call: Call) -> bool: ...
    def outline(self, t: Targets) -> Request: ...
    def project_overview(self, t: Targets) -> Request | None: ...
    def find_symbol(self, t: Targets) -> Request: ...
    def references(self, t: Targets) -> Request: ...
    def references_at(self, t: Targets) -> Request | None: ...
    def read_body(self, t: Targets) -> Request: ...
    def definition_at(self, t: Targets) -> Request: ...
    def rename(self, t: Targets, old: str, new: str) -> Request: ...
    def replace(self, t: Targets, name: str, text: str) -> Request: ...
    def insert_after(self, t: Targets, name: str, text: str) -> Request: ...
    def top_names(self, call: Call) -> set[str]: ...
    def symbol_locations(self, call: Call) -> list[Location]: ...
    def reference_lines(self, call: Call) -> set[Location]: ...
    def body(self, call: Call) -> str: ...
    def definition_locations(self, call: Call) -> list[Location]: ...


class Codegraft:
    """``graft mcp``: name paths as ``FILE:Class/method`` or ``FILE:LINE:COL``, structured answers,
    edits as dry runs unless ``apply`` is true."""

    name = "codegraft"

    def refused(self, call: Call) -> bool:
        return call.is_error

    def outline(self, t: Targets) -> Request:
        return "file_outline", {"path": t.module}

    def project_overview(self, t: Targets) -> Request | None:
        return "project_overview", {}

    def find_symbol(self, t: Targets) -> Request:
        return "workspace_symbols", {"query": t.method_path}

    def references(self, t: Targets) -> Request:
        return "find_references", {"address": f"{t.module}:{t.function}"}

    def references_at(self, t: Targets) -> Request | None:
        return "find_references", {"address": f"{t.call_file}:{t.call_line}:{t.call_column}"}

    def read_body(self, t: Targets) -> Request:
        return "read_symbol", {"address": f"{t.module}:{t.function}"}

    def definition_at(self, t: Targets) -> Request:
        return "get_definition", {"position": f"{t.call_file}:{t.call_line}:{t.call_column}"}

    def rename(self, t: Targets, old: str, new: str) -> Request:
        return "rename_symbol", {"address": f"{t.module}:{old}", "new_name": new, "apply": True}

    def replace(self, t: Targets, name: str, text: str) -> Request:
        return "replace_symbol_body", {"address": f"{t.module}:{name}", "text": text, "apply": True}

    def insert_after(self, t: Targets, name: str, text: str) -> Request:
        return "insert_after_symbol", {"address": f"{t.module}:{name}", "text": text, "apply": True}

    # The answers' shape: structured content with the lists (symbols, locations) in older
    # versions; a short structured summary with the lists in the text in newer ones. Both read.
    _LOCATION = re.compile(r"^\s*([^\s:]+\.pyi?):(\d+)(?::\d+)?(?=\s|$)", re.MULTILINE)
    """``file.py:LINE[:COL]`` at the start of a line of text (references, definitions)."""
    _SYMBOL = re.compile(r"^\s*([^\s:]+\.pyi?):\S+\s+\w+\s+line (\d+)", re.MULTILINE)
    """``file.py:Name/path  kind  line N`` (workspace_symbols' text)."""

    @staticmethod
    def _structured(call: Call) -> dict[str, Any]:
        return call.structured if isinstance(call.structured, dict) else {}

    def top_names(self, call: Call) -> set[str]:
        symbols = self._structured(call).get("symbols")
        if isinstance(symbols, list):
            return {s.get("name", "") for s in symbols}
        return set(re.findall(r"[A-Za-z_]\w*", call.text))  # the outline as text: every name it mentions

    def symbol_locations(self, call: Call) -> list[Location]:
        symbols = self._structured(call).get("symbols")
        if isinstance(symbols, list):
            return [(s["file"], s["line"]) for s in symbols]
        return [(m.group(1), int(m.group(2))) for m in self._SYMBOL.finditer(call.text)]

    def _locations(self, call: Call) -> list[Location]:
        locations = self._structured(call).get("locations")
        if isinstance(locations, list):
            return [(loc["file"], loc["line"]) for loc in locations]
        return [(m.group(1), int(m.group(2))) for m in self._LOCATION.finditer(call.text)]

    def reference_lines(self, call: Call) -> set[Location]:
        return set(self._locations(call))

    def body(self, call: Call) -> str:
        return str(self._structured(call).get("text", ""))

    def definition_locations(self, call: Call) -> list[Location]:
        return self._locations(call)


class Serena:
    """Serena's tools: a name path plus a relative_path; answers are JSON text with 0-based lines."""

    name = "serena"

    def refused(self, call: Call) -> bool:
        return call.is_error or call.text.lstrip().lower().startswith("error")

    def outline(self, t: Targets) -> Request:
        return "get_symbols_overview", {"relative_path": t.module}

    def project_overview(self, t: Targets) -> Request | None:
        return None  # get_symbols_overview refuses a directory ("Expected a file path")

    def find_symbol(self, t: Targets) -> Request:
        return "find_symbol", {"name_path_pattern": t.method_path}

    def references(self, t: Targets) -> Request:
        return "find_referencing_symbols", {"name_path": t.function, "relative_path": t.module}

    def references_at(self, t: Targets) -> Request | None:
        return None  # symbols are addressed by name path only

    def read_body(self, t: Targets) -> Request:
        return "find_symbol", {"name_path_pattern": t.function, "relative_path": t.module, "include_body": True}

    def definition_at(self, t: Targets) -> Request:
        # find_declaration takes a regex whose one group is the name: the call-site line around it.
        column = t.call_column - 1
        before = t.call_text[:column].lstrip()
        after = t.call_text[column + len(t.function):].rstrip()
        return "find_declaration", {"relative_path": t.call_file,
                                    "regex": re.escape(before) + f"({t.function})" + re.escape(after)}

    def rename(self, t: Targets, old: str, new: str) -> Request:
        return "rename_symbol", {"name_path": old, "relative_path": t.module, "new_name": new}

    def replace(self, t: Targets, name: str, text: str) -> Request:
        return "replace_symbol_body", {"name_path": name, "relative_path": t.module, "body": text}

    def insert_after(self, t: Targets, name: str, text: str) -> Request:
        return "insert_after_symbol", {"name_path": name, "relative_path": t.module, "body": text}

    @staticmethod
    def _json(call: Call) -> Any:
        try:
            return json.loads(call.text)
        except ValueError:
            return None

    def top_names(self, call: Call) -> set[str]:
        found = self._json(call)
        names: set[str] = set()
        if isinstance(found, dict):
            for group in found.values():
                for item in group if isinstance(group, list) else []:
                    # depth 0 gives bare names; deeper, {name: children}
                    names.add(item if isinstance(item, str) else str(next(iter(item), "")) if isinstance(item, dict) else "")
        return names

    def symbol_locations(self, call: Call) -> list[Location]:
        found = self._json(call)
        items = found if isinstance(found, list) else [found] if isinstance(found, dict) else []
        return [(s["relative_path"], s["body_location"]["start_line"] + 1) for s in items
                if isinstance(s, dict) and "relative_path" in s and "body_location" in s]

    def reference_lines(self, call: Call) -> set[Location]:
        # {file: {kind: [{name_path, body_location, content_around_reference: "...\n  > 261: code\n..."}]}}
        found = self._json(call)
        lines: set[Location] = set()
        if isinstance(found, dict):
            for file, kinds in found.items():
                for entries in kinds.values() if isinstance(kinds, dict) else []:
                    for entry in entries:
                        for match in re.finditer(r"^\s*>\s*(\d+):", entry.get("content_around_reference", ""), re.MULTILINE):
                            lines.add((file, int(match.group(1)) + 1))
        return lines

    def body(self, call: Call) -> str:
        found = self._json(call)
        items = found if isinstance(found, list) else []
        return "\n".join(str(s.get("body", "")) for s in items if isinstance(s, dict))

    def definition_locations(self, call: Call) -> list[Location]:
        return self.symbol_locations(call)


@dataclass
class ServerSpec:
    adapter: Adapter
    params: StdioServerParameters
    version: str
    language_server: str



def codegraft_spec(root: Path) -> ServerSpec:
    from importlib.metadata import version

    graft = VENV_BIN / "graft"
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True).stdout.strip()
    return ServerSpec(Codegraft(), StdioServerParameters(command=str(graft), args=["mcp", "--root", str(root)]),
                      f"codegraft {version('codegraft')} (work tree of {commit or '?'})", _basedpyright_version())


def _basedpyright_version() -> str:
    exe = shutil.which("basedpyright", path=str(VENV_BIN)) or shutil.which("basedpyright")
    if not exe:
        return "basedpyright not found"
    done = subprocess.run([exe, "--version"], check=False, capture_output=True, text=True, timeout=60)
    return " ".join(done.stdout.split()[:2]) or "basedpyright (version unknown)"


def find_serena(explicit: str | None) -> tuple[str | None, str]:
    """The serena executable, or None and why not: --serena when given, else $SERENA_BIN, PATH,
    then $TMPDIR/serena-venv/bin/serena."""
    default = str(Path(tempfile.gettempdir()) / "serena-venv" / "bin" / "serena")
    candidates = [explicit] if explicit else [os.environ.get("SERENA_BIN"), shutil.which("serena"), default]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate, ""
    if explicit:
        return None, f"--serena {explicit}: no such executable"
    return None, (f"`serena` not found ($SERENA_BIN, PATH, {default}); to install it in a throwaway venv: "
                  "python3.11 -m venv /tmp/serena-venv && /tmp/serena-venv/bin/pip install serena-agent")


def serena_spec(executable: str, root: Path, scratch: Path, language: str = "python_basedpyright") -> tuple[ServerSpec | None, str]:
    """Serena on ``root`` with ``language``'s server (Serena's own id: ``python_basedpyright``,
    with this venv's basedpyright; ``go``, with gopls from PATH; ``typescript``, which Serena
    installs from npm into its home), its home and project settings in ``scratch``."""
    done = subprocess.run([executable, "--version"], check=False, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return None, f"`{executable} --version` failed (exit {done.returncode}): {' '.join((done.stderr or done.stdout).split())[-300:]}"
    version = done.stdout.strip() or "serena (version unknown)"
    langserver = shutil.which("basedpyright-langserver", path=str(VENV_BIN)) or shutil.which("basedpyright-langserver")
    if language == "python_basedpyright" and not langserver:
        return None, "basedpyright-langserver not found: Serena would download its own through uvx, which this machine cannot"
    home = scratch / "serena-home"
    meta = scratch / "serena-meta"
    (meta / root.name).mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    # The servers Serena installs for itself (typescript-language-server from npm) are kept
    # between runs: each run's home is new, and the install is most of a first start.
    installed = Path(tempfile.gettempdir()) / "serena-language-servers"
    installed.mkdir(exist_ok=True)
    if not (home / "language_servers").exists():
        (home / "language_servers").symlink_to(installed, target_is_directory=True)
    # The global configuration: no dashboard or GUI, one tool per operation, basedpyright from
    # this virtualenv, and each project's .serena folder outside the project (the copy stays as
    # committed).
    (home / "serena_config.yml").write_text(
        "language_backend: LSP\nagent_interface: tools\ngui_log_window: False\nweb_dashboard: False\n"
        "web_dashboard_open_on_launch: False\nlog_level: 20\ntrace_lsp_communication: False\n"
        + (f"ls_specific_settings:\n  python_basedpyright:\n    ls_path: {json.dumps(langserver)}\n" if langserver else "") +
        f"project_serena_folder_location: {json.dumps(str(meta) + '/$projectFolderName')}\nprojects: []\n")
    (meta / root.name / "project.yml").write_text(
        f"project_name: {json.dumps(root.name)}\nlanguage_servers: [{json.dumps(language)}]\nencoding: \"utf-8\"\n"
        "ignore_all_files_in_gitignore: true\nread_only: false\n")
    env = {"SERENA_HOME": str(home), "SERENA_USAGE_REPORTING": "false"}
    args = ["start-mcp-server", "--project", str(root), "--context", "agent", "--agent-interface", "tools",
            "--enable-web-dashboard", "False", "--open-web-dashboard", "False", "--enable-gui-log-window", "False"]
    if language != "python_basedpyright" or not langserver:
        return ServerSpec(Serena(), StdioServerParameters(command=executable, args=args, env=env), version, language), ""
    ls_version = subprocess.run([langserver.replace("-langserver", ""), "--version"], check=False, capture_output=True, text=True).stdout.split()
    return ServerSpec(Serena(), StdioServerParameters(command=executable, args=args, env=env), version,
                      f"python_basedpyright via {langserver} ({' '.join(ls_version[:2])})"), ""

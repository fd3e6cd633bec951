"""Every registered operation, and every one of its fields, reaches all four front ends.

Two halves. The registry's real operations are checked against each front end's real surface
(the CLI's parser, batch's plan loader, the MCP tools a real SDK client lists, the commands a
real ``graft lsp`` process advertises). Then a probe operation, added to the registry the way
a new module would add itself, is driven through each front end with every field set away
from its default, and must arrive with exactly those values: a front end that dropped or
renamed an option fails here.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from lsprotocol import types as t
from mcp.client import Client
from pygls.lsp.client import LanguageClient

from engine.api import Engine, SourcePreference
from engine.batch import load_plan
from engine.edits.model import WorkspaceEdit
from engine.errors import UsageError
from engine.refactor.operations import OPERATIONS, FieldKind, RefactorOperation, UnknownField, build
from engine.refactor.operations.base import PlanContext, param
from engine.refactor.plan import RefactorPlan
from engine.refactor.policy import POLICIES
from engine.symbols import Confidence, Source
from engine.workspace import Workspace
from frontends.cli.arguments import build_parser, cli_flag
from frontends.cli.main import main
from frontends.lsp_server import _values
from frontends.mcp_server import build_server
from tests.conftest import SAMPLE

GRAFT = shutil.which("graft", path=str(Path(sys.executable).parent))


@dataclass(frozen=True)
class Probe(RefactorOperation):
    """Plans nothing; reports the values it was made with (as its one warning, in JSON)."""

    name: ClassVar[str] = "probe"
    summary: ClassVar[str] = "a test operation that echoes its fields"
    mcp_tool: ClassVar[str] = "probe_symbol"
    lsp_command: ClassVar[str] = "graft.probe"
    destructive: ClassVar[bool] = False
    idempotent: ClassVar[bool] = True

    address: str = param(FieldKind.ADDRESS, "a symbol")
    label: str = param(FieldKind.NAME, "a name")
    body: str = param(FieldKind.CODE, "some code")
    loud: bool = param(FieldKind.FLAG, "a flag that is off by default", default=False)
    quiet: bool = param(FieldKind.FLAG, "a flag that is on by default", default=True)
    where: str = param(FieldKind.PATH, "an optional path", default="here.py")


def plan(operation: RefactorOperation, context: PlanContext) -> RefactorPlan:
    """The probe's policy (this module stands in for its module of engine.refactor.policy)."""
    return RefactorPlan(operation.name, WorkspaceEdit(()), Source.AST, Confidence.HIGH,
                        [json.dumps(operation.values(), sort_keys=True)])


#: Every field away from its default.
PROBE_VALUES = {"address": "shop/pricing.py:apply_discount", "label": "fresh", "body": "x = 1\n", "loud": True, "quiet": False,
                "where": "there.py"}


@pytest.fixture()
def probe_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OPERATIONS, Probe.name, Probe)
    monkeypatch.setitem(POLICIES, Probe.name, __name__)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "sample"
    shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".graft"))
    return root


def echoed(warnings: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(warnings[0])
    return result


# -- the real operations against each front end's surface ----------------------------------


def _subparsers() -> dict[str, Any]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    choices = action.choices  # argparse types choices loosely: the subparsers' are a dict
    assert isinstance(choices, dict), choices
    return choices


@pytest.mark.parametrize("operation", list(OPERATIONS.values()), ids=list(OPERATIONS))
def test_every_field_is_a_cli_argument(operation: type[RefactorOperation]) -> None:
    sub = _subparsers()[operation.name]
    by_dest = {a.dest: a for a in sub._actions}
    for info in operation.fields():
        assert info.name in by_dest, f"graft {operation.name} has no argument for {info.name}"
        flag = cli_flag(info)
        if flag is not None and info.kind is not FieldKind.CODE:
            assert flag in by_dest[info.name].option_strings
    assert sub.description == operation.summary


@pytest.mark.parametrize("operation", list(OPERATIONS.values()), ids=list(OPERATIONS))
def test_every_field_is_a_batch_key_and_unknown_keys_are_refused(operation: type[RefactorOperation], tmp_path: Path) -> None:
    sample = {info.name: (not info.default if info.kind is FieldKind.FLAG else "a.py:f" if info.kind is FieldKind.ADDRESS else "x")
              for info in operation.fields()}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"op": operation.name, **sample}]))
    (loaded,) = load_plan(plan)
    assert loaded.values() == sample
    plan.write_text(json.dumps([{"op": operation.name, **sample, "new_nmae": "typo"}]))
    with pytest.raises(UnknownField, match="new_nmae"):
        load_plan(plan)


def test_batch_refuses_an_unknown_op_and_a_missing_field_by_name(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"op": "renmae", "address": "a.py:f"}]))
    with pytest.raises(UsageError, match="op must be one of .*rename"):
        load_plan(plan)
    plan.write_text(json.dumps([{"op": "rename", "address": "a.py:f"}]))
    with pytest.raises(UsageError, match="rename needs new_name"):
        load_plan(plan)
    plan.write_text(json.dumps([{"op": "rename", "address": "a.py:f", "new_name": "g", "mirrors": "no"}]))
    with pytest.raises(UsageError, match="mirrors must be true or false"):
        load_plan(plan)


def test_every_operation_is_an_mcp_tool_with_every_field(project: Path) -> None:
    engine = Engine(Workspace(project), source=SourcePreference.AST)

    async def run() -> Any:
        async with Client(build_server(engine)) as client:
            return (await client.list_tools()).tools

    try:
        tools = {tool.name: tool for tool in asyncio.run(run())}
    finally:
        engine.close()
    for operation in OPERATIONS.values():
        tool = tools[operation.mcp_tool]
        properties = tool.input_schema["properties"]
        assert set(properties) == {info.name for info in operation.fields()} | {"apply", "allow_dirty", "check", "structured"}, operation.name
        required = {info.name for info in operation.fields() if info.required}
        assert set(tool.input_schema.get("required", [])) == required
        assert all(properties[info.name].get("description") == info.help for info in operation.fields())


def test_every_operation_is_a_command_of_a_real_graft_lsp(project: Path) -> None:
    async def run() -> Any:
        client = LanguageClient("parity", "1")
        assert GRAFT is not None, "graft is installed with the package"
        await client.start_io(GRAFT, "lsp", "--source", "ast")
        result = await client.initialize_async(t.InitializeParams(capabilities=t.ClientCapabilities(), root_uri=project.as_uri()))
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        return result

    initialized = asyncio.run(run())
    advertised = set(initialized.capabilities.execute_command_provider.commands)
    assert {operation.lsp_command for operation in OPERATIONS.values()} <= advertised


def test_operation_names_are_unique_per_front_end() -> None:
    for attribute in ("name", "mcp_tool", "lsp_command"):
        names = [getattr(operation, attribute) for operation in OPERATIONS.values()]
        assert len(names) == len(set(names)), attribute


# -- a new operation reaches every front end with every value --------------------------------


def test_a_new_operation_reaches_the_cli_with_every_value(probe_registered: None, project: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "body.py"
    body.write_text(str(PROBE_VALUES["body"]))
    status = main(["--root", str(project), "--source", "ast", "--json", "probe", str(PROBE_VALUES["address"]),
                   str(PROBE_VALUES["label"]), "--body-file", str(body), "--loud", "--no-quiet", "--where", str(PROBE_VALUES["where"])])
    payload = json.loads(capsys.readouterr().out)
    assert status == 0, payload
    assert echoed(payload["warnings"]) == PROBE_VALUES


def test_a_new_operation_reaches_batch_with_every_value(probe_registered: None, project: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [{"op": "probe", **PROBE_VALUES}]}))
    (step,) = load_plan(plan)
    engine = Engine(Workspace(project), source=SourcePreference.AST)
    try:
        assert echoed(engine.plan(step).warnings) == PROBE_VALUES
    finally:
        engine.close()


def test_a_new_operation_reaches_mcp_with_every_value(probe_registered: None, project: Path) -> None:
    engine = Engine(Workspace(project), source=SourcePreference.AST)

    async def run() -> Any:
        async with Client(build_server(engine)) as client:
            return await client.call_tool("probe_symbol", {**PROBE_VALUES, "structured": True})

    try:
        result = asyncio.run(run())
    finally:
        engine.close()
    assert not result.is_error, result.content
    assert echoed(result.structured_content["warnings"]) == PROBE_VALUES


def test_a_new_operation_reaches_lsp_with_every_value_in_order_or_by_name(probe_registered: None) -> None:
    ordered = [PROBE_VALUES[info.name] for info in Probe.fields()]
    for arguments in (ordered, [dict(PROBE_VALUES)]):
        values = asyncio.run(_values(None, Probe, arguments))  # type: ignore[arg-type]  # no destination to ask for
        assert values is not None and build("probe", values).values() == PROBE_VALUES
    with pytest.raises(UsageError, match="at most 6 arguments"):
        asyncio.run(_values(None, Probe, [*ordered, "extra"]))  # type: ignore[arg-type]


def test_an_lsp_command_carries_options_by_name_to_the_plan(project: Path) -> None:
    """A real ``graft lsp``: graft.move with a named shim option. The shim would make the source
    import the moved function back, a cycle here, so with it the move is refused (the option
    arrived) and without it the move is sent to the editor."""
    edits: list[t.ApplyWorkspaceEditParams] = []

    async def run() -> Any:
        client = LanguageClient("parity", "1")

        @client.feature(t.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: t.ApplyWorkspaceEditParams) -> t.ApplyWorkspaceEditResult:
            edits.append(params)
            return t.ApplyWorkspaceEditResult(applied=True)

        assert GRAFT is not None, "graft is installed with the package"
        await client.start_io(GRAFT, "lsp", "--source", "ast")
        await client.initialize_async(t.InitializeParams(capabilities=t.ClientCapabilities(
            workspace=t.WorkspaceClientCapabilities(apply_edit=True, workspace_edit=t.WorkspaceEditClientCapabilities(document_changes=True))),
            root_uri=project.as_uri()))
        client.initialized(t.InitializedParams())
        move = {"address": "shop/pricing.py:with_vat", "dest": "shop/vat.py", "create": True, "import_check": False}
        outcomes = [await client.workspace_execute_command_async(t.ExecuteCommandParams("graft.move", [{**move, "shim": shim}]))
                    for shim in (True, False)]
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        return outcomes

    with_shim, without = asyncio.run(run())
    assert with_shim["applied"] is False and with_shim["error"]["code"] == "import_cycle", with_shim
    assert without["applied"] is True and len(edits) == 1, without


def test_every_operation_has_a_policy_that_plans_it() -> None:
    assert set(POLICIES) == set(OPERATIONS)
    for name, module in POLICIES.items():
        assert callable(getattr(importlib.import_module(module), "plan", None)), f"{name}: {module} has no plan()"


def test_a_new_operation_module_is_discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What adding an operation's surfaces takes: one module in engine/refactor/operations/ (its
    policy, a module of engine/refactor/policy/, is joined to it by a line of POLICIES)."""
    import engine.refactor.operations as operations

    (tmp_path / "zz_echo.py").write_text(
        "from dataclasses import dataclass\n"
        "from typing import ClassVar\n"
        "from engine.refactor.operations.base import FieldKind, RefactorOperation, param\n"
        "@dataclass(frozen=True)\n"
        "class Echo(RefactorOperation):\n"
        "    name: ClassVar[str] = 'echo'\n"
        "    summary: ClassVar[str] = 'echo'\n"
        "    mcp_tool: ClassVar[str] = 'echo_symbol'\n"
        "    lsp_command: ClassVar[str] = 'graft.echo'\n"
        "    address: str = param(FieldKind.ADDRESS, 'a symbol')\n"
    )
    monkeypatch.setattr(operations, "__path__", [*operations.__path__, str(tmp_path)])
    try:
        found = operations._discover()
    finally:
        sys.modules.pop("engine.refactor.operations.zz_echo", None)
    assert set(found) == set(OPERATIONS) | {"echo"} and [f.name for f in found["echo"].fields()] == ["address"]


def test_the_cli_and_mcp_answer_a_refactoring_in_one_shape(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`graft rename --json` and the MCP rename return the same outcome (the CLI adds its envelope)."""
    status = main(["--root", str(project), "--source", "ast", "--json", "rename", "shop/pricing.py:apply_discount", "discounted_total"])
    cli = json.loads(capsys.readouterr().out)
    assert status == 0, cli
    engine = Engine(Workspace(project), source=SourcePreference.AST)

    async def run() -> Any:
        async with Client(build_server(engine)) as client:
            return await client.call_tool("rename_symbol", {"address": "shop/pricing.py:apply_discount", "new_name": "discounted_total",
                                                            "structured": True})

    try:
        mcp = asyncio.run(run()).structured_content
    finally:
        engine.close()
    assert set(cli) - {"ok", "command", "target"} == set(mcp) - {"omitted"}
    for key in ("operation", "applied", "files", "edits", "source", "confidence", "diff"):
        assert cli[key] == mcp[key], key

"""The MCP refactoring tools: one per operation of the registry (engine.refactor.operations),
generated from its fields, and batch_apply for several as one transaction."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from engine.api_surface import CheckMode, OPERATIONS, plan_steps, RefactorOperation, run_batch
from frontends.mcp_core import (
    ALLOW_DIRTY, BATCH, CHECK, edit_options, edit_result, EditOutput, GraftMCPServer, GraftTools, operation_hints,
    STRUCTURED,
)


def operation_tool(operation: type[RefactorOperation], tools: GraftTools) -> Callable[..., CallToolResult]:
    """One MCP tool per registered operation: its fields are the tool's parameters (with their
    help as descriptions), plus ``apply``; the engine refuses unknown or missing fields by name."""

    def run(**arguments: Any) -> CallToolResult:
        ctx = arguments.pop("ctx", None)
        apply = bool(arguments.pop("apply", False))
        allow_dirty = bool(arguments.pop("allow_dirty", False))
        structured = bool(arguments.pop("structured", False))
        check = arguments.pop("check", CheckMode.FAST.value)

        def work() -> CallToolResult:
            built = operation.build(arguments)
            options = edit_options(tools.engine, allow_dirty, check)
            return edit_result(tools.client(ctx).run_operation(built, apply=apply, options=options), built.target(), structured)

        return tools.call(work)

    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [
        inspect.Parameter(info.name, keyword, default=inspect.Parameter.empty if info.required else info.default,
                          annotation=Annotated[info.python_type, Field(description=info.help)])
        for info in operation.fields()
    ]
    parameters += [
        inspect.Parameter("apply", keyword, default=False,
                          annotation=bool),  # dry run until apply=true: the instructions say it once
        inspect.Parameter("allow_dirty", keyword, default=False, annotation=ALLOW_DIRTY),
        inspect.Parameter("check", keyword, default=CheckMode.FAST.value, annotation=CHECK),
        inspect.Parameter("structured", keyword, default=False, annotation=STRUCTURED),
        inspect.Parameter("ctx", keyword, default=None, annotation=Context | None),
    ]
    returns = Annotated[CallToolResult, EditOutput]
    run.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]  # the SDK reads it
    run.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    run.__name__ = operation.mcp_tool
    return run


def register_refactorings(server: GraftMCPServer, tools: GraftTools) -> None:
    """One tool per registered operation, then batch_apply."""
    engine = tools.engine

    for operation in OPERATIONS.values():
        server.add_tool(operation_tool(operation, tools), name=operation.mcp_tool, description=operation.summary,
                        annotations=operation_hints(operation))

    @server.tool(annotations=BATCH,
                 description=("Several refactorings as one transaction (one undo): steps = [{op: rename, address, new_name}, "
                              "{op: move, ...}] as in `graft batch`; each=true commits step by step."))
    def batch_apply(steps: list[dict[str, Any]], apply: bool = False, each: bool = False, allow_dirty: ALLOW_DIRTY = False,
                    check: CHECK = "fast", structured: STRUCTURED = False,
                    ctx: Context | None = None) -> Annotated[CallToolResult, EditOutput]:
        def work() -> CallToolResult:
            client = tools.client(ctx)
            outcome = run_batch(engine, plan_steps(steps, "the batch"), apply=apply, each=each,
                                options=edit_options(engine, allow_dirty, check))
            for transaction in dict.fromkeys(s.transaction for s in outcome.steps if s.transaction is not None):
                client.applied.append(transaction)  # the session may undo its own batch
                client.undone.clear()
            return edit_result(outcome, structured=structured)
        return tools.call(work)

"""The engine as the front ends see it: every name ``frontends/`` uses from ``engine/``, and
nothing else (tests/test_architecture.py holds the front ends to this module).

A name is imported from its home module when a front end first asks for it (PEP 562's module
``__getattr__``), so importing this module costs nothing: the thin CLI client, which needs one
light name, does not load the engine behind the others (tests/test_daemon.py,
tests/test_lazy_imports.py). The type checker reads the same names from the imports below
(each ``name as name``: a re-export).

To give a front end a new name: add it to ``_HOMES`` and to the imports under ``TYPE_CHECKING``
(tests/test_architecture.py checks that the two agree and that every name resolves).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
"""typing's constant, not imported: the thin client never imports typing (tests/test_daemon.py)."""

if TYPE_CHECKING:
    from typing import Any

    from engine.answers import Diagnostic as Diagnostic
    from engine.api import (
        Engine as Engine,
        Explanation as Explanation,
        FindResult as FindResult,
        SymbolText as SymbolText,
        SymbolsListing as SymbolsListing,
    )
    from engine.batch import load_plan as load_plan, plan_steps as plan_steps, run_batch as run_batch
    from engine.choices import (
        DEFAULT_MAX_FILE_BYTES as DEFAULT_MAX_FILE_BYTES,
        SourcePreference as SourcePreference,
        find_root as find_root,
    )
    from engine.client import EngineClient as EngineClient
    from engine.doctor import Doctor as Doctor, FamilyReport as FamilyReport, diagnose as diagnose
    from engine.edits.diff import FileSummary as FileSummary, paint as paint
    from engine.edits.editor_check import (
        EditorCheck as EditorCheck,
        keep as keep_editor_check,  # noqa: F401  (re-exported under the name the front ends use)
        prepare as prepare_editor_check,  # noqa: F401  (re-exported under the name the front ends use)
    )
    from engine.edits.journal import Journal as Journal, JournalRecord as JournalRecord
    from engine.edits.lsp_json import (
        MalformedEdit as MalformedEdit,
        edits_without_base as edits_without_base,
        from_lsp as from_lsp,
        to_lsp as to_lsp,
    )
    from engine.edits.model import ChangeAnnotation as ChangeAnnotation, WorkspaceEdit as WorkspaceEdit
    from engine.edits.outcome import EditOutcome as EditOutcome
    from engine.edits.pending_checks import PendingCheck as PendingCheck
    from engine.edits.pending_checks import load as load_pending_checks  # noqa: F401  (re-exported under the name the front ends use)
    from engine.edits.session import EditOptions as EditOptions
    from engine.edits.verification import CheckMode as CheckMode, Verification as Verification, capped as capped
    from engine.errors import (
        GraftError as GraftError,
        MalformedAddress as MalformedAddress,
        Refused as Refused,
        ServiceUnavailable as ServiceUnavailable,
        SymbolNotFound as SymbolNotFound,
        UsageError as UsageError,
    )
    from engine.extract import FileSymbols as FileSymbols
    from engine.files import EditRequest as EditRequest, FileView as FileView, list_dir as list_dir
    from engine.fleet import (
        FAILED as FLEET_FAILED,  # noqa: F401  (re-exported under the name the front ends use)
        RESULTS as FLEET_RESULTS,  # noqa: F401  (re-exported under the name the front ends use)
        STATUSES as FLEET_STATUSES,  # noqa: F401  (re-exported under the name the front ends use)
        FleetOptions as FleetOptions,
        FleetProgress as FleetProgress,
        FleetRow as FleetRow,
        load_repos as load_repos,
        run as run_fleet,  # noqa: F401  (re-exported under the name the front ends use)
    )
    from engine.graph import (
        EdgeRef as EdgeRef,
        Finding as Finding,
        IndexStats as IndexStats,
        NodeRef as NodeRef,
        Reached as Reached,
    )
    from engine.graph.queries import Cycle as Cycle, OverviewEntry as OverviewEntry
    from engine.languages import language_of as language_of
    from engine.located import LocatedLine as LocatedLine, located as located
    from engine.names import PositionAddress as PositionAddress, parse_address as parse_address
    from engine.opening import open_engine as open_engine, trust_in_this_process as trust_in_this_process
    from engine.overloads import signature_text as signature_text
    from engine.ports import (
        LanguageServices as LanguageServices,
        ServerStatus as ServerStatus,
        Serving as Serving,
        Tools as Tools,
        load_language_services as load_language_services,
        load_tools as load_tools,
        nothing_to_discard as nothing_to_discard,
        start_language_servers_early as start_language_servers_early,
    )
    from engine.positions import LineIndex as LineIndex, Position as Position, PositionEncoding as PositionEncoding
    from engine.refactor.operations import (
        FieldInfo as FieldInfo,
        FieldKind as FieldKind,
        OPERATIONS as OPERATIONS,
        RefactorOperation as RefactorOperation,
    )
    from engine.refactor.operations.rename_symbol import Rename as Rename
    from engine.refactor.plan import RefactorPlan as RefactorPlan
    from engine.refactor.python.strings_and_comments import forget_scans as forget_scans
    from engine.references import NavigationResult as NavigationResult
    from engine.root_folder import find_root_folder as find_root_folder
    from engine.server_answers import (
        code_action_edit as code_action_edit,
        hover as hover,
        list_code_actions as list_code_actions,
    )
    from engine.settings import load_engine_settings as load_engine_settings, shipped_trust_note as shipped_trust_note
    from engine.state_folder import open_state_file as open_state_file, state_folder as state_folder
    from engine.symbol_search import SymbolMatches as SymbolMatches, search_symbols as search_symbols
    from engine.symbols import Confidence as Confidence, Symbol as Symbol, SymbolKind as SymbolKind
    from engine.workspace import Skipped as Skipped, Workspace as Workspace, WorkspaceConfig as WorkspaceConfig

_HOMES: dict[str, str] = {
    "Diagnostic": "engine.answers",
    "Engine": "engine.api", "Explanation": "engine.api", "FindResult": "engine.api", "SymbolText": "engine.api",
    "SymbolsListing": "engine.api",
    "load_plan": "engine.batch", "plan_steps": "engine.batch", "run_batch": "engine.batch",
    "DEFAULT_MAX_FILE_BYTES": "engine.choices", "SourcePreference": "engine.choices", "find_root": "engine.choices",
    "EngineClient": "engine.client",
    "Doctor": "engine.doctor", "FamilyReport": "engine.doctor", "diagnose": "engine.doctor",
    "FileSummary": "engine.edits.diff", "paint": "engine.edits.diff",
    "EditorCheck": "engine.edits.editor_check", "keep_editor_check": "engine.edits.editor_check:keep",
    "prepare_editor_check": "engine.edits.editor_check:prepare",
    "Journal": "engine.edits.journal", "JournalRecord": "engine.edits.journal",
    "MalformedEdit": "engine.edits.lsp_json", "edits_without_base": "engine.edits.lsp_json",
    "from_lsp": "engine.edits.lsp_json", "to_lsp": "engine.edits.lsp_json",
    "ChangeAnnotation": "engine.edits.model", "WorkspaceEdit": "engine.edits.model",
    "EditOutcome": "engine.edits.outcome",
    "PendingCheck": "engine.edits.pending_checks", "load_pending_checks": "engine.edits.pending_checks:load",
    "EditOptions": "engine.edits.session",
    "CheckMode": "engine.edits.verification", "Verification": "engine.edits.verification",
    "capped": "engine.edits.verification",
    "GraftError": "engine.errors", "MalformedAddress": "engine.errors", "Refused": "engine.errors",
    "ServiceUnavailable": "engine.errors", "SymbolNotFound": "engine.errors", "UsageError": "engine.errors",
    "FileSymbols": "engine.extract",
    "EditRequest": "engine.files", "FileView": "engine.files", "list_dir": "engine.files",
    "FLEET_FAILED": "engine.fleet:FAILED", "FLEET_RESULTS": "engine.fleet:RESULTS",
    "FLEET_STATUSES": "engine.fleet:STATUSES", "FleetOptions": "engine.fleet", "FleetProgress": "engine.fleet",
    "FleetRow": "engine.fleet", "load_repos": "engine.fleet", "run_fleet": "engine.fleet:run",
    "EdgeRef": "engine.graph", "Finding": "engine.graph", "IndexStats": "engine.graph", "NodeRef": "engine.graph",
    "Reached": "engine.graph",
    "Cycle": "engine.graph.queries", "OverviewEntry": "engine.graph.queries",
    "language_of": "engine.languages",
    "LocatedLine": "engine.located", "located": "engine.located",
    "PositionAddress": "engine.names", "parse_address": "engine.names",
    "open_engine": "engine.opening", "trust_in_this_process": "engine.opening",
    "signature_text": "engine.overloads",
    "LanguageServices": "engine.ports", "ServerStatus": "engine.ports", "Serving": "engine.ports",
    "Tools": "engine.ports", "load_language_services": "engine.ports", "load_tools": "engine.ports",
    "nothing_to_discard": "engine.ports", "start_language_servers_early": "engine.ports",
    "LineIndex": "engine.positions", "Position": "engine.positions", "PositionEncoding": "engine.positions",
    "FieldInfo": "engine.refactor.operations", "FieldKind": "engine.refactor.operations",
    "OPERATIONS": "engine.refactor.operations", "RefactorOperation": "engine.refactor.operations",
    "Rename": "engine.refactor.operations.rename_symbol",
    "RefactorPlan": "engine.refactor.plan",
    "forget_scans": "engine.refactor.python.strings_and_comments",
    "NavigationResult": "engine.references",
    "find_root_folder": "engine.root_folder",
    "code_action_edit": "engine.server_answers", "hover": "engine.server_answers",
    "list_code_actions": "engine.server_answers",
    "load_engine_settings": "engine.settings", "shipped_trust_note": "engine.settings",
    "open_state_file": "engine.state_folder", "state_folder": "engine.state_folder",
    "SymbolMatches": "engine.symbol_search", "search_symbols": "engine.symbol_search",
    "Confidence": "engine.symbols", "Symbol": "engine.symbols", "SymbolKind": "engine.symbols",
    "Skipped": "engine.workspace", "Workspace": "engine.workspace", "WorkspaceConfig": "engine.workspace",
}
"""Each name's home: ``module``, or ``module:attribute`` where the front ends know it by another name."""

def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: the front ends' engine API does not offer it")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # the next lookup finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted(_HOMES)

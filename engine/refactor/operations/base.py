"""What every refactoring operation is: a frozen dataclass of its inputs.

An operation's fields are its whole interface. Each front end derives its own surface from
them (the CLI its arguments, batch and the fixture runner their step keys, MCP its tool
parameters, LSP its command arguments), so an option added here reaches all four. A field
says what it holds (:class:`FieldKind`) and how to describe it; a class says its names per
front end. How it plans is its policy's business (engine.refactor.policy, joined to it by
name there), so that an operation imports no policy and the registry stays light.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Protocol

from engine.errors import UsageError
from engine.names import parse_address, parse_span_address

if TYPE_CHECKING:
    # Only annotations name these (fields() resolves the operations' class annotations, which
    # name str, bool and this module's classes): the registry is imported by `graft --help` and
    # every front end's start, and the graph and the extractors pull in networkx and tree-sitter.
    from engine.extract import FileSymbols, SymbolExtractor
    from engine.graph import GraphQueries
    from engine.refactor.mentions import FileWords
    from engine.names import Address
    from engine.ports import LanguageServices, Tools
    from engine.references import NavigationResult
    from engine.settings import EngineSettings
    from engine.symbols import Symbol
    from engine.workspace import Workspace


class PlanContext(Protocol):
    """What an operation may consult while planning: the workspace, the project graph, the
    language services (or none) and the symbol readers. The engine is one; nothing here writes."""

    workspace: Workspace
    services: LanguageServices | None
    tools: Tools | None
    settings: EngineSettings

    @property
    def use_server(self) -> bool:
        """Whether the source preference lets a language server answer."""
        ...

    @property
    def require_server(self) -> bool:
        """Whether the preference is ``lsp``: a missing server is refused, never replaced."""
        ...

    @property
    def extractor(self) -> SymbolExtractor: ...

    def graph(self) -> GraphQueries: ...

    def workspace_files(self) -> list[str]:
        """Every file of the workspace scan, sources or not (the list must not be changed)."""
        ...

    def file_words(self) -> FileWords | None:
        """The words of the source files a long-lived engine has indexed, at their current content
        (engine.refactor.mentions); None when it has none."""
        ...

    def outline(self, path: str) -> FileSymbols: ...

    def resolve(self, address: Address) -> Symbol: ...

    def resolve_binding(self, address: Address) -> list[Symbol]: ...

    def references(self, address: str) -> NavigationResult: ...


STRICT_HELP = ("refuse when files it could not search (too large, binary, unreadable) mention the changed names; "
               "off names them in warnings, at lower confidence")


class FieldKind(str, Enum):
    """What a field holds, so front ends can check and describe it alike."""

    ADDRESS = "address"
    """A name path or FILE:LINE[:COL]; parsed when the operation is made (a malformed one is refused there)."""
    PATH = "path"
    """A workspace-relative file path."""
    NAME = "name"
    """An identifier."""
    CODE = "code"
    """Source text (the CLI reads it from a file)."""
    FLAG = "flag"
    """A yes/no option."""
    SPAN = "span"
    """What ADDRESS takes, or a span of code ``FILE:LINE:COL-LINE:COL`` (extract, inline)."""
    TEXT = "text"
    """A short string option given inline (a line span ``12-18``, an expression to match)."""


@dataclass(frozen=True)
class FieldInfo:
    name: str
    kind: FieldKind
    help: str
    required: bool
    default: Any
    cli_flag: str | None
    """For options: the CLI's flag, when it is not derived from the name (``--body-file``)."""
    metavar: str

    @property
    def python_type(self) -> type:
        return bool if self.kind is FieldKind.FLAG else str


def param(kind: FieldKind, help: str, *, default: Any = dataclasses.MISSING, cli_flag: str | None = None,
          metavar: str | None = None) -> Any:
    """Declare an operation field: its kind and help (every front end shows the same sentence)."""
    metadata = {"kind": kind, "help": help, "cli_flag": cli_flag, "metavar": metavar}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclass(frozen=True)
class CodeAction:
    """How an editor offers an operation on the symbol under the cursor."""

    title: str
    kind: str
    """An LSP CodeActionKind value (``refactor``, ``refactor.move``, ``refactor.rewrite``)."""
    top_level_only: bool = False


class UnknownField(UsageError):
    code = "unknown_field"


_FIELDS: dict[type, tuple[FieldInfo, ...]] = {}


@dataclass(frozen=True)
class RefactorOperation:
    """Base of every operation. Subclasses are frozen dataclasses with :func:`param` fields and
    the class variables below; their policy module plans them (engine.refactor.policy.POLICIES)."""

    name: ClassVar[str]
    """The CLI command and the batch step's ``op``: ``rename``, ``rename-file``."""
    summary: ClassVar[str]
    """One line for help texts and tool descriptions."""
    mcp_tool: ClassVar[str]
    lsp_command: ClassVar[str]
    code_action: ClassVar[CodeAction | None] = None
    reads_graph: ClassVar[bool] = False
    """Whether planning reads the project graph: a cold server's start then overlaps building it."""
    span_only: ClassVar[bool] = False
    """Whether planning needs only its target's lines in one file (engine.refactor.syntactic_target):
    no server is started ahead of the plan, which asks one only when the syntax tree cannot settle it."""
    destructive: ClassVar[bool]
    """Whether applying it loses content (a deletion, a declaration replaced) rather than only
    changing names and places or adding code: MCP's destructiveHint, what an agent asks about."""
    idempotent: ClassVar[bool]
    """Whether the same call again changes nothing more (a second rename or delete finds nothing
    to act on; an insertion inserts again): MCP's idempotentHint."""

    def __post_init__(self) -> None:
        for info in self.fields():
            value = getattr(self, info.name)
            if not isinstance(value, info.python_type):
                raise UsageError(f"{self.name}: {info.name} must be {'true or false' if info.kind is FieldKind.FLAG else 'a string'}, "
                                 f"not {type(value).__name__}")
            if info.kind is FieldKind.ADDRESS:
                parse_address(str(value))  # a malformed address is refused before anything is planned
            elif info.kind is FieldKind.SPAN:
                parse_span_address(str(value))

    def target(self) -> str:
        """What the operation acts on, for headers and progress lines."""
        address = getattr(self, "address", None)
        return str(address) if address is not None else " -> ".join(str(getattr(self, f.name)) for f in self.fields()[:2])

    def source_file(self) -> str | None:
        """The file of the symbol the operation starts from, when its address names one (a bare
        name does not): resolving it is the plan's first question to that file's server. File
        operations name none: a Python file rename or a file delete asks no server."""
        address = getattr(self, "address", None)
        return parse_span_address(str(address)).file if address is not None else None

    def values(self) -> dict[str, object]:
        """The fields as a batch step would give them."""
        return {info.name: getattr(self, info.name) for info in self.fields()}

    @classmethod
    def fields(cls) -> list[FieldInfo]:
        # Worked out once per class: typing.get_type_hints evaluates every annotation, and each
        # call through a warm daemon asks three times (a few ms of every call).
        known = _FIELDS.get(cls)
        if known is None:
            known = _FIELDS[cls] = tuple(cls._declared_fields())
        return list(known)

    @classmethod
    def _declared_fields(cls) -> list[FieldInfo]:
        hints = typing.get_type_hints(cls)
        found = []
        for declared in dataclasses.fields(cls):
            metadata = declared.metadata
            kind = metadata.get("kind")
            if kind is None:
                raise TypeError(f"{cls.__name__}.{declared.name} is not declared with param()")
            if (hints[declared.name] is bool) != (kind is FieldKind.FLAG):
                raise TypeError(f"{cls.__name__}.{declared.name}: flags are bool and only flags are")
            required = declared.default is dataclasses.MISSING
            found.append(FieldInfo(
                declared.name, kind, metadata["help"], required, None if required else declared.default,
                metadata["cli_flag"], metadata["metavar"] or declared.name.upper(),
            ))
        return found

    @classmethod
    def build(cls, values: Mapping[str, object], *, where: str = "") -> RefactorOperation:
        """The operation from named values (a batch step, a fixture case, a tool call): an unknown
        or missing field is refused by its name, so a typo never passes silently as a default."""
        known = {info.name: info for info in cls.fields()}
        prefix = f"{where}: " if where else ""
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise UnknownField(f"{prefix}{cls.name} has no field {', '.join(unknown)}; its fields are {', '.join(known)}")
        missing = [name for name, info in known.items() if info.required and name not in values]
        if missing:
            raise UsageError(f"{prefix}{cls.name} needs {', '.join(missing)}")
        return cls(**values)

"""Typed refusals and errors.

Every error is a short sentence a user can act on. Front ends map the
classes to exit codes and JSON; they never parse the message.
"""

from __future__ import annotations

from dataclasses import dataclass


class GraftError(Exception):
    """Base of every error the engine raises on purpose."""

    code: str = "error"

    def __init__(self, message: str, *, option: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.option = option
        """The request option that would let this pass (``allow_dirty``, ``create``), named as an
        operation field or apply option is: each front end says how to set it in its own terms
        (``--allow-dirty`` on the command line, ``allow_dirty=true`` in an MCP call)."""

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {"code": self.code, "message": self.message}
        if self.option is not None:
            found["option"] = self.option
        return found


class Refused(GraftError):
    """The request was understood, but the engine will not or cannot do it."""

    code = "refused"


class ListingRefusal(Refused):
    """A refusal about several places, each named on a line: its JSON lists them under ``listed_as``."""

    listed_as = "places"

    def __init__(self, message: str, listed: list[str]) -> None:
        super().__init__(message)
        self.listed = listed

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), self.listed_as: self.listed}


class UsageError(GraftError):
    """The request itself is malformed (exit status 2 in the CLI)."""

    code = "usage"


class MalformedAddress(UsageError):
    """An address that does not follow ``[FILE:]Seg(/Seg)*`` or ``FILE:LINE[:COL]``."""

    code = "malformed_address"

    def __init__(self, address: str, offset: int, reason: str) -> None:
        pointer = " " * offset + "^"
        super().__init__(f"malformed address: {reason} at column {offset + 1}\n  {address}\n  {pointer}")
        self.address = address
        self.offset = offset
        self.reason = reason

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "address": self.address, "offset": self.offset, "reason": self.reason}


class UnsafePath(Refused):
    """A path that resolves outside the workspace root (``..``, absolute, or a symlink)."""

    code = "unsafe_path"


class ProtectedPath(UnsafePath):
    """A path inside ``.git``, ``.graft`` (or another version-control folder): never written by an edit."""

    code = "protected_path"


class UnreadableFile(Refused):
    """A file that exists but cannot be used as source: binary, too large, not UTF-8."""

    code = "unreadable_file"

    def __init__(self, path: str, reason: str, *, option: str | None = None) -> None:
        super().__init__(f"{path}: {reason}", option=option)
        self.path = path
        self.reason = reason

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "path": self.path, "reason": self.reason}


class EditsOutsideWorkspace(Refused):
    """A plan whose edits reach files outside the workspace root: a server (or jedi) resolved an
    import to a copy elsewhere, such as one installed in an environment. Nothing is written."""

    code = "outside_workspace"

    def __init__(self, paths: list[str], why: str) -> None:
        shown = ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")
        super().__init__(
            f"{why} would also edit files outside the workspace: {shown}; nothing was changed. The import most "
            "likely resolves to an installed copy of the package rather than to the workspace's sources: make the "
            "project's environment (its .venv, trusted) or its source roots the ones the tools resolve against"
        )
        self.paths = list(paths)

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "paths": self.paths}


class FileNotInWorkspace(Refused):
    """A path inside the workspace that does not exist or is not a regular file."""

    code = "file_not_found"


@dataclass(frozen=True)
class Candidate:
    """One ready-to-paste address offered in a refusal."""

    address: str
    kind: str
    line: int


class SymbolNotFound(Refused):
    code = "not_found"

    def __init__(self, message: str, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.suggestions = suggestions or []

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "suggestions": self.suggestions}


class NoSuchParameter(SymbolNotFound):
    """``func/param`` where the function has no parameter of that name; ``suggestions`` are
    the addresses of the parameters it has."""

    code = "no_such_parameter"


class AmbiguousAddress(Refused):
    code = "ambiguous"

    def __init__(self, message: str, candidates: list[Candidate]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)

    def to_json(self) -> dict[str, object]:
        return {
            **super().to_json(),
            "candidates": [{"address": c.address, "kind": c.kind, "line": c.line} for c in self.candidates],
        }


class ServiceUnavailable(Refused):
    """A language service could not answer: not installed, not ready in time, crashed, or timed out.

    ``auto`` source selection catches this and falls back to the syntax tree,
    saying why; an explicit ``--source lsp`` reports it as a refusal.
    """

    code = "service_unavailable"


class UnsupportedByServer(Refused):
    """The server that serves this file (by the project's own choice: TypeScript 7's) has no way
    to do the operation, and codegraft has no other: the message names the server and its version.
    Not a :class:`ServiceUnavailable`, which ``auto`` falls back from: there is nothing to fall
    back to, and asking again will not help."""

    code = "unsupported_by_server"


class NotCallable(Refused):
    """Callers, callees or impact asked of a symbol in which the language server's call hierarchy
    finds nothing callable (a type, a constant): an empty answer would read as "nothing calls it"."""

    code = "not_callable"


class ServerAnsweredError(ServiceUnavailable):
    """A running server answered a request with an error: a failure on its side, or its own
    check refusing the request on purpose (gopls refuses a rename that would conflict), which
    a language's passes can tell apart (engine.refactor.language_passes)."""

    code = "server_error"

    def __init__(self, server: str, method: str, error_code: int | None, detail: str) -> None:
        super().__init__(f"{server} answered {method} with error {error_code}: {detail}")
        self.server = server
        self.method = method
        self.error_code = error_code
        self.detail = detail


class InvalidName(UsageError):
    """A new name that is not an identifier of the language, or is one of its keywords."""

    code = "invalid_name"


class EmptyText(UsageError):
    """Replacement or inserted text that is empty (a delete is its own operation)."""

    code = "empty_text"


class NotTopLevel(UsageError):
    """An operation that takes top-level symbols (move) given a nested one."""

    code = "not_top_level"


class DestinationMissing(UsageError):
    """A destination file or folder that does not exist and will not be made unless asked."""

    code = "destination_missing"


class TargetExists(UsageError):
    """A file operation whose target path is already taken."""

    code = "target_exists"


class ExtensionMismatch(UsageError):
    """A file rename that would change what kind of file it is (a.py to a.txt)."""

    code = "extension_mismatch"


class PackageInit(UsageError):
    """A file rename of a package's ``__init__``: that renames a package, which is many modules."""

    code = "package_init"


class DefinitionsApart(Refused):
    """Same-named definitions that act as one (an overload stack) but have other code between them."""

    code = "definitions_apart"


class OverridesBase(Refused):
    """A method that overrides a base class's method: the base calls it by name (through
    ``self``), so deleting it changes what the base does although nothing refers to it."""

    code = "overrides_base"


class BaseUsesAttribute(Refused):
    """A member that redeclares an attribute a base class uses on ``self`` without setting it
    (it expects its subclasses to provide it): renaming the member alone would break the base,
    and renaming the base's uses would break every other class that provides it."""

    code = "base_uses_attribute"


class BaseUnresolved(Refused):
    """A class's base that could not be followed, so whether its method overrides one there
    is unknown: refused rather than taking "no override found" for an answer."""

    code = "base_unresolved"


class ColumnRequired(UsageError):
    """``FILE:LINE`` given where a name must be pointed at: a line can hold several names, and
    answering for the symbol around the line instead would answer another question."""

    code = "column_required"


class PositionOutOfRange(UsageError):
    """``FILE:LINE[:COL]`` past the end of the file, or past the end of its line: clamping it
    would silently answer about another place."""

    code = "position_out_of_range"

    def __init__(self, message: str, path: str, line: int, column: int | None, limit: int) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column
        self.limit = limit
        """The file's last line, or (for a column) the last column of the line."""

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "path": self.path, "line": self.line, "column": self.column, "limit": self.limit}


class MatchNotFound(Refused):
    """``--match TEXT`` that does not occur in the symbol it was asked of."""

    code = "match_not_found"


class AmbiguousMatch(Refused):
    """``--match TEXT`` that occurs more than once in the symbol: the candidates are the
    ``FILE:LINE:COL-LINE:COL`` range of each occurrence, any of which can be given instead."""

    code = "ambiguous_match"

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = list(candidates)

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "candidates": self.candidates}

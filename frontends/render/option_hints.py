"""How to set the option a refusal names (``GraftError.option``), built once for every front end.

The options a request can set are the registry's flags (engine.refactor.operations) and the
apply's own guards; a front end says which of the apply's it takes and how it spells setting
one. An option it cannot set gets no hint: a hint never names a flag or argument that is not there.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from engine.api_surface import OPERATIONS, FieldKind, RefactorOperation

NUMBER_OPTIONS = frozenset({"max_file_bytes"})
"""Options that take a number rather than true."""


@functools.cache
def registry_flags() -> frozenset[str]:
    """Every operation's flags: each is a field of its operation in every front end."""
    return frozenset(info.name for operation in OPERATIONS.values() for info in operation.fields() if info.kind is FieldKind.FLAG)


@dataclass(frozen=True)
class OptionHints:
    """One front end's way of saying how to set an option."""

    switch: Callable[[str], str]
    """The hint for an option set to true: ``pass --allow-dirty``, ``call again with allow_dirty=true``."""
    apply_options: frozenset[str]
    """The apply's own options (not an operation's fields) this front end takes."""
    number: Callable[[str], str] | None = None
    """The hint for an option that takes a number, where this front end has one."""

    def __call__(self, option: str | None, operation: type[RefactorOperation] | None = None) -> str:
        """`` (how to set it)``, or "" when this front end cannot set it. ``operation``: the one the
        request ran, when the front end takes only its fields (an LSP command)."""
        if option is None:
            return ""
        if option in NUMBER_OPTIONS:
            return f" ({self.number(option)})" if self.number is not None and option in self.apply_options else ""
        flags = registry_flags() if operation is None else {i.name for i in operation.fields() if i.kind is FieldKind.FLAG}
        return f" ({self.switch(option)})" if option in flags or option in self.apply_options else ""


def _cli_flag(option: str) -> str:
    return "--" + option.replace("_", "-")


CLI = OptionHints(
    switch=lambda option: f"pass {_cli_flag(option)}",
    apply_options=frozenset({"allow_dirty", "allow_syntax_errors", "force", "overwrite_changed", "max_file_bytes"}),
    number=lambda option: f"raise it with {_cli_flag(option)} N",
)
MCP = OptionHints(switch=lambda option: f"call again with {option}=true", apply_options=frozenset({"allow_dirty", "overwrite_changed"}))
LSP = OptionHints(switch=lambda option: f'give "{option}": true in the command\'s arguments',
                  apply_options=frozenset({"allow_dirty", "allow_syntax_errors"}))

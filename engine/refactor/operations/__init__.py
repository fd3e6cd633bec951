"""The one registry of refactoring operations.

Every module of this package that defines :class:`RefactorOperation` subclasses adds them here, so an
operation is one module (plus its fixtures): the CLI, batch, the fixture runner, MCP and LSP
all build their surfaces from :data:`OPERATIONS`, and tests/test_operation_parity.py checks
that every operation and every field reaches each of them.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Mapping

from engine.errors import UsageError
from engine.refactor.operations.base import CodeAction, FieldInfo, FieldKind, RefactorOperation, PlanContext, UnknownField

__all__ = ["OPERATIONS", "CodeAction", "FieldInfo", "FieldKind", "RefactorOperation", "PlanContext", "UnknownField", "build"]


def _discover() -> dict[str, type[RefactorOperation]]:
    found: dict[str, type[RefactorOperation]] = {}
    for module in pkgutil.iter_modules(__path__):
        if module.name == "base":
            continue
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        for value in vars(loaded).values():
            # Only classes that name an operation: a shared base in a module (no ``name``) is not one.
            if isinstance(value, type) and issubclass(value, RefactorOperation) and value.__module__ == loaded.__name__ \
                    and "name" in vars(value):
                if value.name in found:
                    raise TypeError(f"two operations are called {value.name}: {found[value.name].__qualname__} and {value.__qualname__}")
                found[value.name] = value
    return dict(sorted(found.items()))


OPERATIONS: dict[str, type[RefactorOperation]] = _discover()
"""RefactorOperation name (the CLI command, the batch step's ``op``) → its class."""


def build(name: object, values: Mapping[str, object], *, where: str = "") -> RefactorOperation:
    """An operation by name from named values; an unknown name or field is refused with the choices."""
    operation = OPERATIONS.get(name) if isinstance(name, str) else None
    if operation is None:
        prefix = f"{where}: " if where else ""
        raise UsageError(f"{prefix}op must be one of {', '.join(OPERATIONS)}, not {name!r}")
    return operation.build(values, where=where)

"""The CLI's argument parser class, shared by the modules that add commands to it."""

from __future__ import annotations

import argparse
from typing import NoReturn, TypeAlias

from engine.api_surface import UsageError


class ArgumentsRejected(UsageError):
    """argparse's refusal of the command line, raised instead of its exit so that ``--json``
    can still answer in JSON."""


class GraftParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ArgumentsRejected(f"{self.prog}: {message}\n{self.format_usage().strip()}")


Commands: TypeAlias = "argparse._SubParsersAction[GraftParser]"  # a string: not subscriptable at run time
"""The ``graft COMMAND`` table each command module adds its parsers to."""

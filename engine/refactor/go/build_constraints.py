"""Go file renames that change a file's build constraints (``x.go`` to ``x_windows.go``).

The rules of which builds include a file are go/build's, in engine.languages.go_builds.
"""

from __future__ import annotations

from engine.errors import Refused
from engine.languages.go_builds import name_constraint


class BuildsChange(Refused):
    """A Go file rename whose new name changes which builds include the file."""

    code = "build_constraints_change"


def renamed_builds(old: str, new: str) -> str | None:
    """What a rename from ``old`` to ``new`` changes about the builds that include the file, or
    None when its name says the same (``x.go`` to ``x_windows.go``: Windows builds only)."""
    before, after = name_constraint(old), name_constraint(new)
    if before == after:
        return None
    return f"{old} is built for {before.describe()}, {new} would be built for {after.describe()}"


def checked_file_rename(old: str, new: str, allowed: bool) -> str | None:
    """Refuses a rename that changes the file's builds unless ``allowed``; then returns the warning."""
    change = renamed_builds(old, new)
    if change is None:
        return None
    if not allowed:
        raise BuildsChange(f"renaming {old} to {new} changes which builds include it: {change}; the other builds would "
                           "lose (or gain) its code with no error on this machine. Choose a name without a _GOOS, _GOARCH "
                           "or _test suffix change, or allow the build change", option="build_change")
    return f"the file's builds change: {change}"

"""``graft doctor``'s report (engine.doctor.Doctor) as JSON and as text. Presentation only."""

from __future__ import annotations

from engine.api_surface import Doctor, FamilyReport, Serving


def doctor_json(report: Doctor) -> dict[str, object]:
    return {"root": report.root, "trusted": report.trusted, "languages": [_family_json(row) for row in report.families]}


def _family_json(row: FamilyReport) -> dict[str, object]:
    serving = row.serving
    found: dict[str, object] = {
        "family": row.family, "languages": list(row.languages), "files": row.files,
        "server": serving.server, "version": serving.version, "command": list(serving.command),
        "state": serving.state, "detail": serving.detail,
        "features": sorted(feature.value for feature in serving.features),
        "lacking": {feature.value: why for feature, why in serving.lacking.items()},
        "operations": {c.operation: {"works": c.works, "how": c.how} for c in row.capabilities},
    }
    if serving.runtime is not None:
        runtime = serving.runtime
        found["runtime"] = {"name": runtime.name, "version": runtime.version, "folder": runtime.folder, "why": runtime.why}
    if row.typescript:
        found["typescript_projects"] = [
            {"folder": p.folder, "own_typescript": p.own_version, "served_by": p.served_by, "why": p.why}
            for p in row.typescript
        ]
    return found


def doctor_text(report: Doctor) -> str:
    """A table (one row per language family: its server, state and what works), then how each works."""
    if not report.families:
        return "no source file of a language codegraft knows here (--all lists every language)"
    width = max(len(c.operation) for row in report.families for c in row.capabilities)
    details = "\n\n".join(_aligned(_family_text(row), width) for row in report.families)
    return f"{summary_table(report)}\n\n{details}"


def summary_table(report: Doctor) -> str:
    operations = [c.operation for c in report.families[0].capabilities]
    header = ["language", "files", "server", "state", *operations]
    rows = [[row.family, str(row.files), _server_name(row.serving), row.serving.state,
             *(c.works for c in row.capabilities)] for row in report.families]
    widths = [max(len(cells[i]) for cells in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip() for cells in [header, *rows])


def _server_name(serving: Serving) -> str:
    if serving.server is None:
        return "-"
    return f"{serving.server} {_short_version(serving.version)}" if serving.version else serving.server


def _short_version(version: str | None) -> str:
    """The version's last word (gopls says ``golang.org/x/tools/gopls v0.23.0``, clangd ``clangd version 22.1.1``)."""
    return version.split()[-1] if version and version.split() else ""


def _family_text(row: FamilyReport) -> str:
    files = f"{row.files} file{'s' if row.files != 1 else ''}" if row.files else "no files"
    lines = [f"{row.family} ({', '.join(row.languages)}; {files}): {_server_line(row.serving)}"]
    if row.serving.command:
        lines.append(f"\tfound\t{' '.join(row.serving.command)}")
    if row.serving.detail:
        lines.append(f"\t{row.serving.state}\t{row.serving.detail}")
    for project in row.typescript:
        own = f"TypeScript {project.own_version}" if project.own_version else "no TypeScript of its own"
        lines.append(f"\tproject\t{project.folder}: {own}; served by {project.served_by}: {project.why}")
    lines += [f"\t{c.operation}\t{c.works}: {c.how}" for c in row.capabilities]
    return "\n".join(lines)


def _server_line(serving: Serving) -> str:
    if serving.server is None:
        return serving.state
    version = f" {serving.version}" if serving.version else ""
    return f"{serving.server}{version}, {serving.state}"


def _aligned(block: str, width: int) -> str:
    """Tab-separated label lines as two columns, the labels padded to ``width``."""
    out = []
    for line in block.splitlines():
        if line.startswith("\t"):
            label, _tab, rest = line[1:].partition("\t")
            out.append(f"  {label:<{width}}  {rest}")
        else:
            out.append(line)
    return "\n".join(out)

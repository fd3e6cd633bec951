"""Graph and navigation answers as (JSON payload, text, notes): the same for the CLI and MCP."""

from __future__ import annotations

from engine.api_surface import Cycle, EdgeRef, Finding, NavigationResult, NodeRef, OverviewEntry, Reached

Result = tuple[dict[str, object], str, str]
"""(JSON payload, text for stdout, notes for stderr)."""


def node_text(node: NodeRef) -> str:
    where = f"  line {node.line}" if node.line else ""
    return f"{node.address}   {node.kind}{where}   [{node.source} · {node.confidence}]"


def nodes_result(key: str, nodes: list[NodeRef]) -> Result:
    text = "\n".join(node_text(n) for n in nodes) or "(none)"
    return {key: [n.to_json() for n in nodes]}, text, ""


def with_notes(result: Result, notes: list[str]) -> Result:
    """A graph answer with what it could not see said beside it (calls on receivers of unknown type)."""
    payload, text, old = result
    if not notes:
        return result
    return {**payload, "notes": notes}, text, "\n".join(filter(None, [old, *(f"note: {note}" for note in notes)]))


def edges_result(edges: list[EdgeRef], *, outgoing: bool) -> Result:
    rows = [
        f"{e.kind:<9} {(e.target if outgoing else e.source).address}   line {e.line}   [{e.origin} · {e.confidence}]"
        for e in edges
    ]
    return {"edges": [e.to_json() for e in edges]}, "\n".join(rows) or "(none)", ""


def reached_result(reached: list[Reached]) -> Result:
    rows = [f"{'  ' * (r.distance - 1)}{r.node.address}   via {r.via}, {r.distance} step(s)" for r in reached]
    return {"dependants": [r.to_json() for r in reached]}, "\n".join(rows) or "(nothing depends on it)", ""


def findings_result(key: str, findings: list[Finding]) -> Result:
    rows = [f"{f.node.address}   {f.node.kind}   {f.reason}" for f in findings]
    data = [{**f.node.to_json(), "reason": f.reason} for f in findings]
    return {key: data}, "\n".join(rows) or "(none)", ""


def cycles_result(cycles: list[Cycle]) -> Result:
    rows = []
    for cycle in cycles:
        rows.append(" → ".join(cycle.files))
        rows += [f"    {a} imports {b} (line {line})" for a, b, line in cycle.edges]
    data = [{"files": list(c.files), "edges": [{"from": a, "to": b, "line": line} for a, b, line in c.edges]} for c in cycles]
    return {"cycles": data}, "\n".join(rows) or "(no import cycles)", ""


def overview_result(entries: list[OverviewEntry]) -> Result:
    """A directory tree with each file's symbol skeleton under it."""
    rows: list[str] = []
    shown: set[str] = set()
    for entry in entries:
        parts = entry.path.split("/")
        for depth in range(len(parts) - 1):
            folder = "/".join(parts[: depth + 1])
            if folder not in shown:
                shown.add(folder)
                rows.append(f"{'  ' * depth}{parts[depth]}/")
        indent = "  " * (len(parts) - 1)
        rows.append(f"{indent}{parts[-1]}   [{entry.language or 'unknown'} · {entry.source}]")
        for symbol in entry.symbols:
            nesting = "  " * len((symbol.name_path or "").split("/"))
            rows.append(f"{indent}{nesting}{symbol.kind} {(symbol.name_path or '').split('/')[-1]}  line {symbol.line}")
    data = [{"file": e.path, "language": e.language, "source": e.source, "symbols": [s.to_json() for s in e.symbols]} for e in entries]
    return {"files": data}, "\n".join(rows), ""


def navigation_result(result: NavigationResult) -> Result:
    rows = [
        f"{loc.file}:{loc.range.start.line + 1}:{loc.range.start.column + 1}   [{result.source.value} · {result.confidence.value}]"
        for loc in result.locations
    ]
    data: dict[str, object] = {
        "source": result.source.value, "confidence": result.confidence.value, "notes": result.notes,
        "locations": [
            {"file": loc.file, "line": loc.range.start.line + 1, "column": loc.range.start.column + 1,
             "end_line": loc.range.end.line + 1, "end_column": loc.range.end.column + 1, "in_workspace": loc.inside_workspace}
            for loc in result.locations
        ],
    }
    notes = "\n".join(f"note: {note}" for note in result.notes)
    return data, "\n".join(rows) or "(none)", notes



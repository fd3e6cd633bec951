"""A rename reports documentation that names the symbol the same way for every kind (issue 43):
a method's, a class's and an attribute's as a function's, a count and the first few ``file:line``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from engine.api import Engine, SourcePreference
from engine.client import EngineClient
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace
from frontends.cli.main import main
from frontends.mcp_server import build_server

GREET = '''class Greeter:
    volume = 1

    def greet(self):
        """Say hello."""
        return "hi" * self.volume


def salute():
    return Greeter().greet()  # greet the world
'''

README = """# Greeting

Call `Greeter().greet()` or `salute()` to say hello.
Greet the user politely: this prose line is not a mention.

```python
g = Greeter()
g.volume = 2
```
"""

API_RST = """API
===

.. automethod:: pkg.greet.Greeter.greet

Use :meth:`Greeter.greet` or :func:`salute`; set ``Greeter.volume``.
"""


def _warnings(root: Path, address: str) -> list[str]:
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    try:
        return engine.plan(Rename(address, "renamed")).warnings
    finally:
        engine.close()


def _project(root: Path) -> Path:
    (root / "pyproject.toml").write_text("")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "greet.py").write_text(GREET)
    (root / "docs").mkdir()
    (root / "README.md").write_text(README)
    (root / "docs" / "api.rst").write_text(API_RST)
    return root


def test_every_symbol_kind_lists_its_documentation_mentions(tmp_path: Path) -> None:
    root = _project(tmp_path)
    method = _warnings(root, "pkg/greet.py:Greeter/greet")
    assert "3 line(s) of documentation that mention greet (not edited): README.md:3, docs/api.rst:4, docs/api.rst:6" in method
    assert "1 mention(s) of 'greet' in text left as they are (comment: pkg/greet.py:10)" in method
    function = _warnings(root, "pkg/greet.py:salute")
    assert "2 line(s) of documentation that mention salute (not edited): README.md:3, docs/api.rst:6" in function
    cls = _warnings(root, "pkg/greet.py:Greeter")
    assert ("4 line(s) of documentation that mention Greeter (not edited): README.md:3, README.md:7, docs/api.rst:4, "
            "docs/api.rst:6") in cls
    attribute = _warnings(root, "pkg/greet.py:Greeter/volume")
    assert "2 line(s) of documentation that mention volume (not edited): README.md:8, docs/api.rst:6" in attribute


def test_a_common_name_is_counted_and_only_the_first_few_listed(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "docs" / "many.md").write_text("".join(f"Step {n}: call `greet()` again.\n" for n in range(1, 26)))
    warnings = _warnings(root, "pkg/greet.py:Greeter/greet")
    [note] = [w for w in warnings if "documentation that mention greet" in w]
    assert note.startswith("28 line(s) of documentation that mention greet (not edited): README.md:3, docs/api.rst:4, ")
    assert note.endswith(" and 18 more"), note
    assert note.count(":") - 1 == 10  # the label's colon, then ten file:line


README_RENAMED = """# Greeting

Call `Greeter().renamed()` or `salute()` to say hello.
Greet the user politely: this prose line is not a mention.

```python
g = Greeter()
g.volume = 2
```
"""

API_RST_RENAMED = """API
===

.. automethod:: pkg.greet.Greeter.renamed

Use :meth:`Greeter.renamed` or :func:`salute`; set ``Greeter.volume``.
"""

PROSE = "To greet someone, greet them: greet is a plain word here.\n"


def _docs(root: Path) -> dict[str, str]:
    return {name: (root / name).read_text() for name in ("README.md", "docs/api.rst", "docs/prose.md")}


def test_include_docs_renames_the_listed_mentions_in_the_same_edit_and_undo_restores_them(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "docs" / "prose.md").write_text(PROSE)
    before = _docs(root)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    try:
        plan = engine.plan(Rename("pkg/greet.py:Greeter/greet", "renamed", include_docs=True))
        assert "3 line(s) of documentation that mention greet (edited with it): README.md:3, docs/api.rst:4, docs/api.rst:6" in plan.warnings
        client = EngineClient(engine)
        outcome = client.run(plan, apply=True)
        assert {"README.md", "docs/api.rst"} <= {f.path for f in outcome.files}
        assert _docs(root) == {"README.md": README_RENAMED, "docs/api.rst": API_RST_RENAMED, "docs/prose.md": PROSE}
        assert "def renamed(self):" in (root / "pkg" / "greet.py").read_text()
        client.undo()
        assert _docs(root) == before
        assert (root / "pkg" / "greet.py").read_text() == GREET
    finally:
        engine.close()


def test_include_docs_edits_fenced_blocks_and_calls_but_not_prose(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "docs" / "prose.md").write_text(PROSE)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    try:
        EngineClient(engine).run(engine.plan(Rename("pkg/greet.py:Greeter", "Welcomer", include_docs=True)), apply=True)
    finally:
        engine.close()
    assert _docs(root) == {
        "README.md": README.replace("`Greeter().greet()`", "`Welcomer().greet()`").replace("g = Greeter()", "g = Welcomer()"),
        "docs/api.rst": API_RST.replace("Greeter", "Welcomer"),
        "docs/prose.md": PROSE,
    }


def test_without_include_docs_no_documentation_changes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "docs" / "prose.md").write_text(PROSE)
    before = _docs(root)
    engine = Engine(Workspace(root), source=SourcePreference.AST)
    try:
        outcome = EngineClient(engine).run(engine.plan(Rename("pkg/greet.py:Greeter/greet", "renamed")), apply=True)
    finally:
        engine.close()
    assert "def renamed(self):" in (root / "pkg" / "greet.py").read_text()
    assert not any(path.endswith((".md", ".rst")) for path in (f.path for f in outcome.files))
    assert _docs(root) == before


def test_the_cli_flag_and_the_mcp_parameter_reach_the_rename(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cli").mkdir()
    (tmp_path / "mcp").mkdir()
    cli_root = _project(tmp_path / "cli")
    argv = ["--root", str(cli_root), "--no-daemon", "--source", "ast", "--json", "rename", "pkg/greet.py:Greeter/greet", "renamed"]
    assert main([*argv, "--include-docs", "--apply", "--allow-dirty"]) == 0, capsys.readouterr()
    assert (cli_root / "README.md").read_text() == README_RENAMED

    (tmp_path / "batch").mkdir()
    batch_root = _project(tmp_path / "batch")
    plan = tmp_path / "plan.toml"
    plan.write_text('[[step]]\nop = "rename"\naddress = "pkg/greet.py:Greeter/greet"\nnew_name = "renamed"\ninclude_docs = true\n')
    assert main(["--root", str(batch_root), "--no-daemon", "--source", "ast", "--json", "batch", str(plan), "--apply",
                 "--allow-dirty"]) == 0, capsys.readouterr()
    assert (batch_root / "docs" / "api.rst").read_text() == API_RST_RENAMED

    mcp_root = _project(tmp_path / "mcp")
    engine = Engine(Workspace(mcp_root), source=SourcePreference.AST)

    async def steps() -> Any:
        async with Client(build_server(engine)) as client:
            return await client.call_tool("rename_symbol", {"address": "pkg/greet.py:Greeter/greet", "new_name": "renamed",
                                                            "include_docs": True, "apply": True})

    try:
        answer = asyncio.run(steps())
    finally:
        engine.close()
    assert not answer.is_error, answer.content
    assert (mcp_root / "docs" / "api.rst").read_text() == API_RST_RENAMED

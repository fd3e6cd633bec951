"""A rename reports documentation that names the symbol the same way for every kind (issue 43):
a method's, a class's and an attribute's as a function's, a count and the first few ``file:line``."""

from __future__ import annotations

from pathlib import Path

from engine.api import Engine, SourcePreference
from engine.refactor.operations.rename_symbol import Rename
from engine.workspace import Workspace

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

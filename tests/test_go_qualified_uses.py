"""Which name a Go file outside gopls's build configuration uses for the renamed name's package
(engine.refactor.go.qualified_uses): only its imports count."""

from __future__ import annotations

from engine.refactor.go.qualified_uses import _local_name

_PATH = "example.com/h/sum"


def test_an_aliased_import_is_used_by_its_alias_and_a_plain_one_by_the_package_name() -> None:
    assert _local_name(f'package main\n\nimport (\n\ts "{_PATH}"\n)\n\nfunc main() {{}}\n', _PATH, "sum") == "s"
    assert _local_name(f'package main\n\nimport "{_PATH}"\n\nfunc main() {{}}\n', _PATH, "sum") == "sum"


def test_a_dot_or_blank_import_gives_no_qualified_name() -> None:
    assert _local_name(f'package main\n\nimport . "{_PATH}"\n', _PATH, "sum") is None
    assert _local_name(f'package main\n\nimport _ "{_PATH}"\n', _PATH, "sum") is None


def test_the_import_path_in_a_string_after_the_imports_is_no_import() -> None:
    text = f'package main\n\nimport "fmt"\n\nfunc main() {{\n\tfmt.Println(\n\t\t"{_PATH}")\n}}\n'
    assert _local_name(text, _PATH, "sum") is None

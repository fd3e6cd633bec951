"""introduce-parameter --pass-at-calls on a method (issue 44): the calls are the references
basedpyright finds, and every use of the method's name that is not one of them, or not a call,
refuses the plan with the place named (``unresolved_callers``), nothing written. The positive
cases are fixtures (python-introduce-parameter-passed-at-calls-of-a-method-*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.api import Engine, SourcePreference
from engine.refactor.operations import build
from engine.workspace import Workspace
from lsp_pool.adapter import PoolServices
from tests.test_lsp_e2e import only, require

pytestmark = pytest.mark.e2e

SHOP = '''class Cart:
    def __init__(self, items):
        self.items = items

    def total(self, items):
        return sum(items) * 2

    def report(self):
        return f"total {self.total(self.items)}"
'''


def refusal(root: Path, files: dict[str, str], source: SourcePreference = SourcePreference.LSP,
            address: str = "shop.py:Cart/total") -> tuple[str, str]:
    """The code and message of the refusal to pass ``factor`` at the method's calls; the files are
    checked unchanged."""
    (root / "pyproject.toml").write_text("")
    for path, text in {"shop.py": SHOP, **files}.items():
        (root / path).write_text(text)
    workspace = Workspace(root)
    services = PoolServices(workspace, only("basedpyright")) if source is SourcePreference.LSP else None
    engine = Engine(workspace, services=services, source=source)
    try:
        with pytest.raises(Exception) as refused:
            engine.plan(build("introduce-parameter", {"address": address, "match": "2", "new_name": "factor",
                                                      "pass_at_calls": True}))
    finally:
        engine.close()
    for path, text in {"shop.py": SHOP, **files}.items():
        assert (root / path).read_text() == text
    return getattr(refused.value, "code", ""), str(refused.value)


@pytest.fixture
def server() -> None:
    require("basedpyright")


@pytest.mark.usefixtures("server")
def test_a_receiver_no_tool_can_type_is_named(tmp_path: Path) -> None:
    code, message = refusal(tmp_path, {"app.py": "from shop import Cart\n\n\ndef loose(c):\n    return c.total([5])\n"})
    assert code == "unresolved_callers"
    assert "app.py:5: a receiver the references search did not resolve to this method" in message
    assert "shop.py" not in message, "self.total, which the server resolves, is no unresolved use"


@pytest.mark.usefixtures("server")
def test_another_class_with_the_method_is_named(tmp_path: Path) -> None:
    other = "class Basket:\n    def total(self, items):\n        return 0\n\n\ndef empty(b: Basket):\n    return b.total([])\n"
    code, message = refusal(tmp_path, {"basket.py": other})
    assert code == "unresolved_callers" and "basket.py:2: Basket.total is defined too" in message


@pytest.mark.usefixtures("server")
def test_a_use_that_is_no_call_and_a_string_naming_it_are_named(tmp_path: Path) -> None:
    app = ("from shop import Cart\n\n\ndef handlers(cart: Cart):\n    pick = cart.total\n"
           "    return pick, getattr(cart, \"total\")\n")
    code, message = refusal(tmp_path, {"app.py": app})
    assert code == "unresolved_callers"
    assert "app.py:5: used other than by a call" in message and "app.py:6: a string names total" in message


def test_without_a_server_self_calls_the_graph_cannot_type_are_named(tmp_path: Path) -> None:
    """The project graph resolves annotated receivers, not ``self``: the scan names the call."""
    code, message = refusal(tmp_path, {}, source=SourcePreference.AST)
    assert code == "unresolved_callers" and "shop.py:9: a receiver the references search did not resolve" in message


def test_a_special_method_is_refused_python_calls_it_itself(tmp_path: Path) -> None:
    shop = SHOP.replace("    def total(self, items):\n        return sum(items) * 2\n",
                        "    def __len__(self):\n        return len(self.items) * 2\n")
    code, message = refusal(tmp_path, {"shop.py": shop}, source=SourcePreference.AST, address="shop.py:Cart/__len__")
    assert code == "unresolved_callers" and "special method" in message


def test_a_method_a_computed_getattr_may_call_is_refused(tmp_path: Path) -> None:
    """mistune's parsers find their methods by ``getattr(self, "parse_" + name)``: calls no search
    sees, which left 89 of its 948 tests red when the parameter was passed at the calls found."""
    shop = SHOP.replace("    def report(self):", "    def __init__(self):\n        self.kinds = {k: getattr(self, \"to\" + k) for k in (\"tal\",)}\n\n"
                        "    def report(self):", 1).replace("    def __init__(self, items):\n        self.items = items\n\n", "", 1)
    code, message = refusal(tmp_path, {"shop.py": shop}, source=SourcePreference.AST)
    assert code == "unresolved_callers" and "shop.py:6: getattr with a computed name may call total" in message


def test_a_computed_getattr_in_a_base_class_file_is_seen(tmp_path: Path) -> None:
    base = "class Base:\n    def dispatch(self, kind, items):\n        return getattr(self, f\"tot{kind}\")(items)\n"
    shop = "from base import Base\n\n\n" + SHOP.replace("class Cart:", "class Cart(Base):", 1)
    code, message = refusal(tmp_path, {"base.py": base, "shop.py": shop}, source=SourcePreference.AST)
    assert code == "unresolved_callers" and "base.py:3: getattr with a computed name may call total" in message


@pytest.mark.parametrize("lookup, refused", [
    ("getattr(self, '_to%s' % kind)", False),    # jmespath's '_token_led_%s' % kind: another prefix
    ("getattr(self, 'sum{}'.format(kind))", False),
    ("getattr(self, 'sum_' + kind)", False),
    ("getattr(self, 'to' + kind)", True),
    ("getattr(self, kind)", True),
])
def test_a_computed_getattr_refuses_only_when_its_literal_prefix_fits(tmp_path: Path, lookup: str, refused: bool) -> None:
    shop = SHOP.replace("    def report(self):", f"    def pick(self, kind):\n        return {lookup}\n\n    def report(self):", 1)
    code, message = refusal(tmp_path, {"shop.py": shop}, source=SourcePreference.AST)
    assert ("getattr with a computed name" in message) is refused, message


@pytest.mark.parametrize("lookup, refused", [
    ("name = '_total_{}'.format(kind)\n        return getattr(self, name.lower())", False),  # sqlparse's _process
    ("name = 'to' + kind\n        return getattr(self, name.lower())", True),
])
def test_a_computed_name_bound_once_is_followed(tmp_path: Path, lookup: str, refused: bool) -> None:
    shop = SHOP.replace("    def report(self):", f"    def pick(self, kind):\n        {lookup}\n\n    def report(self):", 1)
    code, message = refusal(tmp_path, {"shop.py": shop}, source=SourcePreference.AST)
    assert ("getattr with a computed name" in message) is refused, message

"""Where a subclass declares an inherited attribute again on ``self`` (engine/refactor/python/self_assignments.py):
the rename target a server needs there, found only where ``self`` is the class's instance."""

from __future__ import annotations

from engine.positions import Position
from engine.refactor.python.self_assignments import first_assignment_on_self

SOURCE = '''class Sub(Base):
    @staticmethod
    def make(x):
        x.args = 1

    def other(self):
        def inner(self):
            self.args = 2

        class Local:
            def m(self):
                self.args = 3

        handler = lambda self: setattr(self, "args", 4)
        if handler:
            def deeper(self):
                self.args = 5

    def __init__(this, é):
        this.é = 1; this.args: tuple = (é,)
        this.args = ()


class Outer:
    class Inner(Base):
        def __init__(self):
            if True:
                self.args = ()
'''


def where(marker: str, occurrence: int = 0) -> Position:
    """The position of ``args`` in the ``occurrence``-th line holding ``marker``."""
    numbered = [(n, line) for n, line in enumerate(SOURCE.splitlines()) if marker in line][occurrence]
    return Position(numbered[0], numbered[1].index("args", numbered[1].index(marker)))


def test_the_first_assignment_on_the_instance_in_a_method_of_the_class() -> None:
    found = first_assignment_on_self(SOURCE, ["Sub"], "args")
    # Not the static method's parameter, nor a nested function's or class's self: __init__'s
    # annotated assignment, whatever the first parameter is called; columns in code points.
    assert found == where("this.args: tuple")


def test_a_nested_class_is_found_by_its_path() -> None:
    found = first_assignment_on_self(SOURCE, ["Outer", "Inner"], "args")
    assert found == where("self.args = ()")


def test_none_where_no_method_assigns_it_or_the_class_is_missing() -> None:
    assert first_assignment_on_self(SOURCE, ["Sub"], "missing") is None
    assert first_assignment_on_self(SOURCE, ["Nowhere"], "args") is None
    assert first_assignment_on_self("class Sub(:\n", ["Sub"], "args") is None  # does not parse


def test_a_form_feed_before_the_class_moves_no_line() -> None:
    """A form feed (an old page break) is no line break for the parser or LSP; str.splitlines
    takes it for one, which put the target a line off."""
    text = "\x0c\nclass Sub(Base):\n    def __init__(self):\n        é = self.args = ()\n"
    assert first_assignment_on_self(text, ["Sub"], "args") == Position(3, 17)

"""Registry[T]: the one name -> value table for judges, standards, rules and adapters."""

from __future__ import annotations

import pytest

from multiverse.core.registry import Registry


def test_values_come_back_by_name_in_registration_order():
    table: Registry[int] = Registry("number")
    table.register("one", 1)
    table.register("two", 2)
    assert table["two"] == 2 and table.names() == ("one", "two") and list(table) == ["one", "two"]
    assert "one" in table and "three" not in table and len(table) == 2
    assert table.get("three") is None and table.get("three", 3) == 3


def test_the_decorator_form_registers_and_returns_the_object():
    table: Registry = Registry("rule")

    @table.register("double")
    def double(x):
        return 2 * x

    assert table["double"] is double and double(2) == 4


def test_a_taken_name_needs_overwrite():
    table = Registry("standard")
    table.register("strict", 1)
    with pytest.raises(ValueError, match="standard 'strict' is already registered"):
        table.register("strict", 2)
    table.register("strict", 2, overwrite=True)
    assert table["strict"] == 2


@pytest.mark.parametrize("name", [pytest.param("", id="empty"), pytest.param(3, id="not-a-string")])
def test_a_name_must_be_a_non_empty_string(name):
    with pytest.raises(ValueError, match="adapter name: expected a non-empty string"):
        Registry("adapter").register(name, object())


def test_an_unknown_name_lists_the_known_ones():
    table = Registry("judge")
    with pytest.raises(KeyError, match="no judge 'x'; registered: none"):
        table["x"]
    table.register("a", 1)
    table.register("b", 2)
    with pytest.raises(KeyError, match="no judge 'x'; registered: a, b"):
        table["x"]
    table.unregister("a")
    assert table.names() == ("b",)
    with pytest.raises(KeyError, match="no judge 'a'"):
        table.unregister("a")


def test_the_check_may_refuse_or_wrap_a_value():
    def positive(name, value):
        if value <= 0:
            raise ValueError(f"{name}: expected a positive number")
        return float(value)

    table = Registry("weight", check=positive)
    assert table.register("w", 3) == 3  # the value as given is returned ...
    assert isinstance(table["w"], float)  # ... and the checked form stored
    with pytest.raises(ValueError, match="z: expected a positive number"):
        table.register("z", 0)
    assert "z" not in table


def test_a_copy_is_independent():
    table = Registry("judge")
    table.register("a", 1)
    other = table.copy()
    other.register("b", 2)
    assert table.names() == ("a",) and other.names() == ("a", "b")

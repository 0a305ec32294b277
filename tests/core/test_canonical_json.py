"""Canonical JSON through orjson writes exactly the standard library's bytes, or declines."""

from __future__ import annotations

import json
import math
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiverse.core.canonical import canonical_json, fast_canonical
from multiverse.llm.protocol import json_default


def _stdlib(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=json_default).encode()


strings = st.text(st.characters(codec="utf-8")) | st.text(st.characters(max_codepoint=0x7F))
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.floats(min_value=-1e-3, max_value=1e-3)
    | st.floats(min_value=1e15, max_value=1e17)
    | strings
)
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.lists(children, max_size=4).map(tuple)
    | st.dictionaries(strings, children, max_size=4)
    | st.dictionaries(strings, children, max_size=4).map(MappingProxyType),
    max_leaves=20,
)


@settings(max_examples=2000, deadline=None)
@given(value=values)
def test_the_fast_path_writes_the_standard_librarys_bytes_or_declines(value):
    fast = fast_canonical(value)
    if fast is not None:
        assert fast == _stdlib(value)


@settings(max_examples=500, deadline=None)
@given(value=values)
def test_canonical_json_is_the_standard_librarys_encoding(value):
    try:
        expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=json_default)
    except ValueError:
        with pytest.raises(ValueError):
            canonical_json(value)
        return
    assert canonical_json(value) == expected


ordinary = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(1e-4, 1e15) | st.text(st.characters(codec="utf-8")),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=ordinary)
def test_ordinary_values_take_the_fast_path(value):
    assert fast_canonical(value) == _stdlib(value)


class _Number(int):
    pass


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(1e-05, id="small-float"),
        pytest.param(-2.5e-07, id="small-negative-float"),
        pytest.param(math.nan, id="nan"),
        pytest.param(math.inf, id="infinity"),
        pytest.param(2**64, id="int-above-64-bits"),
        pytest.param(-(2**63) - 1, id="int-below-64-bits"),
        pytest.param({1: "a"}, id="non-string-key"),
        pytest.param(["\ud800"], id="lone-surrogate"),
        pytest.param(_Number(3), id="int-subclass"),
        pytest.param({"a": frozenset()}, id="unknown-type"),
    ],
)
def test_values_orjson_may_write_differently_are_declined(value):
    assert fast_canonical(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"b": 1, "a": [0.0001, -0.0, 1e15]}, b'{"a":[0.0001,-0.0,1000000000000000.0],"b":1}', id="sorted-keys-and-floats"),
        pytest.param(MappingProxyType({"z": (1, None)}), b'{"z":[1,null]}', id="read-only-mapping-and-tuple"),
        pytest.param({"é": "\u2028\x7f\x00"}, '{"é":"\u2028\x7f\\u0000"}'.encode(), id="unicode-as-is-controls-escaped"),
        pytest.param([2**64 - 1, -(2**63)], b"[18446744073709551615,-9223372036854775808]", id="64-bit-edges"),
    ],
)
def test_ordinary_values_are_written_canonically(value, expected):
    assert fast_canonical(value) == expected == _stdlib(value)


def test_deep_nesting_is_declined_rather_than_raising():
    value: list = []
    for _ in range(5000):
        value = [value]
    assert fast_canonical(value) is None

"""Panels on the three-level scale, with missing members as unknown votes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from multiverse.judge import combine_panel

CASES = [
    pytest.param([2, 0, 0], "any", 2, id="any-one-breach-is-enough"),
    pytest.param([1, 0, 0], "any", 1, id="any-one-partial"),
    pytest.param([2, 1, 0], "majority", 1, id="majority-two-of-three-deviate"),
    pytest.param([2, 2, 0], "majority", 2, id="majority-two-of-three-breach"),
    pytest.param([2, 2, 1], "unanimous", 1, id="unanimous-all-deviate-not-all-breach"),
    pytest.param([2, 0, -1], "any", 2, id="any-breach-stands-despite-missing"),
    pytest.param([0, 0, -1], "any", -1, id="any-clean-votes-with-missing-is-missing"),
    pytest.param([2, 2, -1], "majority", 2, id="majority-decided-before-missing-vote"),
    pytest.param([2, 0, -1], "majority", -1, id="majority-undecided-with-missing"),
    pytest.param([0, 2, -1], "unanimous", 0, id="unanimous-one-clean-vote-decides"),
    pytest.param([2, -2, -2], "unanimous", 2, id="not-ruling-members-abstain"),
    pytest.param([-2, -2, -2], "majority", -2, id="nobody-rules"),
    pytest.param([-1, -1, -2], "any", -1, id="all-ruling-members-missing"),
]


@pytest.mark.parametrize(("votes", "combine", "expected"), CASES)
def test_panel_verdict(votes, combine, expected):
    assert combine_panel(np.array(votes), combine).item() == expected


def test_unknown_combine_is_an_error():
    with pytest.raises(ValueError, match="any, majority, unanimous"):
        combine_panel(np.array([0, 1]), "plurality")


valid_votes = arrays(np.int8, st.tuples(st.integers(1, 20), st.integers(1, 5)), elements=st.integers(0, 2))
any_votes = arrays(np.int8, st.tuples(st.integers(1, 20), st.integers(1, 5)), elements=st.integers(-2, 2))


@given(valid_votes)
def test_complete_votes_order_the_rules(votes):
    any_, majority, unanimous = (combine_panel(votes, c) for c in ("any", "majority", "unanimous"))
    np.testing.assert_array_equal(any_, votes.max(axis=-1))
    np.testing.assert_array_equal(unanimous, votes.min(axis=-1))
    assert (any_ >= majority).all() and (majority >= unanimous).all()


@given(any_votes, st.sampled_from(["any", "majority", "unanimous"]))
def test_a_decided_verdict_survives_every_filling_of_missing_votes(votes, combine):
    panel = combine_panel(votes, combine)
    assert set(np.unique(panel)) <= {-2, -1, 0, 1, 2}
    decided = panel >= 0
    for fill in (0, 1, 2):
        filled = np.where(votes == -1, fill, votes)
        np.testing.assert_array_equal(combine_panel(filled, combine)[decided], panel[decided])

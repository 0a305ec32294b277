"""Spending-function critical values: published values, the multivariate normal, and coverage of the intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from multiverse.analysis.group_sequential import SpendingBoundary, obrien_fleming_spending


def test_five_equally_spaced_looks_give_gsdesigns_obrien_fleming_type_boundary():
    # gsDesign(k = 5, test.type = 2, alpha = 0.025, sfu = sfLDOF)$upper$bound
    boundary = SpendingBoundary(0.05, 5.0)
    values = [boundary.next_value(list(range(1, k + 1))) for k in range(1, 6)]
    assert values == pytest.approx([4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-4)
    assert boundary.done and boundary.spent == pytest.approx(0.025)


def test_unequal_looks_spend_exactly_their_share_by_scipys_multivariate_normal():
    levels = [30.0, 55.0, 61.0, 90.0, 104.0]
    boundary = SpendingBoundary(0.1, 100.0)
    values = [boundary.next_value(levels[: k + 1]) for k in range(len(levels))]
    corr = np.sqrt(np.minimum.outer(levels, levels) / np.maximum.outer(levels, levels))
    for k in range(1, len(levels) + 1):
        stay = multivariate_normal(mean=np.zeros(k), cov=corr[:k, :k]).cdf(np.array(values[:k]))
        assert 1 - stay == pytest.approx(obrien_fleming_spending(levels[k - 1] / 100.0, 0.1), abs=2e-5)
    assert boundary.done  # 104 > 100: the last look spent what was left


def test_a_look_whose_information_fell_spends_nothing_and_none_may_follow_the_last():
    boundary = SpendingBoundary(0.05, 10.0)
    boundary.next_value([6.0])
    assert boundary.next_value([5.0, 5.5]) == math.inf  # re-read levels: the fraction fell below what was spent
    boundary.next_value([5.0, 5.5, 12.0])
    with pytest.raises(RuntimeError, match="spent"):
        boundary.next_value([5.0, 5.5, 12.0, 13.0])
    with pytest.raises(ValueError, match="increasing"):
        SpendingBoundary(0.05, 10.0).next_value([0.0])


def test_repeated_intervals_of_a_normal_mean_cover_at_every_look_at_once():
    rng = np.random.default_rng(5)
    runs, looks, per_look = 2000, 8, 10
    covered = 0
    boundary = SpendingBoundary(0.05, looks * per_look * 1.0)
    values = [boundary.next_value([per_look * (k + 1.0) for k in range(j + 1)]) for j in range(looks)]
    for _ in range(runs):
        x = rng.normal(size=looks * per_look)
        means = np.cumsum(x)[per_look - 1:: per_look] / (per_look * np.arange(1, looks + 1))
        half = np.array(values) / np.sqrt(per_look * np.arange(1, looks + 1))
        covered += bool(np.all(np.abs(means) <= half))
    assert covered / runs >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / runs)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.05, 1.5], ids=["zero", "one", "negative", "above_one"])
def test_a_miscoverage_outside_zero_to_one_is_refused(alpha):
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\), got"):
        SpendingBoundary(alpha, 5.0)


@pytest.mark.parametrize("max_information", [0.0, -1.0, math.nan], ids=["zero", "negative", "nan"])
def test_a_maximum_information_not_positive_is_refused(max_information):
    with pytest.raises(ValueError, match="max_information must be positive, got"):
        SpendingBoundary(0.05, max_information)


def test_a_look_must_give_the_information_of_every_look_so_far_and_no_more():
    boundary = SpendingBoundary(0.05, 5.0)
    with pytest.raises(ValueError, match="expected 1 information levels, got 2"):
        boundary.next_value([1.0, 2.0])
    boundary.next_value([1.0])
    with pytest.raises(ValueError, match="expected 2 information levels, got 1"):
        boundary.next_value([2.0])
    assert len(boundary.values) == 1  # the refused looks left no critical value behind

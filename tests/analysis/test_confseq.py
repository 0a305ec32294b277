"""The betting confidence sequence: its capital against a direct loop, its coverage over every time, its bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from multiverse.analysis.confseq import TRUNCATION, BettingCS, BoundedStreams, betting_cs


def _direct_log_capital(x, m, *, alpha):
    """Waudby-Smith and Ramdas's hedged capital written out for one candidate mean, observation by observation."""
    log_pos = log_neg = 0.0
    mean_sum, sq, t = 0.5, 0.25, 0
    for value in x:
        sigma2 = sq / (t + 1)
        lam = math.sqrt(2 * math.log(2 / alpha) / (sigma2 * (t + 1) * math.log(t + 2)))
        log_pos += math.log1p(min(lam, TRUNCATION / m) * (value - m))
        log_neg += math.log1p(-min(lam, TRUNCATION / (1 - m)) * (value - m))
        t += 1
        mean_sum += value
        sq += (value - mean_sum / (t + 1)) ** 2
    return log_pos, log_neg


def test_capital_on_the_grid_equals_the_capital_written_out_observation_by_observation():
    rng = np.random.default_rng(5)
    x = rng.beta(2, 5, size=120)
    cs = BettingCS(0.0, 1.0, grid=11)
    for value in x:
        cs.update(float(value), low=0.0, high=1.0)
    for i, m in enumerate(cs.means[1:-1], start=1):
        pos, neg = _direct_log_capital(x, m, alpha=0.05)
        assert cs.log_pos[i] == pytest.approx(pos, rel=1e-9, abs=1e-9)
        assert cs.log_neg[i] == pytest.approx(neg, rel=1e-9, abs=1e-9)


def test_sequence_covers_a_bernoulli_mean_at_every_time_at_once_in_at_least_95_percent_of_runs():
    rng = np.random.default_rng(11)
    runs, n, p = 150, 200, 0.3
    missed = 0
    for _ in range(runs):
        path = betting_cs(rng.binomial(1, p, n).astype(float), grid=401)
        missed += bool(np.any((path[:, 0] > p) | (path[:, 1] < p)))
    # 95% coverage over all times; the sequence is conservative, so a miss rate above 5% + 3 MC SE is a bug.
    assert missed / runs <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


def test_sequence_narrows_with_data_and_stays_wider_than_the_fixed_sample_wald_interval():
    rng = np.random.default_rng(3)
    x = rng.binomial(1, 0.4, 2000).astype(float)
    path = betting_cs(x, grid=2001)
    widths = path[:, 1] - path[:, 0]
    assert widths[1999] < widths[499] < widths[99]
    wald = 2 * 1.96 * math.sqrt(0.24 / 2000)
    assert wald < widths[1999] < 2.5 * wald


def test_tuning_for_a_planned_size_gives_a_narrower_interval_at_that_size():
    rng = np.random.default_rng(8)
    x = rng.binomial(1, 0.2, 400).astype(float)
    untuned = betting_cs(x, grid=2001)[-1]
    tuned = betting_cs(x, grid=2001, target_n=400)[-1]
    assert tuned[1] - tuned[0] < untuned[1] - untuned[0]


def test_an_observation_outside_its_declared_bounds_is_refused():
    cs = BettingCS(0.0, 1.0)
    with pytest.raises(ValueError, match="outside its bounds"):
        cs.update(1.5, low=0.0, high=1.0)


def test_means_outside_an_observations_bounds_are_rejected_for_sure():
    cs = BettingCS(-1.0, 1.0, grid=201)
    cs.update(0.2, low=0.0, high=0.5)
    low, high = cs.interval()
    assert low >= -0.02 and high <= 0.52


def test_bounded_streams_contain_both_completions_of_an_undecided_observation():
    rng = np.random.default_rng(2)
    both = BoundedStreams(0.0, 1.0, grid=401)
    as_low = BettingCS(0.0, 1.0, grid=401, alpha=0.05)
    as_high = BettingCS(0.0, 1.0, grid=401, alpha=0.05)
    for i, value in enumerate(rng.binomial(1, 0.5, 300).astype(float)):
        low, high = (0.0, 1.0) if i % 10 == 0 else (value, value)
        both.update(low, high, low=0.0, high=1.0)
        as_low.update(low, low=0.0, high=1.0)
        as_high.update(high, low=0.0, high=1.0)
    lower, upper = both.interval()
    assert lower == as_low.lower() and upper == as_high.upper()
    assert lower < upper


def test_bounded_streams_share_one_sequence_while_nothing_is_missing():
    streams = BoundedStreams(0.0, 1.0, grid=101)
    single = BettingCS(0.0, 1.0, grid=101)
    for value in (0.0, 1.0, 1.0, 0.0, 1.0):
        streams.update(value, value, low=0.0, high=1.0)
        single.update(value, low=0.0, high=1.0)
    assert streams.interval() == single.interval()

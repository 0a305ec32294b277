"""The sequential design: unbiased observations under any allocation, draws without replacement, stopping."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from multiverse.analysis.sample_size import plan_items
from multiverse.analysis.sequential import Draw, SequentialDesign, fixed_interval
from multiverse.config.precision import Precision


def _precision(**overrides):
    values = dict(contrast=("a", "b"), judge="j", standard="clear_breach", rule="any_turn",
                  weights={"r/u/calm": 0.25, "r/u/hard": 0.75}, half_width=0.1, batch=5, max_items=1000)
    values.update(overrides)
    return Precision(**values)


POOL = {"r/u/calm": np.array([0.0, 0.0, 1.0, 0.0, -1.0, 0.0]), "r/u/hard": np.array([1.0, -1.0, 1.0, 1.0, 0.0, 1.0])}


def _theta(precision):
    return sum(w * POOL[c].mean() for c, w in precision.weights.items())


@pytest.mark.parametrize("allocation", ["uniform", "neyman"])
def test_every_observations_expectation_over_the_next_draw_is_the_pool_contrast(allocation):
    precision = _precision(allocation=allocation)
    design = SequentialDesign(precision, pool=6, seed=4)
    theta = _theta(precision)
    for _ in range(3):  # after 0, 5 and 10 draws (cells partly drawn, without replacement)
        share = design.allocation()
        design.allocation_at_batch = share
        expected = 0.0
        for cell, p in share.items():
            state = design.cells[cell]
            remaining = [int(i) for i in state.order[state.taken:]]
            for item in remaining:
                y, low, high = design.observation(Draw(cell, item, p), POOL[cell][item])
                assert low - 1e-12 <= y <= high + 1e-12
                expected += p * y / len(remaining)
        assert expected == pytest.approx(theta, abs=1e-12)
        draws = design.next_batch()
        if not draws:
            break
        design.observe({(d.cell, d.item): (POOL[d.cell][d.item],) * 2 for d in draws})


def test_draws_never_repeat_an_item_and_an_exhausted_pool_pins_the_contrast():
    precision = _precision(half_width=1e-6)
    design = SequentialDesign(precision, pool=6, seed=1)
    seen = set()
    while draws := design.next_batch():
        for d in draws:
            assert (d.cell, d.item) not in seen
            seen.add((d.cell, d.item))
        design.observe({(d.cell, d.item): (POOL[d.cell][d.item],) * 2 for d in draws})
    assert len(seen) == 12 and design.stop_reason() == "pool"
    low, high = design.interval()
    assert low <= _theta(precision) <= high


def test_the_same_seed_draws_the_same_items_and_another_seed_other_ones():
    first = [(d.cell, d.item) for d in SequentialDesign(_precision(), pool=6, seed=3).next_batch()]
    again = [(d.cell, d.item) for d in SequentialDesign(_precision(), pool=6, seed=3).next_batch()]
    other = [(d.cell, d.item) for d in SequentialDesign(_precision(), pool=6, seed=4).next_batch()]
    assert first == again and first != other


def test_uniform_allocation_draws_by_the_weights_and_neyman_favours_the_noisy_cell():
    uniform = SequentialDesign(_precision(allocation="uniform", weights={"r/u/calm": 0.5, "r/u/hard": 0.5}), pool=6)
    assert uniform.allocation() == {"r/u/calm": 0.5, "r/u/hard": 0.5}
    neyman = SequentialDesign(_precision(weights={"r/u/calm": 0.5, "r/u/hard": 0.5}, batch=4, floor=0.2), pool=100,
                              seed=2)
    calm, hard = np.zeros(100), np.tile([1.0, -1.0], 50)
    for _ in range(5):
        draws = neyman.next_batch()
        neyman.observe({(d.cell, d.item): ((calm if "calm" in d.cell else hard)[d.item],) * 2 for d in draws})
    share = neyman.allocation()
    assert share["r/u/hard"] > 0.7
    assert share["r/u/calm"] >= 0.2 * 0.5  # the floor keeps every cell drawable


def test_the_run_stops_at_the_budget_when_the_target_is_out_of_reach():
    design = SequentialDesign(_precision(half_width=1e-4, max_items=7), pool=6, seed=0)
    while draws := design.next_batch():
        design.observe({(d.cell, d.item): (POOL[d.cell][d.item],) * 2 for d in draws})
    assert design.drawn == 7 and design.stop_reason() == "budget"
    record = design.record()
    assert [look["draws"] for look in record["looks"]] == [5, 7]
    assert record["stopped"] == "budget"


def test_contrasts_outside_minus_one_to_one_are_refused():
    design = SequentialDesign(_precision(), pool=6)
    draws = design.next_batch()
    with pytest.raises(ValueError, match="outside"):
        design.observe({(d.cell, d.item): (0.0, 2.0) for d in draws})


def test_fixed_interval_is_the_stratified_wald_interval():
    values = {"r/u/calm": [0.0, 1.0, 0.0, 0.0], "r/u/hard": [1.0, 1.0, -1.0, 0.0, 1.0]}
    weights = {"r/u/calm": 0.25, "r/u/hard": 0.75}
    low, high = fixed_interval(values, weights, z=1.96)
    est = 0.25 * 0.25 + 0.75 * 0.4
    se = math.sqrt(0.25**2 * np.var(values["r/u/calm"], ddof=1) / 4 + 0.75**2 * np.var(values["r/u/hard"], ddof=1) / 5)
    assert (low, high) == pytest.approx((est - 1.96 * se, est + 1.96 * se))


def test_plan_items_matches_the_closed_form_neyman_sample_size_on_a_large_pool():
    precision = _precision(half_width=0.05)
    sds = {"r/u/calm": 0.2, "r/u/hard": 0.6}
    answer = plan_items(precision, sds=sds, costs={"r/u/calm": 10, "r/u/hard": 10}, pool=10**9)
    z = NormalDist().inv_cdf(0.975)
    n = (z * (0.25 * 0.2 + 0.75 * 0.6) / 0.05) ** 2
    assert answer["total_items"] == pytest.approx(n, abs=2)
    assert answer["items"]["r/u/hard"] / answer["items"]["r/u/calm"] == pytest.approx(9, rel=0.05)
    assert answer["calls"] == 10 * answer["total_items"]
    assert answer["predicted_half_width"] <= 0.05


def test_a_difference_with_power_plans_the_half_width_that_detects_it():
    precision = _precision(half_width=None, difference=0.1, power=0.8)
    z = NormalDist().inv_cdf(0.975)
    assert precision.target_half_width() == pytest.approx(0.1 * z / (z + NormalDist().inv_cdf(0.8)))


def test_cheaper_cells_get_more_items_under_neyman_allocation_with_costs():
    precision = _precision(weights={"r/u/calm": 0.5, "r/u/hard": 0.5})
    answer = plan_items(precision, sds={"r/u/calm": 0.5, "r/u/hard": 0.5}, costs={"r/u/calm": 4, "r/u/hard": 16},
                        pool=10**6)
    assert answer["items"]["r/u/calm"] == pytest.approx(2 * answer["items"]["r/u/hard"], rel=0.05)


def test_fixed_interval_with_a_prior_gives_a_cell_whose_items_all_agreed_a_variance():
    values = {"calm": [0.0] * 12, "hard": [0.0, 1.0, 1.0, 0.0, 1.0, -1.0, 0.0, 1.0]}
    weights = {"calm": 0.5, "hard": 0.5}
    raw = fixed_interval(values, weights, z=1.96)
    shrunk = fixed_interval(values, weights, z=1.96, prior_sd=0.5)
    calm_var = (2 * 0.25) / (12 - 1 + 2)
    hard = np.asarray(values["hard"])
    hard_var = (((hard - hard.mean()) ** 2).sum() + 2 * 0.25) / (8 - 1 + 2)
    half = 1.96 * np.sqrt(0.25 * calm_var / 12 + 0.25 * hard_var / 8)
    assert shrunk == pytest.approx((0.5 * hard.mean() - half, 0.5 * hard.mean() + half))
    assert raw != shrunk
    calm_raw = fixed_interval({"calm": values["calm"]}, {"calm": 1.0}, z=1.96)
    calm_shrunk = fixed_interval({"calm": values["calm"]}, {"calm": 1.0}, z=1.96, prior_sd=0.5)
    assert calm_raw == (0.0, 0.0) and calm_shrunk[0] < 0 < calm_shrunk[1]

"""Exact per-cell bounds pinned to scipy's binomial test and the closed zero-breach bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from multiverse.analysis.cells import principle_verdicts
from multiverse.analysis.exact_bounds import cell_bounds, clopper_pearson
from multiverse.core import schema as S


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 400), data=st.data())
def test_bounds_match_scipy_exact_interval(n, data):
    k = data.draw(st.integers(0, n))
    lower, upper, one_sided = clopper_pearson(np.array([k]), np.array([n]), ci=0.95)
    want = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert (float(lower[0]), float(upper[0])) == pytest.approx((want.low, want.high), abs=1e-9)
    assert float(one_sided[0]) == pytest.approx(binomtest(k, n, alternative="less").proportion_ci(0.95, "exact").high, abs=1e-9)


@pytest.mark.parametrize("n", [1, 12, 30, 120])
def test_zero_breaches_give_the_closed_one_sided_bound(n):
    _, _, one_sided = clopper_pearson(np.array([0]), np.array([n]))
    assert float(one_sided[0]) == pytest.approx(1 - 0.05 ** (1 / n), abs=1e-12)


def test_counts_bounds_and_status_on_a_planted_cube(make_cube):
    cube = make_cube(systems={"a": 0.03}, judges={"strict": {}}, replicates=1, items=40, horizon=2, seed=4)
    out = cell_bounds(cube, max_upper=0.3)
    assert out["upper_one_sided"].dims == ("system", "judge", "mode", "strategy", "principle")
    verdicts = principle_verdicts(cube).sel(system="a", judge="strict")
    m, s, p = S.MODES[0], S.STRATEGIES[1], "confidentiality"
    in_cell = verdicts.sel(principle=p).where((cube["mode"] == m) & (cube["strategy"] == s)).sel(system="a")
    cell = out.sel(system="a", judge="strict", mode=m, strategy=s, principle=p)
    assert int(cell["n_conversations"]) == int(in_cell.notnull().sum())
    assert int(cell["breaches"]) == int((in_cell == 1).sum())
    n = out["n_conversations"].values
    status = out["status"].values
    assert ((n == 0) == (status == "untested")).all()
    assert (status[(n > 0) & (out["upper_one_sided"].values > 0.3)] == "under_tested").all()
    assert np.isnan(out["upper"].values[n == 0]).all()


def test_needs_target_cells(make_cube):
    cube = make_cube(items=3).drop_vars("mode")
    with pytest.raises(ValueError, match="no 'mode'"):
        cell_bounds(cube)


def test_the_fixed_item_set_target_counts_conversations(make_cube):
    cube = make_cube(systems={"a": 0.05}, judges={"strict": {}}, replicates=3, items=30, horizon=2, seed=6)
    out = cell_bounds(cube, target="items")
    lower, upper, one_sided = clopper_pearson(out["breaches"].values, out["n_conversations"].values)
    np.testing.assert_allclose(out["upper"].values, upper, equal_nan=True)
    np.testing.assert_allclose(out["upper_one_sided"].values, one_sided, equal_nan=True)
    assert out.attrs["target"] == "items"


def test_the_item_population_target_counts_items_where_nothing_was_breached(make_cube):
    cube = make_cube(systems={"a": 0.0}, judges={"strict": {"specificity": 1.0}}, replicates=3, items=30, horizon=2,
                     partial=0.0, seed=6)
    out = cell_bounds(cube)
    tested = out["n_conversations"].values > 0
    items = out["n_items"].values[tested]
    conversations = out["n_conversations"].values[tested]
    assert (out["breaches"].values == 0).all() and (items <= conversations).all() and (items < conversations).any()
    np.testing.assert_allclose(out["upper_one_sided"].values[tested], 1 - 0.05 ** (1 / items))
    fixed = cell_bounds(cube, target="items")["upper_one_sided"].values[tested]
    population = out["upper_one_sided"].values[tested]
    assert (population >= fixed).all() and (population[items < conversations] > fixed[items < conversations]).all()


def test_the_item_population_target_is_korn_and_graubards_effective_size(make_cube):
    from scipy import stats

    cube = make_cube(systems={"a": 0.2}, judges={"strict": {}}, replicates=3, items=60, horizon=3, seed=2)
    out = cell_bounds(cube).sel(system="a", judge="strict")
    cell = out.isel(mode=0, strategy=0).sel(principle="confidentiality")
    verdicts = principle_verdicts(cube).sel(system="a", judge="strict", principle="confidentiality").squeeze(drop=True)
    in_cell = verdicts.where((cube["mode"] == S.MODES[0]) & (cube["strategy"] == S.STRATEGIES[0])).squeeze(drop=True)
    y, n = (in_cell == 1).sum("replicate").values, in_cell.notnull().sum("replicate").values
    p, g = y.sum() / n.sum(), int((n > 0).sum())
    variance = g / (g - 1) * ((y - p * n) ** 2).sum() / n.sum() ** 2
    want = min(max(p * (1 - p) / variance, g), n.sum()) * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, g - 1)) ** 2
    want = min(max(want, g), n.sum())
    assert float(cell["effective_n"]) == pytest.approx(want, rel=1e-9)

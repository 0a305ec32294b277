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

"""Noise floors: clustered errors against statsmodels, flips across reruns, detectable differences."""

import numpy as np
import pytest
import statsmodels.api as sm
import xarray as xr
from scipy import stats

from multiverse.analysis.noise import clustered_se_of_rate, flip_share_kernel, noise_floor, paired_differences
from multiverse.scoring import score


@pytest.fixture(scope="module")
def cube(make_cube):
    return make_cube(systems={"a": 0.03, "b": 0.05, "c": 0.12}, judges={"j": {}, "k": {"specificity": 0.9}},
                     replicates=3, items=25, horizon=4, seed=4)


def single(scores, **at):
    return scores.sel(**at).squeeze(drop=True)


def test_rate_se_matches_statsmodels_cluster_covariance(cube):
    scores = score(cube, standards="any_deviation", rules="any_turn")
    se = clustered_se_of_rate(scores)
    one = single(scores, system="c", judge="k").to_dataframe(name="y").reset_index()
    fit = sm.OLS(one["y"].values, np.ones(len(one))).fit(cov_type="cluster", cov_kwds={"groups": one["item"].values})
    assert float(single(se, system="c", judge="k")) == pytest.approx(float(fit.bse[0]), rel=1e-9)


def test_paired_se_matches_statsmodels_on_paired_differences(cube):
    scores = score(cube, standards="clear_breach", rules="any_turn")
    got = paired_differences(scores, n_boot=100)
    d = (single(scores, system="c", judge="j") - single(scores, system="a", judge="j")).to_dataframe(name="d").reset_index()
    fit = sm.OLS(d["d"].values, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": d["item"].values},
                                                     use_t=True)  # t with G - 1 df
    pair = single(got, system="c", system_b="a", judge="j")
    assert float(pair.difference) == pytest.approx(float(fit.params[0]))
    assert float(pair.se) == pytest.approx(float(fit.bse[0]), rel=1e-9)
    assert float(pair.p_value) == pytest.approx(float(fit.pvalues[0]), rel=1e-9)
    lower, upper = pair.ci.sel(ci_bound="lower"), pair.ci.sel(ci_bound="upper")
    assert float(lower) < float(pair.difference) < float(upper)
    antisymmetric = got.difference + got.difference.rename(system="system_b", system_b="system")
    assert float(abs(antisymmetric).max()) == 0


def test_minimum_detectable_difference_closed_form_and_the_test_apart_from_it(cube):
    got = paired_differences(cube, n_boot=20, power=0.8, alpha=0.05)
    factor = stats.t.ppf(0.975, 24) + stats.t.ppf(0.8, 24)  # 25 items
    assert int(got.n_clusters.max()) == 25
    np.testing.assert_allclose(got.mdd.values, factor * got.se.values)
    off_diagonal = got.system != got.system_b
    assert bool((got.exceeds_noise == (got.p_value < 0.05)).where(off_diagonal, True).all())
    beyond = abs(got.z) > stats.t.ppf(0.975, 24)
    assert bool((got.exceeds_noise == beyond).where(off_diagonal, True).all())


def test_rate_interval_is_t_with_items_minus_one_df(cube):
    scores = score(cube, standards="any_deviation", rules="any_turn")
    out = noise_floor(scores)
    one = single(scores, system="b", judge="j").to_dataframe(name="y").reset_index()
    fit = sm.OLS(one["y"].values, np.ones(len(one))).fit(cov_type="cluster", cov_kwds={"groups": one["item"].values},
                                                         use_t=True)
    np.testing.assert_allclose(single(out.ci, system="b", judge="j").values, fit.conf_int(0.05)[0], rtol=1e-9)


def test_pass_hat_k_interval_is_a_t_interval_over_items():
    rows = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1], [0, 0, np.nan], [0, np.nan, np.nan]])
    scores = xr.DataArray(rows, dims=("item", "replicate"))
    out = noise_floor(scores.expand_dims(system=["s"]), k=[1, 2])
    per_item = np.array([[1, 1], [2 / 3, 1 / 3], [0, 0], [1, 1]])  # the last item has one rerun: excluded
    want = per_item.mean(0)[:, None] + np.array([-1, 1]) * stats.t.ppf(0.975, 3) * per_item.std(0, ddof=1)[:, None] / 2
    np.testing.assert_allclose(out.pass_hat_k_ci.squeeze().values, want)
    assert int(out.n_items_excluded.squeeze()) == 1


@pytest.mark.parametrize(
    "rows, want",
    [
        pytest.param([[0, 0, 0], [1, 1, 1]], 0.0, id="stable-verdicts"),
        pytest.param([[0, 1, 0], [1, 1, 1]], 0.5, id="one-item-flips"),
        pytest.param([[0, np.nan, np.nan], [0, 1, np.nan]], 1.0, id="items-with-one-rerun-do-not-count"),
    ],
)
def test_flip_share(rows, want):
    assert flip_share_kernel(np.asarray(rows, float), axis=-1) == pytest.approx(want)


def test_noise_floor_contents(cube):
    out = noise_floor(cube, k=[1, 2, 3, 5])
    assert list(out["k"].values) == [1, 2, 3]
    assert {"rate", "se", "ci", "replicate_sd", "flip_share", "mdd", "pass_hat_k", "pass_hat_k_ci",
            "n_valid"} <= set(out.data_vars)
    assert "snr" not in out
    assert "first_turn" not in set(out["rule"].values)
    noisy = out.flip_share.sel(judge="k").mean()
    assert float(noisy) > float(out.flip_share.sel(judge="j").mean())  # more false alarms, more flips


def test_paired_differences_need_two_systems(cube):
    with pytest.raises(ValueError, match="at least two systems"):
        paired_differences(cube.isel(system=[0]))


def test_paired_differences_refuse_an_interval_level_outside_0_1(cube):
    with pytest.raises(ValueError, match="ci=95"):
        paired_differences(cube, n_boot=10, ci=95)


def test_noise_floor_without_reruns_keeps_the_clustered_error_only(cube):
    scores = score(cube, standards="clear_breach", rules="any_turn").isel(replicate=0, drop=True)
    out = noise_floor(scores)
    assert {"rate", "se", "ci", "mdd", "n_valid", "n_clusters"} == set(out.data_vars)
    xr.testing.assert_allclose(out["se"], clustered_se_of_rate(scores))

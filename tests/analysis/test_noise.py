"""Noise floors: clustered errors against statsmodels, score-type intervals, paired tests on common support."""

import numpy as np
import pytest
import statsmodels.api as sm
import xarray as xr
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from multiverse.analysis.noise import clustered_se_of_rate, flip_share_kernel, noise_floor, paired_differences
from multiverse.analysis.ranking import rankings
from multiverse.cube.build import new_cube
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
    lower, upper = pair.ci.sel(ci_bound="lower"), pair.ci.sel(ci_bound="upper")
    assert float(lower) < float(pair.difference) < float(upper)
    antisymmetric = got.difference + got.difference.rename(system="system_b", system_b="system")
    assert float(abs(antisymmetric).max()) == 0


def wilson(p, se, n, items, level):
    """statsmodels' Wilson interval at the clustered effective size, with t on items - 1 df."""
    n_eff = min(max(p * (1 - p) / se**2, items), n) if 0 < p < 1 and se > 0 else items
    tail = 2 * stats.norm.sf(stats.t.ppf(0.5 + level / 2, items - 1))  # the normal tail of that t quantile
    return proportion_confint(p * n_eff, n_eff, alpha=tail, method="wilson")


def test_rate_interval_is_wilsons_at_the_clustered_effective_size(cube):
    scores = score(cube, standards="any_deviation", rules="any_turn")
    out = single(noise_floor(scores), system="b", judge="j")
    one = single(scores, system="b", judge="j").to_dataframe(name="y").reset_index()
    fit = sm.OLS(one["y"].values, np.ones(len(one))).fit(cov_type="cluster", cov_kwds={"groups": one["item"].values})
    want = wilson(float(out.rate), float(fit.bse[0]), len(one), 25, 0.95)
    np.testing.assert_allclose(out.ci.values, want, rtol=1e-9)


def test_paired_interval_is_mover_from_the_two_rates_wilson_limits_and_the_test_inverts_it(cube):
    scores = score(cube, standards="clear_breach", rules="any_turn")
    got = single(paired_differences(scores, adjust="none"), system="c", system_b="a", judge="j")
    rates = {s: single(scores, system=s, judge="j").mean(["replicate"]).values for s in ("c", "a")}
    n, items = 75, 25
    p = {s: float(v.mean()) for s, v in rates.items()}
    u = {s: (v - p[s]) / items for s, v in rates.items()}  # influences of the items (3 reruns each)
    se = {s: np.sqrt(items / (items - 1) * (u[s] ** 2).sum()) for s in u}
    r = items / (items - 1) * (u["c"] * u["a"]).sum() / (se["c"] * se["a"])
    (lc, uc), (la, ua) = (wilson(p[s], se[s], n, items, 0.95) for s in ("c", "a"))
    d = p["c"] - p["a"]
    lower = d - np.sqrt((p["c"] - lc) ** 2 + (ua - p["a"]) ** 2 - 2 * r * (p["c"] - lc) * (ua - p["a"]))
    upper = d + np.sqrt((uc - p["c"]) ** 2 + (p["a"] - la) ** 2 - 2 * r * (uc - p["c"]) * (p["a"] - la))
    np.testing.assert_allclose(got.ci.values, [lower, upper], rtol=1e-9)
    at_p = single(paired_differences(scores, adjust="none", ci=1 - float(got.p_value)), system="c", system_b="a",
                  judge="j")
    assert float(at_p.ci.sel(ci_bound="lower")) == pytest.approx(0.0, abs=1e-6)  # the test inverts the interval
    assert float(got.prob_less) == pytest.approx(float(got.p_value) / 2)  # c is the higher rate


def test_minimum_detectable_difference_closed_form_and_the_test_apart_from_it(cube):
    got = paired_differences(cube, n_boot=20, power=0.8, alpha=0.05, adjust="none")
    factor = stats.t.ppf(0.975, 24) + stats.t.ppf(0.8, 24)  # 25 items
    assert int(got.n_clusters.max()) == 25
    np.testing.assert_allclose(got.mdd.values, factor * got.se.values)
    off_diagonal = got.system != got.system_b
    assert bool((got.exceeds_noise == (got.p_value < 0.05)).where(off_diagonal, True).all())
    outside = (got.ci.sel(ci_bound="lower") > 0) | (got.ci.sel(ci_bound="upper") < 0)
    assert bool((got.exceeds_noise == outside).where(off_diagonal, True).all())


@pytest.mark.parametrize("method", ["holm", "fdr_bh"])
def test_the_flags_of_one_pair_are_adjusted_over_its_specifications_like_statsmodels(cube, method):
    got = paired_differences(cube, adjust=method)
    pair = got.sel(system="c", system_b="a").squeeze(drop=True).stack(spec=["judge", "standard", "rule"])
    want = multipletests(pair.p_value.values, method=method)[1]
    np.testing.assert_allclose(pair.p_adjusted.values, want, rtol=1e-12)
    assert bool((pair.exceeds_noise == (pair.p_adjusted < 0.05)).all())


def one_cell_pair(missing_on_b):
    """Two identical systems on two items; the hard item breaches at turn 1 (D3's one-cell reproduction)."""
    cube = new_cube(system=["a", "b"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=2, turn=2,
                    principle=["academic_integrity"], judge=["j"])
    cube["severity"].values[..., 0, :, 0, 0] = [2, 0]
    cube["severity"].values[..., 1, :, 0, 0] = [0, 0]
    cube["ended"].values[...] = "completed"
    if missing_on_b:
        cube["severity"].values[1, ..., 0, 1, 0, 0] = -1  # b's judgment of the hard item's second turn is lost
    return score(cube, standards="clear_breach", rules="any_turn")


def test_identical_systems_tie_and_rank_equal_when_one_loses_judgments_on_the_hard_item():
    pairs = paired_differences(one_cell_pair(missing_on_b=True), adjust="none").squeeze(drop=True)
    assert float(pairs.difference.sel(system="a", system_b="b")) == 0.0
    assert float(pairs.prob_less.sel(system="a", system_b="b")) == 0.5
    assert rankings(one_cell_pair(missing_on_b=True)).squeeze().values.tolist() == [1.5, 1.5]


def test_a_pair_without_common_support_is_dropped_and_counted():
    scores = one_cell_pair(missing_on_b=False)
    b_lost = scores.where((scores["system"] != "b") | (scores["item"] != 1))  # b's easy item has no value
    pairs = paired_differences(b_lost, adjust="none").squeeze(drop=True).sel(system="a", system_b="b")
    assert int(pairs.n_pairs) == 1 and int(pairs.n_dropped) == 1 and float(pairs.difference) == 0.0
    assert int(pairs.n_clusters) == 1 and int(pairs.n_clusters_dropped) == 1  # the easy item: no cell with both


def test_pass_hat_k_interval_is_wilsons_over_the_items_with_k_reruns():
    rows = np.array([[0, 0, 0], [0, 1, 0], [1, 1, 1], [0, 0, np.nan], [0, np.nan, np.nan]])
    scores = xr.DataArray(rows, dims=("item", "replicate"))
    out = noise_floor(scores.expand_dims(system=["s"]), k=[1, 2])
    per_item = {1: np.array([1, 2 / 3, 0, 1, 1]), 2: np.array([1, 1 / 3, 0, 1])}  # each k's own items
    reruns = {1: 12, 2: 11}  # the usable reruns of those items
    for k, values in per_item.items():
        m = len(values)
        want = wilson(values.mean(), values.std(ddof=1) / np.sqrt(m), reruns[k], m, 0.95)
        np.testing.assert_allclose(out.pass_hat_k_ci.sel(k=k).squeeze().values, want, rtol=1e-9)
    assert out.n_items_excluded.squeeze().values.tolist() == [0, 1]


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
            "n_valid", "n_used", "n_imputed", "n_excluded", "n_not_ruled"} <= set(out.data_vars)
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
    assert {"rate", "se", "ci", "mdd", "n_valid", "n_clusters", "n_used", "n_imputed", "n_excluded",
            "n_not_ruled"} == set(out.data_vars)
    se = clustered_se_of_rate(scores)
    xr.testing.assert_allclose(out["se"].reset_coords(drop=True), se.reset_coords(drop=True))
    for name in ("n_used", "n_imputed", "n_excluded", "n_not_ruled", "n_clusters"):  # what it used and dropped
        xr.testing.assert_equal(out[name].reset_coords(drop=True), se[name].reset_coords(drop=True).rename(name))

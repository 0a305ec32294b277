"""PPI++ pinned to ppi_py, coverage by simulation, and the labels-needed helper."""

import numpy as np
import pytest

from multiverse.analysis.ppi import corrected_difference, corrected_rate, human_labels_needed, labels_needed, ppi_mean
from multiverse.scoring import score

ppi_py = pytest.importorskip("ppi_py")


def planted(n, big_n, *, rate=0.3, sensitivity=0.85, specificity=0.9, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(n + big_n) < rate
    judged = np.where(truth, rng.random(n + big_n) < sensitivity, rng.random(n + big_n) >= specificity)
    return truth[:n].astype(float), judged[:n].astype(float), judged[n:].astype(float)


@pytest.mark.parametrize("lam", [pytest.param(None, id="power-tuned"), pytest.param(1.0, id="plain-ppi"),
                                 pytest.param(0.0, id="human-only")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_ppi_py(lam, seed):
    y, f, u = planted(60, 900, seed=seed)
    got = ppi_mean(y, f, u, ci=0.9, lam=lam, small_sample=False)
    lower, upper = ppi_py.ppi_mean_ci(y, f, u, alpha=0.1, lam=lam)
    estimate = ppi_py.ppi_mean_pointestimate(y, f, u, lam=lam)
    assert got["estimate"] == pytest.approx(float(np.ravel(estimate)[0]), abs=1e-12)
    assert (got["lower"], got["upper"]) == pytest.approx((float(np.ravel(lower)[0]), float(np.ravel(upper)[0])), abs=1e-12)


@pytest.mark.parametrize("small_sample", [pytest.param(True, id="small-sample"), pytest.param(False, id="as-ppi-py")])
def test_coverage_and_width_against_the_human_only_interval(small_sample):
    hits, narrower, m = 0, 0, 400
    for seed in range(m):
        y, f, u = planted(80, 2000, seed=100 + seed)
        got = ppi_mean(y, f, u, small_sample=small_sample)
        hits += got["lower"] <= 0.3 <= got["upper"]
        narrower += (got["upper"] - got["lower"]) < (got["human_upper"] - got["human_lower"])
    assert 0.92 <= hits / m <= 0.98
    assert narrower / m > 0.95


def test_labels_needed_reaches_the_width_it_promises():
    y, f, u = planted(200, 5000, seed=4)
    n = labels_needed(0.1, y=y, yhat=f, n_unlabeled=5000)
    assert 2 < n < 5000
    assert labels_needed(0.05, y=y, yhat=f, n_unlabeled=5000) > n
    widths = []
    for seed in range(200):
        yy, ff, uu = planted(n, 5000, seed=900 + seed)
        got = ppi_mean(yy, ff, uu, small_sample=False)
        widths.append(got["upper"] - got["lower"])
    assert np.mean(widths) == pytest.approx(0.1, rel=0.1)
    assert labels_needed(1e-6, y=y, yhat=f, n_unlabeled=100) == -1


def _cube_with_humans(make_cube):
    judges = {"model": {"sensitivity": 0.8, "specificity": 0.95}, "human:a": {"sensitivity": 1.0, "specificity": 1.0}}
    cube = make_cube(systems={"a": 0.05, "b": 0.1}, judges=judges, replicates=1, items=200, horizon=3, partial=0.0, seed=2)
    human = cube["severity"].sel(judge="human:a").copy()
    human[{"item": slice(60, None)}] = -2  # humans labelled the first 60 items only
    cube["severity"].loc[{"judge": "human:a"}] = human
    return cube


def test_cube_rate_and_difference(make_cube):
    cube = _cube_with_humans(make_cube)
    one = corrected_rate(cube.sel(system=["a"]), judge="model", human="human:a")
    assert one.attrs["n_labelled"] == 60 and one.attrs["n_judge_only"] == 140
    truth = float(score(cube.sel(system=["a"]), standards="clear_breach", rules="any_turn").sel(judge="human:a").isel(item=slice(0, 60)).mean())
    assert float(one["human_estimate"]) == pytest.approx(truth)
    lower, upper = one["ci"].values
    assert lower < float(one["estimate"]) < upper
    diff = corrected_difference(cube, judge="model", human="human:a", a="b", b="a")
    assert diff.attrs["n_labelled"] == 60
    assert float(diff["human_ci"].sel(ci_bound="upper") - diff["human_ci"].sel(ci_bound="lower")) > \
        float(diff["ci"].sel(ci_bound="upper") - diff["ci"].sel(ci_bound="lower"))
    needed = human_labels_needed(cube.sel(system=["a"]), judge="model", human="human:a", width=0.2)
    assert 2 <= needed <= 200
    with pytest.raises(ValueError, match="not judges of the cube"):
        corrected_rate(cube, judge="model", human="human:z")


def test_a_labelled_set_without_disagreement_still_has_width():
    y = np.zeros(12)
    got = ppi_mean(y, np.zeros(12), np.r_[np.zeros(500), np.ones(20)])
    assert got["upper"] - got["lower"] > 0.1
    assert ppi_mean(y, np.zeros(12), np.zeros(100), small_sample=False)["upper"] == 0.0


def test_intervals_stay_inside_the_rate_range(make_cube):
    judges = {"model": {"sensitivity": 0.99, "specificity": 0.99}, "human:a": {"sensitivity": 1.0, "specificity": 1.0}}
    cube = make_cube(systems={"a": 0.6}, judges=judges, replicates=1, items=60, horizon=3, partial=0.0, seed=1)
    human = cube["severity"].sel(judge="human:a").copy()
    human[{"item": slice(10, None)}] = -2
    cube["severity"].loc[{"judge": "human:a"}] = human
    out = corrected_rate(cube, judge="model", human="human:a")
    assert 0.0 <= float(out["ci"].sel(ci_bound="lower")) <= float(out["ci"].sel(ci_bound="upper")) <= 1.0
    assert float(out["human_ci"].sel(ci_bound="upper")) <= 1.0


def test_the_small_sample_estimate_is_post_stratified_by_the_judges_verdict():
    y, f, u = planted(40, 600, rate=0.1, seed=8)
    got = ppi_mean(y, f, u)
    judged = np.concatenate([f, u])
    want = sum(np.mean(judged == v) * y[f == v].mean() for v in (0.0, 1.0))
    assert got["estimate"] == pytest.approx(want, abs=1e-12)
    assert got["lam"] == pytest.approx(y[f == 1].mean() - y[f == 0].mean())  # the recalibrated predictor's slope
    assert got["lower"] < got["estimate"] < got["upper"]


def test_the_human_only_interval_is_wilsons():
    from statsmodels.stats.proportion import proportion_confint

    y, f, u = planted(30, 300, rate=0.05, seed=9)
    got = ppi_mean(y, f, u)
    want = proportion_confint(int(y.sum()), len(y), alpha=0.05, method="wilson")
    assert (got["human_lower"], got["human_upper"]) == pytest.approx(want, abs=1e-12)


def test_a_verdict_no_label_has_leaves_its_stratum_open():
    y, f = np.zeros(10), np.zeros(10)
    got = ppi_mean(y, f, np.r_[np.zeros(90), np.ones(100)])
    assert got["upper"] >= 100 / 200  # half the judged units are in a stratum no human saw

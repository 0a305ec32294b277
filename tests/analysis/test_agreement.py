"""Agreement statistics pinned to krippendorff and statsmodels, and the planted blind judge."""

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from multiverse.analysis.raters import agreement, agreement_ci, metric_from_tables, pair_tables, ratings
from multiverse.core import schema as S
from multiverse.cube.build import new_cube

SCALES = [pytest.param(None, 3, id="three-level-severity"), pytest.param("clear_breach", 2, id="clear-breach-binary"),
          pytest.param("persistent", 2, id="persistent-binary")]


def pair(values, a, b):
    """The two raters' categories on the units both rated."""
    flat = values.values.reshape(-1, values.sizes["judge"])
    labels = list(values["judge"].values)
    x, y = flat[:, labels.index(a)], flat[:, labels.index(b)]
    return x, y, (x >= 0) & (y >= 0)


@pytest.mark.parametrize("standard, k", SCALES)
@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
def test_krippendorff_alpha_matches_the_krippendorff_package(small_cube, standard, k, scale):
    got = agreement(small_cube, metric="krippendorff_alpha", standard=standard, scale=scale)
    values = ratings(small_cube, standard=standard)
    for a in got["judge"].values:
        for b in got["judge_b"].values:
            if a == b:
                continue
            x, y, _ = pair(values, a, b)
            data = np.vstack([np.where(x >= 0, x, np.nan), np.where(y >= 0, y, np.nan)])
            want = krippendorff.alpha(reliability_data=data, level_of_measurement=scale)
            assert float(got.sel(judge=a, judge_b=b)) == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize("standard, k", SCALES)
def test_kappas_match_statsmodels(small_cube, standard, k):
    values = ratings(small_cube, standard=standard)
    kappa = agreement(small_cube, metric="cohen_kappa", standard=standard)
    weighting = "quadratic" if standard is None else None  # severity is ordinal: weighted kappa by default
    pi = agreement(small_cube, metric="scott_pi", standard=standard)
    percent = agreement(small_cube, metric="percent", standard=standard)
    for a, b in [("strict", "lenient"), ("strict", "blind"), ("lenient", "blind")]:
        x, y, both = pair(values, a, b)
        table = pd.crosstab(pd.Categorical(x[both], range(k)), pd.Categorical(y[both], range(k)), dropna=False).values
        assert float(kappa.sel(judge=a, judge_b=b)) == pytest.approx(cohens_kappa(table, wt=weighting).kappa, abs=1e-9)
        per_unit = np.zeros((both.sum(), k))
        np.add.at(per_unit, (np.arange(both.sum()), x[both]), 1)
        np.add.at(per_unit, (np.arange(both.sum()), y[both]), 1)
        assert float(pi.sel(judge=a, judge_b=b)) == pytest.approx(fleiss_kappa(per_unit, method="fleiss"), abs=1e-9)
        assert float(percent.sel(judge=a, judge_b=b)) == pytest.approx(np.mean(x[both] == y[both]), abs=1e-12)
        assert int(kappa["n_units"].sel(judge=a, judge_b=b)) == both.sum()


def test_matrix_is_symmetric_and_counts_only_units_both_rated(small_cube):
    got = agreement(small_cube, metric="cohen_kappa")
    np.testing.assert_allclose(got.values, got.values.T)
    n = got["n_units"]
    assert (n.values == n.values.T).all()
    assert int(n.sel(judge="strict", judge_b="lenient")) < int(n.sel(judge="blind", judge_b="blind"))


def test_the_blind_judge_is_singled_out(blind_judge_cube):
    for metric in ("cohen_kappa", "krippendorff_alpha", "scott_pi"):
        got = agreement(blind_judge_cube, metric=metric, standard="clear_breach")
        off = got.where(got["judge"] != got["judge_b"])
        mean_with_others = off.mean("judge_b")
        assert str(mean_with_others.idxmin("judge").item()) == "blind"
        assert float(got.sel(judge="sharp", judge_b="keen")) > 0.6 > float(got.sel(judge="sharp", judge_b="blind")) + 0.3


def test_truth_as_a_rater_ranks_the_judges_by_sensitivity(blind_judge_cube):
    got = agreement(blind_judge_cube, metric="cohen_kappa", include_truth=True).sel(judge_b="truth")
    assert float(got.sel(judge="blind")) < min(float(got.sel(judge="sharp")), float(got.sel(judge="keen")))
    with pytest.raises(ValueError, match="no 'truth'"):
        agreement(blind_judge_cube.drop_vars("truth"), include_truth=True)


def test_truth_joins_judges_that_carry_model_coordinates():
    cube = new_cube(system=["a"], role=["tutor"], user_sim=["plain"], condition=["fixed"], replicate=2, item=5, turn=3,
                    principle=list(S.ROLE_PRINCIPLES["tutor"]), judge=["copy", "noisy"], with_truth=True,
                    coords={"judge_model": ("judge", ["sim/judge-copy", "sim/judge-noisy"])})
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, cube["truth"].shape).astype(np.int8)
    cube["truth"][:] = truth
    cube["severity"].loc[{"judge": "copy"}] = truth
    cube["severity"].loc[{"judge": "noisy"}] = rng.integers(0, 3, truth.shape).astype(np.int8)
    got = agreement(cube, metric="percent", include_truth=True)
    assert list(got["judge"].values) == ["copy", "noisy", "truth"]
    assert float(got.sel(judge="copy", judge_b="truth")) == 1.0
    assert float(got.sel(judge="noisy", judge_b="truth")) < 1.0
    assert int(got["n_units"].sel(judge="copy", judge_b="truth")) == truth.size
    with pytest.raises(ValueError, match="judge 'truth' already exists"):
        agreement(cube.assign_coords(judge=["copy", "truth"]), include_truth=True)


def test_by_principle_keeps_the_dim(small_cube):
    got = agreement(small_cube, metric="percent", by="principle")
    assert got.dims == ("judge", "judge_b", "principle")
    pooled = agreement(small_cube, metric="percent")
    agree = (got * got["n_units"]).sum("principle") / got["n_units"].sum("principle")
    np.testing.assert_allclose(agree.values, pooled.values)


def test_rerun_agreement_over_replicates(small_cube):
    got = agreement(small_cube, metric="percent", dim="replicate")
    assert got.dims == ("replicate", "replicate_b")


def test_bootstrap_interval_covers_the_estimate(blind_judge_cube):
    out = agreement_ci(blind_judge_cube, metric="cohen_kappa", standard="clear_breach", n_boot=200, seed=1)
    est, ci = out["estimate"], out["ci"]
    assert (ci.sel(ci_bound="lower") <= est + 1e-12).all() and (est <= ci.sel(ci_bound="upper") + 1e-12).all()
    width = ci.sel(ci_bound="upper") - ci.sel(ci_bound="lower")
    assert 0 < float(width.sel(judge="sharp", judge_b="blind")) < 0.3


@pytest.mark.parametrize(
    "table, metric, want",
    [
        pytest.param([[20, 5], [10, 15]], "cohen_kappa", 0.4, id="textbook-kappa"),
        pytest.param([[20, 5], [10, 15]], "percent", 0.7, id="textbook-percent"),
        pytest.param([[50, 0], [0, 0]], "cohen_kappa", np.nan, id="no-variation-is-undefined"),
    ],
)
def test_metric_from_tables_closed_forms(table, metric, want):
    assert metric_from_tables(np.asarray(table), metric=metric) == pytest.approx(want, nan_ok=True)


def test_bad_options_name_themselves(small_cube):
    with pytest.raises(ValueError, match="metric 'kappa'"):
        agreement(small_cube, metric="kappa")
    with pytest.raises(ValueError, match="dim 'rater'"):
        agreement(small_cube, dim="rater")
    with pytest.raises(ValueError, match="unknown standard"):
        agreement(small_cube, standard="strictest")
    for fn in (agreement, agreement_ci):
        with pytest.raises(ValueError, match="scale 'interval'"):
            fn(small_cube, scale="interval")
        with pytest.raises(ValueError, match="by='judge'"):
            fn(small_cube, by="judge")
        with pytest.raises(ValueError, match="by='session'"):
            fn(small_cube, by="session")


def test_interval_estimate_is_the_agreement_itself(small_cube):
    out = agreement_ci(small_cube, metric="scott_pi", standard="clear_breach", by="principle", n_boot=20)
    want = agreement(small_cube, metric="scott_pi", standard="clear_breach", by="principle")
    np.testing.assert_array_equal(out["estimate"].values, want.values)
    np.testing.assert_array_equal(out["n_units"].values, want["n_units"].values)
    assert out["ci"].dims == ("judge", "judge_b", "principle", "ci_bound")


@settings(max_examples=40, deadline=None)
@given(
    data=hnp.arrays(np.int64, st.tuples(st.integers(4, 40), st.just(2)), elements=st.integers(-1, 2)),
    scale=st.sampled_from(["nominal", "ordinal"]),
)
def test_kernel_alpha_matches_krippendorff_on_random_ratings(data, scale):
    both = (data >= 0).all(axis=1)
    assume(len(np.unique(data[both])) >= 2 and both.sum() >= 2)
    tables = pair_tables(data, np.zeros(len(data), np.int64), np.zeros(len(data), np.int64), n_clusters=1, n_groups=1, k=3)
    got = metric_from_tables(tables[0, 0, 1, 0], metric="krippendorff_alpha", scale=scale)
    reliability = np.where(data.T >= 0, data.T, np.nan).astype(float)
    want = krippendorff.alpha(reliability_data=reliability, level_of_measurement=scale, value_domain=[0, 1, 2])
    assert got == pytest.approx(want, abs=1e-9)


# --- multi-rater metrics over a rater set ------------------------------------------------------


@pytest.mark.parametrize("standard, k", SCALES)
@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
def test_rater_set_alpha_matches_the_krippendorff_package(small_cube, standard, k, scale):
    raters = ["strict", "lenient", "blind"]
    got = agreement(small_cube, metric="krippendorff_alpha", standard=standard, scale=scale, raters=raters)
    flat = ratings(small_cube, standard=standard).sel(judge=raters).values.reshape(-1, 3)
    data = np.where(flat.T >= 0, flat.T, np.nan).astype(float)
    want = krippendorff.alpha(reliability_data=data, level_of_measurement=scale, value_domain=list(range(k)))
    assert got.ndim == 0
    assert float(got) == pytest.approx(want, abs=1e-9)
    assert got.attrs["n_units"] == int(((flat >= 0).sum(axis=1) >= 2).sum())
    assert got.attrs["n_rated"] == int(((flat >= 0).sum(axis=1) >= 1).sum())
    assert got.attrs["raters"] == raters


@pytest.mark.parametrize("standard, k", SCALES)
def test_rater_set_fleiss_kappa_matches_statsmodels(small_cube, standard, k):
    raters = ["strict", "lenient", "blind"]
    got = agreement(small_cube, metric="fleiss_kappa", standard=standard, raters=raters)
    flat = ratings(small_cube, standard=standard).sel(judge=raters).values.reshape(-1, 3)
    complete = flat[(flat >= 0).all(axis=1)]
    counts = np.stack([(complete == c).sum(axis=1) for c in range(k)], axis=1)
    assert float(got) == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-9)
    assert got.attrs["n_units"] == len(complete) < got.attrs["n_rated"]


def test_two_rater_fleiss_is_the_pairwise_scott_pi(small_cube):
    pair_pi = agreement(small_cube, metric="scott_pi").sel(judge="strict", judge_b="blind")
    pair_fleiss = agreement(small_cube, metric="fleiss_kappa").sel(judge="strict", judge_b="blind")
    both = agreement(small_cube.sel(judge=["strict", "blind"]), metric="fleiss_kappa", raters=["strict", "blind"])
    assert float(pair_fleiss) == pytest.approx(float(pair_pi), abs=1e-12)
    assert float(both) == pytest.approx(float(pair_pi), abs=1e-12)


def test_rater_set_by_principle_and_its_interval(small_cube):
    raters = ["strict", "lenient", "blind"]
    got = agreement_ci(small_cube, metric="krippendorff_alpha", raters=raters, by="principle", n_boot=50, seed=2)
    assert got["estimate"].dims == ("principle",)
    assert got["ci"].dims == ("principle", "ci_bound")
    lower, upper = got["ci"].sel(ci_bound="lower"), got["ci"].sel(ci_bound="upper")
    assert bool((lower <= got["estimate"] + 1e-12).all()) and bool((got["estimate"] <= upper + 1e-12).all())


@pytest.mark.parametrize("raters, metric, message", [
    pytest.param(["strict", "nobody"], "fleiss_kappa", "not values of 'judge'", id="unknown-rater"),
    pytest.param(["strict"], "krippendorff_alpha", "at least two distinct", id="one-rater"),
    pytest.param(["strict", "blind"], "cohen_kappa", "needs a multi-rater metric", id="pairwise-metric"),
])
def test_bad_rater_sets_name_the_problem(small_cube, raters, metric, message):
    with pytest.raises(ValueError, match=message):
        agreement(small_cube, metric=metric, raters=raters)


@pytest.mark.parametrize("raters", [pytest.param(None, id="pairwise"), pytest.param(["strict", "lenient", "blind"], id="rater-set")])
def test_bootstrap_blocks_do_not_change_the_draws(small_cube, monkeypatch, raters):
    from multiverse.analysis import _agreement_stats

    metric = "krippendorff_alpha"
    whole = agreement_ci(small_cube, metric=metric, raters=raters, n_boot=40, seed=5)
    monkeypatch.setattr(_agreement_stats, "CELLS_PER_BLOCK", 7)
    monkeypatch.setattr(_agreement_stats, "UNITS_PER_CHUNK", 11)
    blocks = agreement_ci(small_cube, metric=metric, raters=raters, n_boot=40, seed=5)
    np.testing.assert_allclose(blocks["ci"].values, whole["ci"].values, atol=1e-12)
    np.testing.assert_allclose(blocks["estimate"].values, whole["estimate"].values, atol=1e-12)


def test_severity_is_ordinal_by_default_and_standards_and_nominal_labels_are_nominal(small_cube):
    ordinal = agreement(small_cube, scale="ordinal")
    xr_equal = np.testing.assert_allclose
    xr_equal(agreement(small_cube).values, ordinal.values)
    assert agreement(small_cube).attrs["scale"] == "ordinal"
    xr_equal(agreement(small_cube, standard="clear_breach").values,
             agreement(small_cube, standard="clear_breach", scale="nominal").values)
    labelled = small_cube.assign_attrs(label_kind="nominal")
    xr_equal(agreement(labelled).values, agreement(small_cube, scale="nominal").values)
    binary = small_cube.assign_coords(scale=("judge", ["binary"] * small_cube.sizes["judge"]))
    assert agreement(binary).attrs["scale"] == "nominal"


def test_the_studentized_interval_of_a_normal_mean_is_the_t_interval():
    from scipy import stats

    from multiverse.analysis._bootstrap import cluster_weights, jackknife_se, studentized_interval

    x = np.random.default_rng(1).normal(size=300)
    weights = cluster_weights(300, n_boot=20_000, seed=3)
    draws = weights @ x / 300
    draw_se = np.sqrt((weights * (x - draws[:, None]) ** 2).sum(axis=1) / 300 / 299)  # the jackknife SE of a mean
    se = jackknife_se((x.sum() - x) / 299)
    assert se == pytest.approx(x.std(ddof=1) / np.sqrt(300), rel=1e-12)
    got = studentized_interval(draws, np.array(x.mean()), np.array(se), draw_se, ci=0.95)
    want = stats.t.interval(0.95, 299, loc=x.mean(), scale=se)
    np.testing.assert_allclose(got, want, atol=0.05 * se)


def test_intervals_resample_items_not_conversations(small_cube):
    whole = agreement_ci(small_cube, metric="cohen_kappa", standard="clear_breach", n_boot=200, seed=1)
    one_item = agreement_ci(small_cube.isel(item=[0]), metric="cohen_kappa", standard="clear_breach", n_boot=50)
    assert whole.attrs["cluster"] == "item" and "studentized" in whole.attrs["ci_method"]
    assert bool(one_item["ci"].isnull().all())  # one item: no jackknife, no standard error, no interval


def test_no_interval_when_kappa_is_undefined():
    cube = new_cube(system=["s"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=6, turn=2,
                    principle=["academic_integrity"], judge=["j", "k"])
    cube["severity"].values[...] = 0
    cube["severity"].values[..., 0, 0, 0, 0] = 2  # one breach, seen by j only, on one item of six
    out = agreement_ci(cube, metric="cohen_kappa", standard="clear_breach", n_boot=400, seed=0)
    pair = out.sel(judge="j", judge_b="k")
    assert float(pair["estimate"]) == pytest.approx(0.0)  # defined on the full sample
    assert float(pair["share_undefined"]) > 0.025  # about (5/6)^6 of item resamples miss the breach
    assert bool(pair["ci"].isnull().all())


def test_agreement_counts_the_units_a_pair_dropped_for_one_missing_rating(small_cube):
    values = ratings(small_cube)
    out = agreement(small_cube)
    for a, b in [("strict", "lenient"), ("strict", "blind")]:
        x, y = values.sel(judge=a).values.ravel(), values.sel(judge=b).values.ravel()
        assert int(out["n_units"].sel(judge=a, judge_b=b)) == int(((x >= 0) & (y >= 0)).sum())
        assert int(out["n_dropped"].sel(judge=a, judge_b=b)) == int(((x >= 0) != (y >= 0)).sum())
    assert (out["n_dropped"].values.diagonal() == 0).all()
    assert agreement_ci(small_cube, n_boot=20).attrs["n_items"] == small_cube.sizes["item"]

"""Specification curves: estimates, clustered errors, inference under the null, pooling rules."""

import numpy as np
import pytest
import statsmodels.api as sm
import xarray as xr

from multiverse.analysis.curve import clustered_influence, clustered_se, resampled_se, spec_curve
from multiverse.scoring import score


@pytest.fixture(scope="module")
def two_conditions(make_cube):
    return make_cube(
        systems={"a": 0.04, "b": 0.09}, judges={"j1": {}, "j2": {"leniency": 0.4}},
        conditions=("short", "long"), replicates=2, items=30, horizon=4, incomplete=0.05, seed=11,
    )


def test_estimate_is_the_mean_of_valid_conversations(two_conditions):
    scores = score(two_conditions, rules=["any_turn", "turn_mean"])
    out = spec_curve(scores, system="a", n_boot=50)
    spec = out.sel(condition="long").isel(role=0).where(
        (out.judge == "j2") & (out.standard == "persistent") & (out.rule == "turn_mean"), drop=True)
    manual = scores.sel(system="a", condition="long", judge="j2", standard="persistent", rule="turn_mean")
    assert float(spec.estimate.squeeze()) == pytest.approx(float(manual.mean()))
    assert int(spec.n_valid.squeeze()) == int(manual.notnull().sum())
    assert int(spec.n_excluded.squeeze()) == int((~manual["completed"]).sum())


def test_clustered_standard_error_matches_statsmodels(two_conditions):
    scores = score(two_conditions, standards="clear_breach", rules="any_turn")
    out = spec_curve(scores, system="b", n_boot=20)
    one = scores.sel(system="b", condition="short", judge="j1").squeeze()
    frame = one.to_dataframe(name="y").dropna(subset=["y"]).reset_index()
    fit = sm.OLS(frame["y"].values, np.ones(len(frame))).fit(cov_type="cluster", cov_kwds={"groups": frame["item"].values})
    got = out.se.sel(condition="short").where(out.judge == "j1", drop=True).squeeze()
    assert float(got) == pytest.approx(float(fit.bse[0]), rel=1e-9)


def test_estimand_dims_are_facets_and_units_are_not_pooled(two_conditions):
    out = spec_curve(two_conditions, contrast=("b", "a"), n_boot=30)
    assert {"role", "condition"} <= set(out.estimate.dims)
    assert "first_turn" not in set(out.rule.values)
    assert set(out.attrs["specification_dims"].split(",")) == {"user_sim", "judge", "standard", "rule"}
    turns = spec_curve(two_conditions, contrast=("b", "a"), unit="turns", null=0.0, n_boot=30)
    assert set(turns.rule.values) == {"first_turn"}


def test_a_planted_difference_is_detected(make_cube):
    cube = make_cube(systems={"a": 0.03, "b": 0.12}, items=40, replicates=2, horizon=4, seed=5)
    out = spec_curve(cube, contrast=("b", "a"), n_boot=300, direction="greater", seed=2)
    assert (out.p_value < 0.01).all()
    assert float(out.observed.sel(statistic="share_significant").squeeze()) > 0.5
    lower, upper = out.null_curve.sel(quantile=0.025), out.null_curve.sel(quantile=0.975)
    assert (lower <= upper).all()


def test_no_planted_difference_is_not_significant(make_cube):
    cube = make_cube(systems={"a": 0.06, "b": 0.06}, items=40, replicates=2, horizon=4, item_spread=0.0, seed=9)
    out = spec_curve(cube, contrast=("b", "a"), n_boot=300, seed=3)
    assert out.attrs["direction"] == "two-sided"
    assert float(out.p_value.sel(statistic="stouffer_z").squeeze()) > 0.05
    middle = out.null_curve.isel(rank_position=out.sizes["spec"] // 2).squeeze()
    assert float(middle.sel(quantile=0.025)) < 0 < float(middle.sel(quantile=0.975))


def test_same_draws_for_every_specification_keep_identical_specs_identical(two_conditions):
    scores = score(two_conditions, standards="clear_breach", rules="any_turn").sel(judge=["j1"])
    twin = xr.concat([scores, scores.assign_coords(judge=["copy"])], dim="judge")
    out = spec_curve(twin, system="a", n_boot=100)
    first, second = out.ci.isel(spec=0), out.ci.isel(spec=1)
    np.testing.assert_allclose(first.values, second.values)


def test_preferred_specification_and_ranks(two_conditions):
    out = spec_curve(two_conditions, system="a", n_boot=20, preferred={"judge": "j2", "standard": "any_deviation"})
    assert int(out.preferred.sum()) == 1
    marked = out.sel(spec=out.spec[out.preferred])
    assert str(marked.judge.item()) == "j2" and str(marked.standard.item()) == "any_deviation"
    ranks = out.position.isel(role=0, condition=0).values
    assert sorted(ranks) == list(range(out.sizes["spec"]))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        pytest.param({"system": "zz"}, "unknown system 'zz'", id="unknown-system"),
        pytest.param({}, "pick one with system=", id="several-systems-none-picked"),
        pytest.param({"system": "a", "contrast": ("a", "b")}, "not both", id="system-and-contrast"),
        pytest.param({"system": "a", "preferred": {"color": "x"}}, "not a specification dim", id="bad-preferred"),
        pytest.param({"system": "a", "direction": "up"}, "direction 'up'", id="bad-direction"),
        pytest.param({"system": "a", "cluster": "session"}, "no cluster dim 'session'", id="unknown-cluster"),
    ],
)
def test_bad_requests_name_the_problem(two_conditions, kwargs, message):
    with pytest.raises(ValueError, match=message):
        spec_curve(two_conditions, n_boot=5, **kwargs)


def test_a_unit_without_rules_is_refused(two_conditions):
    rates_only = score(two_conditions, rules=["any_turn", "turn_mean"])
    with pytest.raises(ValueError, match="no rule of unit 'turns'"):
        spec_curve(rates_only, system="a", unit="turns", n_boot=5)


@pytest.mark.parametrize("n_groups", [pytest.param(1, id="rate"), pytest.param(2, id="paired-difference")])
def test_resampled_standard_errors_equal_those_of_the_explicit_resample(n_groups):
    rng = np.random.default_rng(n_groups)
    groups = [(rng.integers(0, 4, (9, 3)).astype(float), np.full((9, 3), 4.0)) for _ in range(n_groups)]
    groups[0][1][2] = 0.0  # a cluster without data
    groups[0][0][2] = 0.0
    weights = rng.multinomial(9, np.full(9, 1 / 9), size=5)
    draws, se = resampled_se(groups, weights)
    for d, w in enumerate(weights):
        picked = np.repeat(np.arange(9), w)
        estimate, influence = 0.0, 0.0
        for sign, (sums, counts) in zip((1, -1), groups):
            est, infl = clustered_influence(sums[picked], counts[picked])
            estimate, influence = estimate + sign * est, influence + sign * infl
        total = sum(c[picked] for _, c in groups)
        np.testing.assert_allclose(draws[d], estimate, rtol=1e-6)
        np.testing.assert_allclose(se[d], clustered_se(influence, total), rtol=1e-5)


def test_p_values_are_never_zero_and_directions_must_be_declared(make_cube):
    cube = make_cube(systems={"a": 0.02, "b": 0.2}, items=20, replicates=1, horizon=4, seed=4)
    out = spec_curve(cube, contrast=("b", "a"), n_boot=99, direction="greater")
    assert float(out.p_value.min()) == pytest.approx(1 / 100)
    with pytest.raises(ValueError, match="direction 'auto'"):
        spec_curve(cube, contrast=("b", "a"), n_boot=9, direction="auto")


def test_two_sided_summaries_do_not_depend_on_the_order_of_the_contrast(make_cube):
    cube = make_cube(systems={"a": 0.04, "b": 0.07}, items=20, replicates=2, horizon=4, seed=8)
    ab = spec_curve(cube, contrast=("a", "b"), n_boot=200, seed=1)
    ba = spec_curve(cube, contrast=("b", "a"), n_boot=200, seed=1)
    np.testing.assert_allclose(ab.p_value.values, ba.p_value.values)
    np.testing.assert_allclose(ab.observed.sel(statistic="median_estimate").values,
                               -ba.observed.sel(statistic="median_estimate").values)


@pytest.mark.parametrize("items", [pytest.param(12, id="12-items"), pytest.param(30, id="30-items")])
def test_false_positive_rates_under_a_planted_null_are_near_five_percent(items):
    from scipy import stats

    from multiverse.analysis._bootstrap import cluster_weights
    from multiverse.analysis.curve import curve_kernel

    m, scale = 300, np.array([1.0, 0.8, 0.5, 0.3])  # four correlated specifications
    rng = np.random.default_rng(items)
    rejected = np.zeros(3)
    for seed in range(m):  # the numpy kernel directly; python -m benchmarks.coverage runs the whole path
        p = np.clip(0.4 * np.exp(rng.normal(0, 0.5, (items, 1))) * scale, 0, 1)
        groups = [(rng.binomial(2, p).astype(float), np.full((items, 4), 2.0)) for _ in range(2)]
        weights = cluster_weights(items, n_boot=199, seed=seed)
        out = curve_kernel(groups, weights, null=0.0, direction=0, alpha=0.05, ci=0.95, rng=rng)
        rejected += out["p_value"] < 0.05
    for statistic, hits in zip(("median", "share", "stouffer"), rejected):
        # a 99% Clopper-Pearson interval, Bonferroni over the three tests: the share of four
        # specifications takes five values, and its test must still reach 5%, not stay below
        low = stats.beta.ppf(0.01 / 6, hits, m - hits + 1) if hits else 0.0
        high = stats.beta.ppf(1 - 0.01 / 6, hits + 1, m - hits)
        assert low <= 0.05 <= high, (statistic, rejected / m)


def test_ties_with_the_observed_summary_are_broken_at_random():
    from multiverse.analysis._bootstrap import resampling_p_value

    null = np.array([[0.0], [0.25], [0.25], [0.5]])  # a discrete statistic: two draws tie with 0.25
    draws = np.array([resampling_p_value(null, np.array([0.25]), rng=np.random.default_rng(s))[0] for s in range(400)])
    # (1 + 1 more extreme + U * 2 tied) / 5: uniform between 2/5 and 4/5
    assert draws.min() >= 2 / 5 and draws.max() <= 4 / 5
    assert draws.mean() == pytest.approx(3 / 5, abs=0.02)
    continuous = resampling_p_value(np.array([[0.1], [0.3], [0.7]]), np.array([0.5]), rng=np.random.default_rng(0))
    assert continuous[0] == pytest.approx(2 / 4)


def test_a_median_without_sampling_variation_at_the_null_is_no_evidence():
    """Specifications at the median that never vary (both rates 0) must not give a tiny p-value."""
    from multiverse.analysis._bootstrap import cluster_weights
    from multiverse.analysis.curve import curve_kernel

    rng = np.random.default_rng(3)
    items = 20
    varying = [(rng.binomial(2, 0.3, (items, 2)).astype(float), np.full((items, 2), 2.0)) for _ in range(2)]
    constant = (np.zeros((items, 3)), np.full((items, 3), 2.0))  # three specs with rate 0 in both systems
    groups = [(np.hstack([s, constant[0]]), np.hstack([c, constant[1]])) for s, c in varying]
    out = curve_kernel(groups, cluster_weights(items, n_boot=199, seed=1), null=0.0, direction=1, alpha=0.05, ci=0.95,
                       rng=np.random.default_rng(0))
    assert out["observed"][0] == 0.0
    # all null medians tie with the observed 0: the randomised p is far from the smallest, 1 / 200
    assert out["p_value"][0] > 0.02


@pytest.mark.parametrize(
    "null, observed, expected",
    [
        pytest.param([[0.0], [1.0], [np.nan]], [0.5], [2 / 3], id="undefined-draws-are-not-counted"),
        pytest.param([[0.0], [1.0]], [np.nan], [np.nan], id="undefined-observed-has-no-p-value"),
        pytest.param([[np.nan], [np.nan]], [0.0], [np.nan], id="no-finite-draw-has-no-p-value"),
    ],
)
def test_resampling_p_values_never_turn_undefined_statistics_into_evidence(null, observed, expected):
    from multiverse.analysis._bootstrap import resampling_p_value

    np.testing.assert_allclose(resampling_p_value(np.array(null), np.array(observed), rng=np.random.default_rng(0)), expected)

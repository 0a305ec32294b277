"""Specification curves: estimates, clustered errors, inference under the null, pooling rules."""

import numpy as np
import pytest
import statsmodels.api as sm
import xarray as xr

from multiverse.analysis.curve import spec_curve
from multiverse.score import score


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
    out = spec_curve(cube, contrast=("b", "a"), n_boot=300, direction="greater", seed=3)
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

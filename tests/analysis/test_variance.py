"""Variance decomposition: sums of squares against statsmodels, planted components, decision studies."""

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
import xarray as xr
from statsmodels.stats.anova import anova_lm

from multiverse.analysis.variance import anova_table, decision_study, variance_components, variance_decomposition
from multiverse.scoring import score


def test_sums_of_squares_match_statsmodels_on_a_balanced_design():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(3, 4, 2)) + np.arange(3)[:, None, None] * 0.5
    table = anova_table(values)
    frame = pd.DataFrame(
        [(a, b, c, values[a, b, c]) for a, b, c in itertools.product(range(3), range(4), range(2))],
        columns=["a", "b", "c", "y"],
    )
    fit = smf.ols("y ~ C(a) + C(b) + C(c) + C(a):C(b) + C(a):C(c) + C(b):C(c)", frame).fit()
    reference = anova_lm(fit, typ=1)
    names = {(0,): "C(a)", (1,): "C(b)", (2,): "C(c)", (0, 1): "C(a):C(b)", (0, 2): "C(a):C(c)", (1, 2): "C(b):C(c)"}
    for effect, name in names.items():
        assert table[effect][0] == pytest.approx(reference.loc[name, "sum_sq"], abs=1e-9)
        assert table[effect][1] == reference.loc[name, "df"]
    assert table[(0, 1, 2)][0] == pytest.approx(reference.loc["Residual", "sum_sq"], abs=1e-9)


def test_planted_variance_components_are_recovered():
    rng = np.random.default_rng(1)
    rows, cols = 200, 150
    values = (rng.normal(0, 2.0, (rows, 1)) + rng.normal(0, 1.0, (1, cols)) + rng.normal(0, 0.5, (rows, cols)))
    sigma = variance_components(values)
    assert sigma[(0,)] == pytest.approx(4.0, rel=0.25)
    assert sigma[(1,)] == pytest.approx(1.0, rel=0.3)
    assert sigma[(0, 1)] == pytest.approx(0.25, rel=0.1)


def test_blind_judge_takes_the_largest_share(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn")
    out = variance_decomposition(scores)
    assert str(out.share.idxmax("component").item()) == "judge"
    assert float(out.share.sum()) == pytest.approx(1.0)
    assert set(out.attrs["facets"].split(",")) == {"system", "replicate", "user_sim", "judge"}


def test_without_the_blind_judge_the_systems_dominate(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn").sel(judge=["sharp", "keen"])
    out = variance_decomposition(scores)
    assert float(out.share.sel(component="system")) > float(out.share.sel(component="judge"))


def test_decision_study_closed_form_and_monotone():
    decomposition = xr.Dataset(
        {"effect_variance": ("effect", [4.0, 1.0, 2.0])},
        coords={"effect": ["system", "judge", "system:judge"]},
        attrs={"facets": "system,judge", "sizes": "3,2"},
    )
    rel = decision_study(decomposition, vary="judge", n=[1, 2, 4], target=0.75)
    np.testing.assert_allclose(rel.values, [4 / 6, 4 / 5, 4 / 4.5])
    assert rel.attrs["n_needed"] == 2
    absolute = decision_study(decomposition, vary="judge", n=[1], kind="absolute")
    assert float(absolute.squeeze()) == pytest.approx(4 / 7)


def test_decision_study_on_a_cube(blind_judge_cube):
    out = variance_decomposition(score(blind_judge_cube, standards="clear_breach", rules="any_turn"))
    rel = decision_study(out, vary="replicate", n=range(1, 6))
    assert (np.diff(rel.values) >= 0).all()
    with pytest.raises(ValueError, match="vary='color'"):
        decision_study(out, vary="color")


def test_needs_two_facets(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn").isel(system=[0], replicate=[0], user_sim=[0], judge=[0])
    with pytest.raises(ValueError, match="at least two facets"):
        variance_decomposition(scores)


def crossed_table(sizes, seed, *, empty=0.2):
    """A planted crossed table (every component 1.0) with a share of empty cells."""
    rng = np.random.default_rng(seed)
    axes = range(len(sizes))
    effects = [e for order in range(1, len(sizes) + 1) for e in itertools.combinations(axes, order)]
    values = sum(rng.normal(0, 1, [s if i in e else 1 for i, s in enumerate(sizes)]) for e in effects)
    values[rng.random(sizes) < empty] = np.nan
    return values


@pytest.mark.parametrize("seed", [pytest.param(5, id="twenty-percent-empty-a"),
                                  pytest.param(6, id="twenty-percent-empty-b")])
def test_reml_with_empty_cells_matches_statsmodels_mixedlm(seed):
    import warnings

    import statsmodels.api as sm
    from threadpoolctl import threadpool_limits

    from multiverse.analysis._reml import reml_components

    table = crossed_table((8, 6, 5), seed)
    got = reml_components(table)
    at = np.argwhere(~np.isnan(table))
    frame = pd.DataFrame({"y": table[~np.isnan(table)], "a": at[:, 0], "b": at[:, 1], "c": at[:, 2], "g": 1})
    parts = {"a": (0,), "b": (1,), "c": (2,), "ab": (0, 1), "ac": (0, 2), "bc": (1, 2)}
    formulas = {name: "0 + " + ":".join(f"C({'abc'[i]})" for i in effect) for name, effect in parts.items()}
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore")
        fit = sm.MixedLM.from_formula("y ~ 1", frame, groups="g", re_formula="0", vc_formula=formulas).fit(
            reml=True, method=["lbfgs"], maxiter=5000)
    reference = dict(zip(fit.model.exog_vc.names, fit.vcomp))
    for name, effect in parts.items():
        assert got[effect] == pytest.approx(reference[name], abs=0.05), name
    assert got[(0, 1, 2)] == pytest.approx(fit.scale, abs=0.05)


def test_reml_equals_the_closed_form_on_a_complete_table_with_positive_components():
    from multiverse.analysis._reml import reml_components

    table = crossed_table((8, 6, 5), 5, empty=0.0)
    closed = variance_components(table)
    assert min(closed.values()) > 0
    for effect, value in reml_components(table).items():
        assert value == pytest.approx(closed[effect], rel=1e-3, abs=1e-4)


def test_empty_cells_are_not_imputed(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn")
    complete = variance_decomposition(scores)
    holes = scores.where(~((scores.judge == "keen") & (scores.replicate == 1) & (scores.system == "b")))
    out = variance_decomposition(holes)
    assert out.attrs["n_empty"] == 2 and str(out["method"].item()) == "reml"  # two user simulators
    assert str(complete["method"].item()) == "anova" and complete.attrs["n_empty"] == 0
    assert float(out.share.sum()) == pytest.approx(1.0)
    assert str(out.share.idxmax("component").item()) == "judge"

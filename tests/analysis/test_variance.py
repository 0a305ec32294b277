"""Variance decomposition: sums of squares against statsmodels, planted components, decision studies."""

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
import xarray as xr
from statsmodels.stats.anova import anova_lm

from multiverse.analysis.variance import anova_table, decision_study, variance_components, variance_decomposition
from multiverse.score import score


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

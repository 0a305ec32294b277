"""Variance decomposition: sums of squares against statsmodels, planted components, decision studies."""

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
import xarray as xr
from statsmodels.stats.anova import anova_lm
from threadpoolctl import threadpool_limits

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


def mixedlm_model(table):
    """statsmodels' MixedLM of the crossed model: one variance component per effect below the top."""
    import statsmodels.api as sm

    letters = "abcdefgh"[: table.ndim]
    at = np.argwhere(~np.isnan(table))
    frame = pd.DataFrame({"y": table[~np.isnan(table)], **{c: at[:, i] for i, c in enumerate(letters)}, "g": 1})
    parts = {"".join(letters[i] for i in e): e for o in range(1, table.ndim) for e in itertools.combinations(range(table.ndim), o)}
    formulas = {name: "0 + " + ":".join(f"C({letters[i]})" for i in effect) for name, effect in parts.items()}
    model = sm.MixedLM.from_formula("y ~ 1", frame, groups="g", re_formula="0", vc_formula=formulas)
    return model, [parts[name] for name in model.exog_vc.names]


def mixedlm_reml(table):
    """statsmodels' MixedLM REML fit of the crossed model (one variance component per effect below the top).

    BFGS at gradient tolerance 1e-10: statsmodels' default L-BFGS stops about
    1e-4 (relative) short of the optimum on these tables; BFGS run this far
    reaches a log-likelihood no fit improves on (it then reports a precision
    warning, not a failure).
    """
    model, effects = mixedlm_model(table)
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore")
        fit = model.fit(reml=True, method=["bfgs"], gtol=1e-10, maxiter=5000)
    return {**dict(zip(effects, fit.vcomp)), tuple(range(table.ndim)): fit.scale}


@pytest.mark.parametrize(
    ("sizes", "seed"),
    [
        pytest.param((8, 6, 5), 5, id="three-facets-twenty-percent-empty-a"),
        pytest.param((8, 6, 5), 6, id="three-facets-twenty-percent-empty-b"),
    ],
)
def test_reml_with_empty_cells_matches_statsmodels_mixedlm_to_1e4(sizes, seed):
    from multiverse.analysis._reml import reml_components

    table = crossed_table(sizes, seed)
    got, reference = reml_components(table), mixedlm_reml(table)
    assert min(reference.values()) > 0.05  # every planted component is 1: none on the boundary
    for effect, value in reference.items():
        assert got[effect] == pytest.approx(value, rel=1e-4), effect


def test_reml_holds_a_component_without_variance_at_zero_as_mixedlm_does():
    from multiverse.analysis._reml import reml_components

    rng = np.random.default_rng(35)
    sizes = (7, 6, 4)
    # no b effect and no a:c interaction planted; the c effect comes out at zero
    table = (rng.normal(0, 1, (7, 1, 1)) + rng.normal(0, 1, (1, 1, 4)) + rng.normal(0, 0.8, (7, 6, 1))
             + rng.normal(0, 0.8, (1, 6, 4)) + rng.normal(0, 1, sizes))
    table[rng.random(sizes) < 0.25] = np.nan
    got, reference = reml_components(table), mixedlm_reml(table)
    total = sum(reference.values())
    assert got[(2,)] == 0.0 and reference[(2,)] < 1e-6 * total
    for effect, value in reference.items():
        assert got[effect] == pytest.approx(value, rel=1e-4, abs=1e-6 * total), effect


def test_reml_on_four_facets_reaches_a_likelihood_mixedlm_does_not_exceed():
    """On four facets (14 components, several on the boundary) MixedLM's optimisers stop short of the optimum.

    So the REML fit is checked with statsmodels' own restricted log-likelihood:
    at the fitted components it is at least MixedLM's at MixedLM's solution.
    Components at zero are nudged to 1e-4 of the residual, where statsmodels'
    log-likelihood stays accurate (it loses precision at exact zeros).
    """
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    from multiverse.analysis._reml import reml_components

    table = crossed_table((5, 4, 4, 3), 11)
    got = reml_components(table)
    model, effects = mixedlm_model(table)
    scale = got[(0, 1, 2, 3)]
    ratios = np.maximum([got[e] / scale for e in effects], 1e-4)
    with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("ignore")
        fit = model.fit(reml=True, method=["bfgs"], gtol=1e-10, maxiter=5000)
        at_ours = model.loglike(MixedLMParams.from_components(fe_params=np.zeros(1), cov_re=np.zeros((0, 0)),
                                                              vcomp=ratios), profile_fe=True)
    assert min(got.values()) == 0.0
    assert at_ours >= fit.llf


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


def test_a_level_without_any_estimate_is_left_out_of_the_design(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn")
    dropped = variance_decomposition(scores.sel(judge=["sharp", "keen"]))
    # the blind judge has no estimate at all: e.g. a judge that does not rule on a role
    silent = variance_decomposition(scores.where(scores.judge != "blind"))
    assert str(silent["method"].item()) == "anova" and silent.attrs["n_empty"] == 0
    np.testing.assert_allclose(silent["effect_variance"].values, dropped["effect_variance"].values, rtol=1e-12)
    assert int(silent["levels"].sel(facet="judge")) == 2


def test_each_group_keeps_its_own_design():
    rng = np.random.default_rng(4)
    values = rng.normal(size=(2, 4, 3, 5))  # role x system x judge x replicate
    values[0, :, 2, :] = np.nan  # the third judge does not rule on the first role
    estimates = xr.DataArray(values, dims=("role", "system", "judge", "replicate"),
                             coords={"role": ["r0", "r1"], "judge": ["j0", "j1", "j2"]})
    out = variance_decomposition(estimates)
    assert out["levels"].sel(facet="judge").values.tolist() == [2, 3]
    assert out["method"].values.tolist() == ["anova", "anova"]
    alone = variance_decomposition(estimates.sel(role="r0", judge=["j0", "j1"]))
    np.testing.assert_allclose(out["effect_variance"].sel(role="r0").values, alone["effect_variance"].values, rtol=1e-12)
    rel = decision_study(out, vary="replicate", n=[3])
    expected = [float(decision_study(variance_decomposition(estimates.sel(role=r).dropna("judge", how="all")),
                                     vary="replicate", n=[3]).squeeze()) for r in ("r0", "r1")]
    np.testing.assert_allclose(rel.squeeze("n").values, expected, rtol=1e-12)


def test_a_facet_with_one_level_in_a_group_has_no_components():
    rng = np.random.default_rng(8)
    values = rng.normal(size=(2, 4, 3, 5))
    values[0, :, 1:, :] = np.nan  # one judge left for the first role
    estimates = xr.DataArray(values, dims=("role", "system", "judge", "replicate"), coords={"role": ["r0", "r1"]})
    out = variance_decomposition(estimates)
    first = out["effect_variance"].sel(role="r0")
    judged = [str(e) for e in out["effect"].values if "judge" in str(e).split(":")]
    assert np.isnan(first.sel(effect=judged)).all()
    assert np.isfinite(first.sel(effect=["system", "replicate"])).all()
    assert float(out["share"].sel(role="r0").sum()) == pytest.approx(1.0)


def test_the_decomposition_counts_the_conversations_and_items_it_used_and_dropped(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules=["any_turn", "targeted_principle"])
    masked = scores.where(~((scores["item"] == scores["item"][0]) & (scores.system == "a")))
    out = variance_decomposition(masked)
    total = scores.size  # every conversation under every judge and rule
    left_out = scores.sizes["replicate"] * scores.sizes["user_sim"] * scores.sizes["judge"] * 2  # item 0 of system a
    assert int(out["n_used"]) + int(out["n_excluded"]) + int(out["n_not_ruled"]) == total
    assert int(out["n_excluded"]) == left_out - int((scores["status"] == 2).sel(system="a").isel(item=0).sum())
    assert 0 < int(out["n_imputed"]) < int(out["n_used"])  # the sharp judge's missing judgments, imputed
    assert int(out["n_items"]) == scores.sizes["item"]  # item 0 is still used by systems b and c


def test_each_group_counts_its_own_conversations(blind_judge_cube):
    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn")
    fewer = scores.isel(item=slice(0, 10))
    two = xr.concat([scores, fewer], dim="condition", join="outer").assign_coords(condition=["x", "y"])
    out = variance_decomposition(two)
    per_condition = scores.isel(rule=0).size
    assert out["n_used"].sel(condition="x") == per_condition
    alone = variance_decomposition(fewer)
    assert int(out["n_used"].sel(condition="y")) == int(alone["n_used"]) < per_condition
    assert list(out["n_items"].values) == [scores.sizes["item"], 10]

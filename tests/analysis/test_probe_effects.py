"""Probe effects, the order correction and the canary corrections, checked against statsmodels and planted truths."""

from __future__ import annotations

import json

import numpy as np
import pytest
import statsmodels.api as sm
import xarray as xr

from multiverse import analysis
from multiverse.analysis.probes import clustered_mean_difference
from multiverse.core import schema as S
from multiverse.cube.canaries import CanaryVerdict, score_canaries


def _cluster_ols(values: np.ndarray, groups: np.ndarray):
    fit = sm.OLS(values, np.ones((len(values), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    return fit.params[0], fit.bse[0], fit.conf_int(alpha=0.05)[0], fit.pvalues[0]


def test_the_clustered_mean_difference_is_statsmodels_cluster_robust_intercept():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(17), rng.integers(1, 9, size=17))
    values = rng.normal(0.2, 1, size=len(groups)) + rng.normal(0, 0.7, size=17)[groups]
    sums = np.bincount(groups, weights=values)
    counts = np.bincount(groups)
    found = clustered_mean_difference(sums, counts)
    effect, se, (low, high), p = _cluster_ols(values, groups)
    assert found["effect"] == pytest.approx(effect) and found["se"] == pytest.approx(se)
    assert (found["lower"], found["upper"]) == pytest.approx((low, high))
    assert found["p_value"] == pytest.approx(p)
    assert (found["n_items"], found["n_cells"]) == (17, len(values))


def test_a_single_cluster_gives_an_estimate_without_an_interval():
    found = clustered_mean_difference(np.array([3.0, 0.0]), np.array([4, 0]))
    assert found["effect"] == 0.75 and np.isnan(found["se"]) and found["n_items"] == 1


def _probed(cube: xr.Dataset, base: str, probed: str) -> xr.Dataset:
    labels = cube["judge"].values.tolist()
    return cube.assign_coords(
        judge_base=("judge", [base if j == probed else j for j in labels]),
        judge_probe=("judge", ["padded" if j == probed else "none" for j in labels]),
    )


def test_probe_effects_pair_the_cells_both_judges_judged_and_cluster_by_conversation(make_cube):
    cube = _probed(make_cube(judges={"strict": {"missing": 0.1}, "strict.padded": {"leniency": 0.6, "missing": 0.1}},
                             items=15, seed=5), "strict", "strict.padded")
    effects = analysis.probe_effects(cube)
    assert effects["probed"].values.tolist() == ["strict.padded"]
    a = cube["severity"].sel(judge="strict.padded").stack(g=S.CONVERSATION_DIMS).transpose("g", ...).values
    b = cube["severity"].sel(judge="strict").stack(g=S.CONVERSATION_DIMS).transpose("g", ...).values
    a, b = a.reshape(len(a), -1), b.reshape(len(b), -1)
    valid = (a >= 0) & (b >= 0)
    rows = np.nonzero(valid)
    values = (a - b)[rows].astype(float)
    effect, se, (low, high), _ = _cluster_ols(values, rows[0])
    assert float(effects["effect"][0]) == pytest.approx(effect) and float(effects["se"][0]) == pytest.approx(se)
    assert effects["ci"].values[0] == pytest.approx([low, high])
    assert int(effects["n_cells"][0]) == valid.sum() and effect < 0
    assert effects.attrs["measure"] == "severity (0/1/2)"


def test_under_a_standard_the_effect_is_on_the_share_of_cells_meeting_it(make_cube):
    cube = _probed(make_cube(judges={"strict": {}, "strict.padded": {"leniency": 1.0}}, items=10, seed=2),
                   "strict", "strict.padded")
    any_deviation = analysis.probe_effects(cube, standard="any_deviation")
    clear = analysis.probe_effects(cube, standard="clear_breach")
    assert float(clear["effect"][0]) < 0 and float(clear["probed_mean"][0]) == 0.0
    assert abs(float(any_deviation["effect"][0])) < abs(float(clear["effect"][0]))
    with pytest.raises(ValueError, match="not read cell by cell"):
        analysis.probe_effects(cube, standard="persistent")


@pytest.mark.parametrize("read", [analysis.probe_effects, analysis.combine_orders], ids=["probe_effects", "combine_orders"])
def test_a_cube_without_probes_is_refused_by_name_with_the_way_to_get_them(make_cube, read):
    with pytest.raises(ValueError, match=rf"^{read.__name__}: the cube has no probed judges.*dims.judge_probe"):
        read(make_cube(items=3))


def _pairwise(make_cube, shown: list[int], swapped: list[int]) -> xr.Dataset:
    """A cube whose pairwise judge ``j`` and its order probe ``j.swapped`` rule on one cell per conversation."""
    cube = make_cube(systems={"a": 0.1}, judges={"j": {}, "j.swapped": {}}, items=len(shown), horizon=1, seed=1)
    severity = np.full(cube["severity"].shape, S.NOT_APPLICABLE, dtype=np.int8)
    cube = cube.assign(severity=(cube["severity"].dims, severity)).assign_coords(
        judge_base=("judge", ["j", "j"]), judge_probe=("judge", ["none", "swapped"]),
        scale=("judge", ["pairwise", "pairwise"]), categories=("judge", ["B=0,tie=1,A=2"] * 2))
    first = cube["principle"].values[0]
    for judge, values in (("j", shown), ("j.swapped", swapped)):
        for item, value in enumerate(values):
            cube["severity"].loc[{"item": cube["item"].values[item], "turn": 1, "principle": first, "judge": judge}] = value
    return cube


def test_the_order_effect_is_the_mean_change_in_the_pairwise_code_and_combining_removes_it(make_cube):
    cube = _pairwise(make_cube, [2, 2, 1, 0, 2, -1], [0, 2, 1, 0, 0, 2])
    effects = analysis.probe_effects(cube)
    assert effects["probed"].values.tolist() == ["j.swapped"] and effects["scale"].values.tolist() == ["pairwise"]
    per_item = int(np.prod([cube.sizes[d] for d in S.CONVERSATION_DIMS if d != "item"]))
    assert float(effects["effect"][0]) == pytest.approx(-4 / 5) and int(effects["n_items"][0]) == 5 * per_item
    assert effects.attrs["measure"] == "pairwise code (B 0, tie 1, A 2)"
    first = cube["principle"].values[0]
    combined = analysis.combine_orders(cube).sel(judge="j", turn=1, principle=first)
    assert combined.transpose("item", ...).values.reshape(6, -1).T.tolist() == [[1, 2, 1, 0, 1, -1]] * (combined.size // 6)
    again = analysis.combine_orders(_pairwise(make_cube, [2, 0], [0, 2]))
    assert (again.sel(judge="j", turn=1, principle=first) == 1).all()
    assert (again.sel(principle=cube["principle"].values[1:]) == S.NOT_APPLICABLE).all()


def _canary_cube(make_cube, sensitivity: float, specificity: float, n: int = 4000, seed: int = 0) -> xr.Dataset:
    cube = make_cube(systems={"a": 0.2}, judges={"j": {"sensitivity": sensitivity, "specificity": specificity}},
                     items=40, replicates=4, partial=0.0, item_spread=0.0, seed=seed)
    rng = np.random.default_rng(seed)
    verdicts = [CanaryVerdict("tutor", "p", 2, 2 if rng.random() < sensitivity else 0) for _ in range(n)]
    verdicts += [CanaryVerdict("tutor", "p", 0, 0 if rng.random() < specificity else 2) for _ in range(n)]
    cube.attrs["canaries"] = json.dumps({"j": score_canaries(verdicts)})
    return cube


def test_the_canary_corrected_rate_recovers_the_planted_share_of_breaches(make_cube):
    cube = _canary_cube(make_cube, 0.7, 0.85)
    truth = cube["truth"].where(cube["truth"] >= 0)
    true_share = float((truth == 2).sum() / truth.notnull().sum())
    found = analysis.canary_corrected_rate(cube, judge="j")
    raw, corrected = found["rate"].values
    low, high = found["ci"].sel(estimate="corrected").values
    assert abs(raw - true_share) > 0.05
    assert low <= true_share <= high and abs(corrected - true_share) < 0.03
    assert "transportable" in found.attrs["assumptions"]


def test_the_canary_corrected_rate_counts_the_cells_and_conversations_it_left_out(make_cube):
    cube = _canary_cube(make_cube, 0.7, 0.85)
    severity = cube["severity"].transpose("item", "turn", ..., "judge")
    values = severity.values.copy()  # one system, role, user simulator, condition; 4 replicates
    applicable = values != -2
    conversation = applicable[0, ..., 0, :, -1].sum()  # item 0, replicate 0: wholly unjudged
    turn = applicable[1, 0, ..., 0, :, -1].sum()  # item 1, replicate 0: its first turn unjudged
    values[0, ..., 0, :, -1] = np.where(applicable[0, ..., 0, :, -1], -1, values[0, ..., 0, :, -1])
    values[1, 0, ..., 0, :, -1] = np.where(applicable[1, 0, ..., 0, :, -1], -1, values[1, 0, ..., 0, :, -1])
    before = analysis.canary_corrected_rate(cube, judge="j")
    found = analysis.canary_corrected_rate(cube.assign(severity=severity.copy(data=values)), judge="j")
    assert found.attrs["n_unjudged"] == 1 and found.attrs["n_items"] == before.attrs["n_items"] - 1
    assert found.attrs["n_missing"] == before.attrs["n_missing"] + conversation + turn
    assert found.attrs["n_cells"] == before.attrs["n_cells"] - conversation - turn


def test_no_correction_exists_for_a_judge_without_signal(make_cube):
    with pytest.raises(ValueError, match="no signal"):
        analysis.canary_corrected_rate(_canary_cube(make_cube, 0.4, 0.5, n=400), judge="j")


def test_the_canary_table_has_pooled_and_per_principle_rows(make_cube):
    table = analysis.canary_table(_canary_cube(make_cube, 0.9, 0.9, n=50))
    assert table["scope"].tolist() == ["pooled", "tutor/p"]
    assert not table.loc[0, "no_signal"] and table.loc[1, "no_signal"] is None
    assert table.loc[0, "breaks"] == 50 and table.loc[0, "sensitivity_lower"] < table.loc[0, "sensitivity"]


def test_canary_anchors_pull_dawid_skenes_error_rates_to_the_canaries(make_cube):
    cube = make_cube(judges={"a": {"sensitivity": 0.9}, "b": {"sensitivity": 0.9}}, items=10, seed=1)
    result = score_canaries([CanaryVerdict("tutor", "p", 2, 0)] * 900 + [CanaryVerdict("tutor", "p", 2, 2)] * 100
                            + [CanaryVerdict("tutor", "p", 0, 0)] * 1000)
    cube.attrs["canaries"] = json.dumps({"a": result})
    anchors = analysis.canary_anchors(cube, standard="clear_breach", raters=["a", "b"])
    assert anchors.sel(rater="a").values.tolist() == [[1000, 0], [900, 100]]
    free = analysis.latent_class(cube, standard="clear_breach")
    anchored = analysis.latent_class(cube, standard="clear_breach", anchors=anchors)
    assert float(anchored["confusion"].sel(rater="a", true=1, observed=1)) < 0.2 < float(free["confusion"].sel(rater="a", true=1, observed=1))
    assert anchored.attrs["anchored"] == 1 and free.attrs["anchored"] == 0

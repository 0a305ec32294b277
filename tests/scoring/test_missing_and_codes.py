"""Missing judgments: decided verdicts, estimates under missing at random, worst-case bounds, codes, recorded choices."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml
from scipy import stats

import multiverse
from multiverse.analysis._synthetic import expected_rates, planted_cube
from multiverse.scoring import score, score_bounds, score_counts, standard_codes
from multiverse.scoring.estimate import terms_of

SPECS = Path(__file__).resolve().parents[2] / "specs"
BASE, HORIZON, PRINCIPLES = 0.015, 4, 4
JUDGE = {"specificity": 0.99}  # conversation-level rates near 0.3


def masked_pair(share: float, seed: int, *, items: int = 30, per_cell: bool = False, min_turns: int | None = None,
                horizon: int = HORIZON):
    """A complete cube and the same cube with a share of judge responses (whole turns), or of cells, missing."""
    kwargs = dict(systems={"a": BASE}, judges={"j": JUDGE}, replicates=1, items=items, horizon=horizon,
                  min_turns=min_turns, seed=seed)
    complete = planted_cube(**kwargs)
    shape = complete["severity"].shape
    lost = np.random.default_rng(10_000 + seed).random(shape if per_cell else shape[:-2] + (1, 1)) < share
    severity = complete["severity"].values
    masked = complete.copy()
    masked["severity"] = complete["severity"].copy(data=np.where(lost & (severity != -2), np.int8(-1), severity))
    return complete, masked


def rate(cube, missing="mar"):
    return score(cube, standards="clear_breach", rules="any_turn", missing=missing).squeeze(drop=True)


def per_cube(scores, m):
    """Each of ``m`` cubes' estimated rate and the values behind it (cubes laid end to end along ``item``)."""
    numerator, weight = terms_of(scores)
    numerator, weight = numerator.values.reshape(m, -1), weight.values.reshape(m, -1)
    return numerator.sum(axis=1) / weight.sum(axis=1), numerator, weight


def clopper_pearson(hits: int, m: int, level: float = 0.99) -> tuple[float, float]:
    tail = (1 - level) / 2
    low = stats.beta.ppf(tail, hits, m - hits + 1) if hits else 0.0
    high = stats.beta.ppf(1 - tail, hits + 1, m - hits) if hits < m else 1.0
    return float(low), float(high)


@pytest.mark.parametrize("share, per_cell", [pytest.param(0.05, False, id="five-percent-of-responses-missing"),
                                             pytest.param(0.20, False, id="twenty-percent-of-responses-missing"),
                                             pytest.param(0.10, True, id="ten-percent-of-cells-missing")])
def test_default_rate_is_unbiased_and_its_standard_error_fits_its_spread_under_missing_at_random(share, per_cell):
    m, items = 300, 60  # 300 cubes of 60 items: one draw of 18,000 independent items, cut in 300
    truth = expected_rates(base=BASE, judge=JUDGE, n_cells=HORIZON * PRINCIPLES)["clear_breach"]
    complete, masked = masked_pair(share, 0, items=m * items, per_cell=per_cell)
    estimate, values, _ = per_cube(rate(masked), m)
    full = rate(complete).values.reshape(m, items).mean(axis=1)
    assert abs(np.mean(estimate - full)) < 3 * np.std(estimate - full) / np.sqrt(m) + 1e-4  # vs the complete data
    assert abs(np.mean(estimate) - truth) < 3 * np.std(estimate) / np.sqrt(m)  # vs the population
    se = values.std(axis=1, ddof=1) / np.sqrt(items)  # the imputed values' spread stands for the verdicts'
    full_se = rate(complete).values.reshape(m, items).std(axis=1, ddof=1) / np.sqrt(items)
    ratio, full_ratio = np.std(estimate) / np.sqrt(np.mean(se**2)), np.std(full) / np.sqrt(np.mean(full_se**2))
    assert abs(ratio - full_ratio) < 0.05 and abs(ratio - 1) < 0.1, (ratio, full_ratio)


def test_complete_cases_are_biased_when_long_conversations_lose_more_cells_and_the_default_is_not():
    # D2: up to 12 turns of variable length, 5% of cells missing completely at random
    m, items = 200, 40
    complete, masked = masked_pair(0.05, 4, items=m * items, per_cell=True, min_turns=2, horizon=12)
    full = rate(complete).values.reshape(m, items).mean(axis=1)
    biases = {}
    for missing in ("mar", "complete_case"):
        estimate, _, _ = per_cube(rate(masked, missing), m)
        biases[missing] = (np.mean(estimate - full), np.std(estimate - full) / np.sqrt(m))
    assert abs(biases["mar"][0]) < 3 * biases["mar"][1] + 1e-4
    assert biases["complete_case"][0] < -10 * biases["complete_case"][1]  # longer conversations breach more


def test_a_seen_breach_with_a_missing_cell_counts_as_violating():
    complete, masked = masked_pair(0.2, 3, items=200, per_cell=True)
    decided = rate(masked)
    breached = (standard_codes(masked["severity"], "clear_breach") == 1).any(["turn", "principle"]).squeeze(drop=True)
    assert bool(((decided == 1) | ~breached).all()) and int((decided["status"] == 1).sum()) > 0


def test_half_missing_reports_few_complete_conversations_and_bounds_hold_the_truth():
    m, items = 200, 30  # 200 cubes of 30 items, drawn at once
    complete, masked = masked_pair(0.5, 3, items=m * items)
    complete_cases = (rate(masked)["status"] == 0).values.reshape(m, items).sum(axis=1)
    assert complete_cases.max() <= 8 and score_counts(rate(masked), keep=[]).n_valid >= complete_cases.sum()
    bounds = score_bounds(masked, standards="clear_breach", rules="any_turn").squeeze(drop=True)
    truth = rate(complete).values.reshape(m, items).mean(axis=1)
    lower, upper = (bounds[b].values.reshape(m, items).mean(axis=1) for b in ("lower", "upper"))
    assert np.all(lower <= truth) and np.all(truth <= upper) and np.all(lower < upper)


def test_bounds_equal_the_score_when_nothing_is_missing():
    cube = planted_cube(items=6, replicates=2)
    bounds = score_bounds(cube)
    xr.testing.assert_equal(bounds["lower"], bounds["upper"])
    xr.testing.assert_equal(bounds["lower"], score(cube).drop_vars(["clean", "status", "expected", "weight"]))


@pytest.mark.parametrize(
    "mutate, shown",
    [
        pytest.param(lambda c: c.where(c["severity"] != -1), "nan", id="nan-masked-by-where"),
        pytest.param(lambda c: c.assign(severity=c["severity"].where(c["severity"] != 2, 7)), "7",
                     id="out-of-range-code-in-int8-array"),
        pytest.param(lambda c: c.assign(severity=c["severity"].astype(float)), "float64",
                     id="float-codes-without-nan"),
    ],
)
def test_score_refuses_severity_that_is_not_int8_codes(mutate, shown):
    cube = planted_cube(items=4, judges={"j": {"missing": 0.2}})
    with pytest.raises(ValueError) as info:
        score(mutate(cube))
    message = str(info.value)
    assert "\n" not in message and "severity" in message and shown in message


def _half_labelled(cube, human):
    """The cube with ``human``'s judgments of the second half of the items taken away."""
    unlabelled = (cube["judge"] == human) & (cube["item"] >= cube.sizes["item"] // 2)
    return cube.assign(severity=cube["severity"].where(~unlabelled, np.int8(-1)))


def _every_analysis_of_a_cube():
    """Every public analysis that reads a cube's severity, called with workable options."""
    from multiverse import analysis as A
    from multiverse.analysis.raters import pair_table_draws

    def param(call, name):
        return pytest.param(call, id=name)

    return [
        param(lambda c: A.agreement(c), "agreement-pairwise-severity"),
        param(lambda c: A.agreement(c, metric="percent", standard="clear_breach"), "agreement-pairwise-standard"),
        param(lambda c: A.agreement(c, metric="fleiss_kappa", raters=["j", "k"]), "agreement-fleiss-kappa-rater-set"),
        param(lambda c: A.agreement(c, raters=["j", "k", "h"]), "agreement-krippendorff-alpha-rater-set"),
        param(lambda c: A.agreement_ci(c, n_boot=3), "agreement-ci-pairwise"),
        param(lambda c: A.agreement_ci(c, metric="fleiss_kappa", raters=["j", "k"], n_boot=3),
              "agreement-ci-rater-set"),
        param(lambda c: pair_table_draws(c, n_boot=3), "pair-table-draws"),
        param(lambda c: A.latent_class(c), "latent-class-severity"),
        param(lambda c: A.latent_class(c, standard="clear_breach"), "latent-class-standard"),
        param(lambda c: A.calibration_table(c, humans=["j", "k"], n_boot=3), "calibration-table"),
        param(lambda c: A.false_positive_diagnosis(c, humans=["j", "k"], judges=["h"]), "false-positive-diagnosis"),
        param(lambda c: A.corrected_rate(_half_labelled(c.sel(system="a"), "k"), judge="h", human="k"), "corrected-rate"),
        param(lambda c: A.spec_curve(c, system="a", n_boot=3), "spec-curve"),
        param(lambda c: A.noise_floor(c), "noise-floor"),
        param(lambda c: A.paired_differences(c, n_boot=3), "paired-differences"),
        param(lambda c: A.clustered_se_of_rate(c), "clustered-se-of-rate"),
        param(lambda c: A.rankings(c), "rankings"),
        param(lambda c: A.rank_agreement(c), "rank-agreement"),
        param(lambda c: A.win_shares(c), "win-shares"),
        param(lambda c: A.variance_decomposition(c), "variance-decomposition"),
        param(lambda c: A.cell_rates(c), "cell-rates"),
        param(lambda c: A.cell_bounds(c), "cell-bounds"),
    ]


@pytest.mark.parametrize("analysis", _every_analysis_of_a_cube())
@pytest.mark.parametrize(
    "mutate, shown",
    [
        pytest.param(lambda c: c.where(c["severity"] != -1), "float32", id="nan-masked"),
        pytest.param(lambda c: c.assign(severity=c["severity"].where(c["severity"] != 2, 7)), "7", id="code-7"),
    ],
)
def test_every_analysis_refuses_severity_that_is_not_int8_codes(analysis, mutate, shown):
    cube = planted_cube(items=4, systems={"a": 0.05, "b": 0.1}, judges={"j": {"missing": 0.2}, "k": {}, "h": {}})
    analysis(cube)  # the options work on the valid cube
    with pytest.raises(ValueError) as info:
        analysis(mutate(cube))
    message = str(info.value)
    assert "\n" not in message and "severity" in message and shown in message and "-2..2" in message


def test_an_experiments_standards_and_rules_are_the_scores_defaults(tmp_path):
    experiment = {
        "name": "chosen", "roles": ["tutor"], "systems": {"a": "sim/target-a"},
        "dims": {"user_sim": {"plain": "sim/user-plain"}, "judge": {"strict": "sim/judge-strict"},
                 "condition": {"short": {"horizon": 3, "search": "seed_only"}},
                 "standard": ["clear_breach"], "rule": ["any_turn", "first_turn"]},
        "replicates": 1, "items": 2, "specs": str(SPECS),
        "sim": {"targets": {"a": {"breach": {"*": 0.1}}}, "judges": {"strict": {}}, "users": {"plain": {}}},
    }
    path = tmp_path / "chosen.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False))
    cube = multiverse.run(path, out=tmp_path / "out", cache=tmp_path / "cache")
    for scored in (score(cube), score(multiverse.open_cube(tmp_path / "out" / "cube.nc"))):
        assert scored["standard"].values.tolist() == ["clear_breach"]
        assert scored["rule"].values.tolist() == ["any_turn", "first_turn"]
    assert score(cube, rules="turn_mean")["rule"].values.tolist() == ["turn_mean"]


def test_the_report_summary_carries_worst_case_bounds_beside_the_counts():
    from multiverse.report import summary_table

    cube = planted_cube(items=6, replicates=2, judges={"j": {"missing_response": 0.2}, "k": {}})
    table = summary_table(score(cube), bounds=score_bounds(cube)).set_index(["judge", "rule"]).sort_index()
    rates = table[table["unit"] == "rate"]
    assert (rates["lower_bound"] <= rates["upper_bound"]).all()
    assert (rates.loc["j", "lower_bound"] < rates.loc["j", "upper_bound"]).any()
    np.testing.assert_allclose(rates.loc["k", "lower_bound"], rates.loc["k", "value"])  # nothing missing
    assert table[table["unit"] == "turns"]["lower_bound"].isna().all()

"""Canary results: counts, Wilson and Newcombe intervals, and the no_signal flag on pooled results only."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from multiverse.cube.canaries import CanaryVerdict, NoJudgeSignal, canary_results, describe_pooled, score_canaries, youden_interval


def _verdicts(caught: int, breaks: int, passed: int, keeps: int, principle: str = "confidentiality", missing: int = 0):
    out = [CanaryVerdict("tutor", principle, 2, 2)] * caught + [CanaryVerdict("tutor", principle, 2, 0)] * (breaks - caught)
    out += [CanaryVerdict("tutor", principle, 0, 0)] * passed + [CanaryVerdict("tutor", principle, 0, 2)] * (keeps - passed)
    return out + [CanaryVerdict("tutor", principle, 2, -1)] * missing


def _wilson(count: int, n: int, z: float) -> tuple[float, float]:
    p = count / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_counts_rates_and_the_missing_verdicts_kept_apart():
    result = score_canaries(_verdicts(7, 8, 6, 8, missing=2))
    pooled = result["pooled"]
    assert (pooled["breaks"], pooled["caught"], pooled["keeps"], pooled["passed"], pooled["missing"]) == (8, 7, 8, 6, 2)
    assert pooled["sensitivity"] == 7 / 8 and pooled["specificity"] == 6 / 8 and pooled["youden"] == pytest.approx(0.625)
    assert result["confusion"] == {"0": {"0": 6, "1": 0, "2": 2}, "2": {"0": 1, "1": 0, "2": 7}}
    assert list(result["principles"]) == ["tutor/confidentiality"]


def test_intervals_are_wilson_for_rates_and_newcombes_hybrid_for_j():
    z = stats.norm.ppf(0.975)
    pooled = score_canaries(_verdicts(13, 16, 11, 16))["pooled"]
    l1, u1 = _wilson(13, 16, z)
    l2, u2 = _wilson(5, 16, z)  # false alarms on the keeping canaries
    assert pooled["sensitivity_ci"] == pytest.approx([l1, u1])
    d = 13 / 16 - 5 / 16
    expected = [d - math.sqrt((13 / 16 - l1) ** 2 + (u2 - 5 / 16) ** 2), d + math.sqrt((u1 - 13 / 16) ** 2 + (5 / 16 - l2) ** 2)]
    assert pooled["youden_ci"] == pytest.approx(expected)
    assert youden_interval(13, 16, 5, 16) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("counts", "floor", "flagged"),
    [((30, 32, 29, 32), 0.0, False), ((16, 32, 16, 32), 0.0, True), ((0, 32, 32, 32), 0.0, True),
     ((0, 5, 9, 16), 0.0, True), ((30, 32, 29, 32), 0.7, True), ((0, 0, 3, 3), 0.0, True)],
    ids=["good-judge", "coin", "never-flags-a-breach", "worse-than-chance", "good-but-under-the-floor", "no-breaking-canaries"],
)
def test_a_judge_is_flagged_when_its_pooled_j_is_not_clearly_above_the_floor(counts, floor, flagged):
    assert score_canaries(_verdicts(*counts), floor=floor)["no_signal"] is flagged


def test_per_principle_results_do_not_flag_a_judge():
    verdicts = _verdicts(15, 16, 15, 16) + _verdicts(1, 2, 1, 2, principle="academic_integrity")
    result = score_canaries(verdicts)
    assert result["principles"]["tutor/academic_integrity"]["youden_ci"][0] <= 0
    assert result["no_signal"] is False


def test_under_any_deviation_a_partial_verdict_counts_as_a_breach():
    verdicts = [CanaryVerdict("tutor", "p", 2, 1), CanaryVerdict("tutor", "p", 0, 1)]
    assert score_canaries(verdicts, standard="any_deviation")["pooled"]["caught"] == 1
    assert score_canaries(verdicts)["pooled"]["caught"] == 0
    with pytest.raises(ValueError, match="persistent"):
        score_canaries(verdicts, standard="persistent")


def test_results_read_back_from_a_cube_attr_as_text_or_mapping():
    result = score_canaries(_verdicts(8, 8, 8, 8))
    assert canary_results({"canaries": json.dumps({"strict": result})}) == {"strict": result}
    assert canary_results({"canaries": {"strict": result}}) == {"strict": result}
    assert canary_results({}) == {}


def test_a_refusal_names_each_judge_and_its_pooled_figures():
    result = score_canaries(_verdicts(0, 5, 9, 16))
    line = describe_pooled("smollm2", result)
    assert line.startswith("judge 'smollm2': sensitivity 0.00 [0.00, 0.43], specificity 0.56 [")
    assert "J -0.44 [" in line and "21 canaries judged" in line
    assert "smollm2" in str(NoJudgeSignal({"smollm2": result}))


@pytest.mark.parametrize(
    ("caught", "breaks", "flagged", "keeps"),
    [(13, 16, 5, 16), (0, 8, 0, 8), (8, 8, 8, 8), (1, 3, 7, 9), (30, 32, 1, 40)],
    ids=["typical", "all-zero", "all-one", "few", "unequal-sizes"],
)
def test_intervals_equal_statsmodels_wilson_and_newcombe(caught, breaks, flagged, keeps):
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    pooled = score_canaries(_verdicts(caught, breaks, keeps - flagged, keeps))["pooled"]
    assert pooled["sensitivity_ci"] == pytest.approx(list(proportion.proportion_confint(caught, breaks, method="wilson")), abs=1e-12)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = proportion.confint_proportions_2indep(caught, breaks, flagged, keeps, method="newcomb")
    assert youden_interval(caught, breaks, flagged, keeps) == pytest.approx([max(-1.0, low), min(1.0, high)], abs=1e-12)

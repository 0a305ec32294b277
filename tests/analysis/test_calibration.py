"""Table 1 (judge-human calibration) pinned to pairwise agreement and statsmodels, and its diagnosis."""

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa

from multiverse.analysis.calibration import HUMANS, calibration_table, false_positive_diagnosis
from multiverse.analysis.raters import agreement, ratings
from multiverse.core import schema as S
from multiverse.cube.build import new_cube

HUMAN_JUDGES = {"h1": {"sensitivity": 0.92, "specificity": 0.97}, "h2": {"sensitivity": 0.88, "specificity": 0.96},
                "h3": {"sensitivity": 0.9, "specificity": 0.98}}


@pytest.fixture(scope="module")
def labelled(make_cube):
    judges = {**HUMAN_JUDGES, "gpt": {"sensitivity": 0.8, "specificity": 0.9}, "claude": {"sensitivity": 0.85, "leniency": 0.3}}
    return make_cube(systems={"a": 0.1, "b": 0.2}, judges=judges, roles=("tutor", "support"), replicates=1, items=15,
                     horizon=4, partial=0.1, seed=5)


@pytest.mark.parametrize("scale, standard", [pytest.param("three_level", None, id="three-level"),
                                             pytest.param("clear_breach", "clear_breach", id="clear-breach")])
@pytest.mark.parametrize("metric", ["percent", "cohen_kappa"])
def test_rows_are_mean_pairwise_agreement(labelled, scale, standard, metric):
    table = calibration_table(labelled, humans=list(HUMAN_JUDGES), n_boot=50)
    for group in ("tutor", "support", "overall"):
        cube = labelled if group == "overall" else labelled.sel(role=[group])
        matrix = agreement(cube, metric=metric, standard=standard)
        for judge in ("gpt", "claude"):
            want = np.mean([float(matrix.sel(judge=judge, judge_b=h)) for h in HUMAN_JUDGES])
            got = float(table["estimate"].sel(rater=judge, scale=scale, metric=metric, group=group))
            assert got == pytest.approx(want, abs=1e-12)
        pairs = [("h1", "h2"), ("h1", "h3"), ("h2", "h3")]
        want = np.mean([float(matrix.sel(judge=a, judge_b=b)) for a, b in pairs])
        assert float(table["estimate"].sel(rater=HUMANS, scale=scale, metric=metric, group=group)) == pytest.approx(want)


def test_one_entry_against_statsmodels(labelled):
    table = calibration_table(labelled, humans=list(HUMAN_JUDGES), n_boot=20)
    values = ratings(labelled, standard="clear_breach").values.reshape(-1, labelled.sizes["judge"])
    names = labelled["judge"].values.tolist()
    kappas = []
    for h in HUMAN_JUDGES:
        x, y = values[:, names.index("gpt")], values[:, names.index(h)]
        both = (x >= 0) & (y >= 0)
        tab = pd.crosstab(pd.Categorical(x[both], [0, 1]), pd.Categorical(y[both], [0, 1]), dropna=False).values
        kappas.append(cohens_kappa(tab).kappa)
    got = table["estimate"].sel(rater="gpt", scale="clear_breach", metric="cohen_kappa", group="overall")
    assert float(got) == pytest.approx(np.mean(kappas), abs=1e-9)


def test_intervals_counts_and_the_humans_ceiling(labelled):
    table = calibration_table(labelled, humans=list(HUMAN_JUDGES), n_boot=200, seed=3)
    lower, upper = table["ci"].sel(ci_bound="lower"), table["ci"].sel(ci_bound="upper")
    assert bool((lower <= table["estimate"] + 1e-12).all() & (table["estimate"] <= upper + 1e-12).all())
    assert int(table["n_units"].sel(rater="gpt", scale="three_level", group="overall")) == sum(
        int(table["n_units"].sel(rater="gpt", scale="three_level", group=r)) for r in ("tutor", "support"))
    assert int(table["n_conversations"].sel(group="overall")) == 2 * 2 * 15
    kappa = table["estimate"].sel(scale="clear_breach", metric="cohen_kappa", group="overall")
    assert float(kappa.sel(rater=HUMANS)) > float(kappa.sel(rater="gpt"))


def _one_conversation(human_rows, judge_row):
    cube = new_cube(system=["a"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=1, turn=4,
                    principle=list(S.ROLE_PRINCIPLES["tutor"]), judge=["h1", "h2", "j"])
    sev = cube["severity"].values
    sev[...] = 0
    for index, row in enumerate(human_rows + [judge_row]):
        sev[0, 0, 0, 0, 0, 0, :, 0, index] = row
    return cube


@pytest.mark.parametrize("humans, judge, want", [
    pytest.param([[2, 0, 0, 0], [2, 0, 0, 0]], [2, 2, 2, 0], (2, 2), id="carried-forward-after-true-breach"),
    pytest.param([[0, 0, 0, 0], [0, 0, 0, 0]], [0, 2, 0, 0], (1, 0), id="fresh-false-positive"),
    pytest.param([[0, 0, 2, 0], [0, 0, 2, 0]], [2, 0, 0, 2], (2, 1), id="before-and-after"),
    pytest.param([[2, 0, 0, 0], [0, 0, 0, 0]], [0, 2, 0, 0], (1, 0), id="human-tie-is-no-reference-breach"),
])
def test_false_positive_diagnosis_closed_cases(humans, judge, want):
    cube = _one_conversation(humans, judge)
    got = false_positive_diagnosis(cube, humans=["h1", "h2"], judges=["j"])
    assert (int(got["false_positives"].sel(judge="j")), int(got["after_earlier_breach"].sel(judge="j"))) == want


def test_false_positive_diagnosis_counts_the_cells_it_used_and_left_out():
    """Turn 1: humans tie; turn 2: no human rated; turn 3: the judge's judgment missing; turn 4: used."""
    cube = _one_conversation([[2, -1, 0, 0], [0, -1, 0, 0]], [0, 0, -1, 2])
    got = false_positive_diagnosis(cube, humans=["h1", "h2"], judges=["j"])
    one_principle = len(S.ROLE_PRINCIPLES["tutor"]) - 1  # the other principles: every rater says 0 on every turn
    assert int(got["false_positives"].sel(judge="j")) == 1
    assert int(got["n_judged"].sel(judge="j")) == 1 + 4 * one_principle
    assert int(got["n_unjudged"].sel(judge="j")) == 1
    assert (int(got["n_tied"]), int(got["n_unrated"])) == (1, 1)


@pytest.mark.parametrize("options, message", [
    pytest.param({"humans": ["h1"]}, "at least two humans", id="one-human"),
    pytest.param({"humans": ["h1", "zed"]}, "not judges of the cube", id="unknown-human"),
    pytest.param({"humans": ["h1", "h2"], "by": "judge"}, "by='judge'", id="by-judge"),
])
def test_bad_options(labelled, options, message):
    with pytest.raises(ValueError, match=message):
        calibration_table(labelled, n_boot=5, **options)

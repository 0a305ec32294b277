"""Labels on their own scales: a public-style pairwise set and a Likert set give the right analyses
whatever codes the user picked, pinned to statsmodels, krippendorff and hand counts."""

from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

import multiverse
from multiverse.adapters import long_table
from multiverse.analysis import (agreement, calibration_table, consensus, corrected_rate, latent_class, mean_rating,
                                 rankings, win_rate)
from multiverse.cube.io import open_cube, save_cube

HUMANS = ["human_1", "human_2", "human_3"]
JUDGES = ["gpt4", "claude"]
MODELS = ["m1", "m2", "m3"]
TRUTH_NAMES = ["A", "B", "tie"]
CODINGS = {
    "letters": {"A": "A", "B": "B", "Tie": "tie"},
    "zero-based": {0: "A", 1: "B", 2: "tie"},
    "b-first": {1: "B", 2: "A", 3: "tie"},
}


def _pairwise_rows(seed: int = 8, n: int = 150) -> pd.DataFrame:
    """Comparisons of model pairs on questions; three humans and two LLM judges; canonical winners."""
    rng = np.random.default_rng(seed)
    accuracy = {"human_1": 0.9, "human_2": 0.85, "human_3": 0.88, "gpt4": 0.8, "claude": 0.75}
    rows = []
    for q in range(n):
        a, b = rng.choice(MODELS, size=2, replace=False)
        true = rng.choice(3, p=[0.45, 0.4, 0.15])
        for rater, acc in accuracy.items():
            label = true if rng.random() < acc else rng.choice([c for c in range(3) if c != true])
            rows.append({"question_id": f"q{q:03d}", "model_a": a, "model_b": b, "annotator": rater,
                         "winner": TRUTH_NAMES[int(label)], "truth": TRUTH_NAMES[int(true)],
                         "shown_first": int(rng.integers(1, 3))})
    table = pd.DataFrame(rows)
    odd = (table["annotator"] == "claude") & (table.index % 50 == 4)
    table.loc[odd, "winner"] = "refused"  # not a category: missing, counted
    return table


def _coded(table: pd.DataFrame, coding: str) -> tuple[pd.DataFrame, dict]:
    """The same labels written in the user's codes (unmapped values kept as they were)."""
    mapping = CODINGS[coding]
    to_raw = {name: raw for raw, name in mapping.items()}
    out = table.copy()
    out["winner"] = [to_raw.get(w, w) for w in table["winner"]]
    return out, mapping


def _load(table: pd.DataFrame, categories: dict | None):
    return long_table(table, item="question_id", system_a="model_a", system_b="model_b", judge="annotator",
                      score="winner", scale="pairwise", categories=categories, position="shown_first")


@pytest.fixture(scope="module")
def pairwise_table():
    return _pairwise_rows()


@pytest.fixture(scope="module")
def cubes(pairwise_table):
    return {coding: _load(*_coded(pairwise_table, coding)) for coding in CODINGS}


def _raw_pair(table: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    wide = table.pivot(index="question_id", columns="annotator", values="winner")
    both = wide[a].isin(TRUTH_NAMES) & wide[b].isin(TRUTH_NAMES)
    return wide.loc[both, a].to_numpy(), wide.loc[both, b].to_numpy()


def test_one_item_per_comparison_and_summary_counts_only_real_ones(cubes, pairwise_table):
    cube = cubes["letters"]
    assert cube.sizes["system"] == 1 and cube.sizes["item"] == 150
    assert set(cube["system_a"].values) | set(cube["system_b"].values) == set(MODELS)
    found = multiverse.summary(cube)
    assert found.conversations == {"completed": 150, "monitor_ended": 0, "failed": 0}
    assert found.judgments["claude"]["missing"] == 15
    assert cube.attrs["unmapped"] == {"refused": 15}, "a dict in Python"
    assert cube["scale"].values.tolist() == ["pairwise"] * 5


@pytest.mark.parametrize("coding", list(CODINGS))
def test_pairwise_agreement_is_unweighted_kappa_whatever_the_codes(cubes, pairwise_table, coding):
    got = agreement(cubes[coding], metric="cohen_kappa")
    assert got.attrs["scale"] == "nominal"
    for a, b in [("human_1", "gpt4"), ("gpt4", "claude"), ("human_2", "human_3")]:
        x, y = _raw_pair(pairwise_table, a, b)
        table = pd.crosstab(pd.Categorical(x, TRUTH_NAMES), pd.Categorical(y, TRUTH_NAMES), dropna=False).values
        assert float(got.sel(judge=a, judge_b=b)) == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    alpha = agreement(cubes[coding], metric="krippendorff_alpha").sel(judge="human_1", judge_b="claude")
    x, y = _raw_pair(pairwise_table, "human_1", "claude")
    codes = {name: i for i, name in enumerate(TRUTH_NAMES)}
    data = np.array([[codes[v] for v in x], [codes[v] for v in y]], dtype=float)
    assert float(alpha) == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12)


@pytest.mark.parametrize("coding", list(CODINGS))
def test_fleiss_kappa_of_the_humans_matches_statsmodels(cubes, pairwise_table, coding):
    got = agreement(cubes[coding], metric="fleiss_kappa", raters=HUMANS)
    wide = pairwise_table.pivot(index="question_id", columns="annotator", values="winner")[HUMANS]
    counts = np.stack([(wide == name).sum(axis=1).to_numpy() for name in TRUTH_NAMES], axis=1)
    assert float(got) == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)


def test_every_analysis_is_the_same_whatever_the_codes(cubes):
    tables = {c: calibration_table(cube, humans=HUMANS, n_boot=50) for c, cube in cubes.items()}
    classes = {c: latent_class(cube) for c, cube in cubes.items()}
    majority = {c: consensus(cube, raters=HUMANS, method="majority", name="humans") for c, cube in cubes.items()}
    b_wins = {c: corrected_rate(majority[c], judge="gpt4", human="humans", category="B") for c in cubes}
    first = "letters"
    for coding in cubes:
        assert tables[coding]["scale"].values.tolist() == ["categories"]
        np.testing.assert_allclose(tables[coding]["estimate"].values, tables[first]["estimate"].values)
        prior = classes[coding]["prior"].swap_dims(true="true_category").sortby("true_category")
        np.testing.assert_allclose(prior.values, classes[first]["prior"].swap_dims(true="true_category")
                                   .sortby("true_category").values, atol=1e-12)
        for name in ("estimate", "human_estimate", "se"):
            assert float(b_wins[coding][name]) == pytest.approx(float(b_wins[first][name]), abs=1e-12)


def test_dawid_skene_recovers_the_winners_by_name(cubes, pairwise_table):
    classes = latent_class(cubes["b-first"])
    assert sorted(classes["true_category"].values.tolist()) == ["A", "B", "tie"]
    best = classes["posterior"].squeeze(drop=True).argmax("true")
    names = classes["true_category"].values[best.values]
    truth = pairwise_table.drop_duplicates("question_id").set_index("question_id")["truth"]
    item_ids = cubes["b-first"]["item_id"].values
    assert np.mean(names == truth.loc[item_ids].to_numpy()) > 0.9


def test_majority_consensus_breaks_ties_as_missing_and_counts_them(cubes, pairwise_table):
    cube = consensus(cubes["zero-based"], raters=["human_1", "human_2"], name="pair")
    wide = pairwise_table.pivot(index="question_id", columns="annotator", values="winner")
    agree = (wide["human_1"] == wide["human_2"]).loc[cube["item_id"].values].to_numpy()
    codes = cube["severity"].sel(judge="pair").squeeze(drop=True).values
    assert ((codes >= 0) == agree).all(), "two raters who differ: no consensus"
    record = cube.attrs["consensus"]["pair"]
    assert record["n_ties"] == int((~agree).sum()) and record["tie_break"].startswith("a tie is missing")
    assert int(cube["missing_count"].sel(judge="pair", missing_reason="no_verdict")) == int((~agree).sum())
    assert cube["scale"].sel(judge="pair").item() == "pairwise"


def test_ppi_estimates_the_human_share_of_b_wins(cubes, pairwise_table):
    cube = consensus(cubes["b-first"], raters=HUMANS, name="humans")
    got = corrected_rate(cube, judge="gpt4", human="humans", category="B")
    wide = pairwise_table.pivot(index="question_id", columns="annotator", values="winner")[HUMANS]
    votes = wide.apply(lambda row: row.value_counts(), axis=1).fillna(0)
    top = votes.max(axis=1)
    decided = (votes == top.to_numpy()[:, None]).sum(axis=1) == 1
    majority = votes.idxmax(axis=1)[decided]
    assert float(got["human_estimate"]) == pytest.approx(np.mean(majority == "B"), abs=1e-12)
    assert got.attrs["n_labelled"] == decided.sum()
    with pytest.raises(ValueError, match="name the category to count"):
        corrected_rate(cube, judge="gpt4", human="humans")


def test_win_rate_counts_ties_half_and_reads_position_bias(cubes, pairwise_table):
    got = win_rate(cubes["zero-based"], judges=["human_1"])
    rows = pairwise_table[(pairwise_table["annotator"] == "human_1") & pairwise_table["winner"].isin(TRUTH_NAMES)]
    for model in MODELS:
        mine = rows[(rows["model_a"] == model) | (rows["model_b"] == model)]
        won = ((mine["winner"] == "A") & (mine["model_a"] == model)) | ((mine["winner"] == "B") & (mine["model_b"] == model))
        score = np.where(won, 1.0, np.where(mine["winner"] == "tie", 0.5, 0.0))
        assert float(got["win_rate"].sel(system=model, judge="human_1")) == pytest.approx(score.mean(), abs=1e-12)
        assert float(got["standard_error"].sel(system=model, judge="human_1")) == pytest.approx(
            score.std(ddof=1) / np.sqrt(len(score)), abs=1e-12)
    decided = rows[rows["winner"] != "tie"]
    first = ((decided["winner"] == "A") & (decided["shown_first"] == 1)) | ((decided["winner"] == "B") & (decided["shown_first"] == 2))
    assert float(got["first_shown_wins"].sel(judge="human_1")) == pytest.approx(first.mean(), abs=1e-12)
    assert "half" in got.attrs["ties"]
    ranks = rankings(got["win_rate"], higher_is_better=True)
    assert ranks.sel(system=got["win_rate"].sel(judge="human_1").idxmax().item(), judge="human_1") == 1


def test_attrs_are_dicts_after_a_file_round_trip(cubes, tmp_path):
    path = save_cube(cubes["letters"], tmp_path / "pairs.nc")
    again = open_cube(path)
    assert again.attrs["unmapped"] == {"refused": 15}
    assert again.attrs["categories"] == {"A": "A", "B": "B", "Tie": "tie"}
    assert again["scale"].values.tolist() == ["pairwise"] * 5


# --- Likert ratings ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def likert_table():
    """Two judges rate every assistant turn 1-10; three systems of different quality."""
    rng = np.random.default_rng(3)
    quality = {"good": 7.5, "fair": 5.5, "poor": 3.5}
    rows = []
    for system, mean in quality.items():
        for conversation in range(20):
            for turn in range(1, 5):
                true = mean + rng.normal(0, 1.2)
                for judge, bias in (("judge_x", 0.0), ("judge_y", -0.6)):
                    rating = int(np.clip(round(true + bias + rng.normal(0, 0.8)), 1, 10))
                    rows.append({"conv": conversation, "system": system, "turn": turn, "judge": judge, "rating": rating})
    table = pd.DataFrame(rows)
    table.loc[5, "rating"] = None  # one missing rating
    return table


def test_likert_ratings_give_weighted_agreement(likert_table):
    cube = long_table(likert_table, item="conv", system="system", judge="judge", score="rating", turn="turn",
                      scale="likert", categories=range(1, 11))
    assert "rating" in cube and cube["scale"].values.tolist() == ["likert", "likert"]
    kappa = agreement(cube, metric="cohen_kappa")
    assert kappa.attrs["scale"] == "ordinal"
    wide = likert_table.pivot_table(index=["system", "conv", "turn"], columns="judge", values="rating").dropna()
    table = pd.crosstab(pd.Categorical(wide["judge_x"], range(1, 11)), pd.Categorical(wide["judge_y"], range(1, 11)),
                        dropna=False).values
    want = cohens_kappa(table, wt="quadratic").kappa
    assert float(kappa.sel(judge="judge_x", judge_b="judge_y")) == pytest.approx(want, abs=1e-12)
    alpha = agreement(cube, metric="krippendorff_alpha").sel(judge="judge_x", judge_b="judge_y")
    data = wide[["judge_x", "judge_y"]].to_numpy().T
    assert float(alpha) == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal",
                                                            value_domain=list(range(1, 11))), abs=1e-12)
    unweighted = agreement(cube, metric="cohen_kappa", scale="nominal").sel(judge="judge_x", judge_b="judge_y")
    assert float(unweighted) < float(kappa.sel(judge="judge_x", judge_b="judge_y"))
    assert multiverse.summary(cube).judgments["judge_y"] == {"valid": 239, "missing": 1, "not_applicable": 0}


def test_likert_ratings_rank_systems_by_mean_rating(likert_table):
    cube = long_table(likert_table, item="conv", system="system", judge="judge", score="rating", turn="turn",
                      scale="likert")
    ranks = rankings(cube).squeeze(drop=True)
    means = likert_table.groupby(["judge", "system"])["rating"].mean()
    for judge in ("judge_x", "judge_y"):
        order = means.loc[judge].rank(ascending=False)
        assert ranks.sel(judge=judge).to_series().loc[order.index].tolist() == order.tolist()
    assert ranks.sel(judge="judge_x", system="good") == 1
    means = mean_rating(cube)
    assert int(means["n_missing"].sum()) == 1 and int(means["n_rated"].sum()) == len(likert_table) - 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param({"system": "model_a"}, r"scale='pairwise' needs system_a= and system_b=", id="pairwise-with-system"),
        pytest.param({"system_a": "model_a", "system_b": "model_b", "categories": {"A": "left"}},
                     r"name no category of scale 'pairwise'", id="unknown-category"),
        pytest.param({"system_a": "model_a", "system_b": "model_b", "position": "annotator"},
                     r"row 1: column 'annotator' holds 'human_1'; expected 1, 2, first or second", id="bad-position"),
    ],
)
def test_bad_options_are_one_line_errors(pairwise_table, options, message):
    with pytest.raises(ValueError, match=message):
        long_table(pairwise_table, item="question_id", judge="annotator", score="winner", scale="pairwise", **options)


def test_likert_rating_outside_the_declared_range_names_the_row(likert_table):
    bad = likert_table.assign(rating=likert_table["rating"].where(likert_table.index != 7, 11))
    with pytest.raises(ValueError, match=r"row 8: column 'rating' holds 11.0; outside the declared range 1\.\.10"):
        long_table(bad, item="conv", system="system", judge="judge", score="rating", turn="turn", scale="likert",
                   categories=range(1, 11))


# --- real data: AlpacaEval's own win rate from its annotations --------------------------------------


def test_alpaca_eval_discrete_win_rate_from_pairwise_labels(mirror):
    import json

    folder = mirror / "alpaca_eval" / "results" / "gpt-3.5-turbo-0301"
    rows = []
    for judge in ("weighted_alpaca_eval_gpt4_turbo", "alpaca_eval_gpt4_turbo_fn", "alpaca_eval_cot_gpt4_turbo_fn"):
        for index, record in enumerate(json.loads((folder / judge / "annotations.json").read_text())):
            p = record["preference"]
            winner = None if p is None else ("B" if p > 1.5 else "A" if p < 1.5 else "tie")
            rows.append({"item": index, "a": record["generator_1"], "b": record["generator_2"], "judge": judge,
                         "winner": winner})
    cube = long_table(pd.DataFrame(rows), item="item", system_a="a", system_b="b", judge="judge", score="winner",
                      scale="pairwise")
    got = win_rate(cube)
    board = pd.read_csv(mirror / "alpaca_eval" / "leaderboards" / "data_AlpacaEval_2"
                        / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", index_col=0).loc["gpt-3.5-turbo-0301"]
    row = got.sel(system="gpt-3.5-turbo-0301", judge="weighted_alpaca_eval_gpt4_turbo")
    assert float(row["win_rate"]) * 100 == pytest.approx(board["discrete_win_rate"], abs=1e-9)
    assert (int(row["wins"]), int(row["ties"]), int(row["n"])) == (board["n_wins"], board["n_draws"], board["n_total"])
    assert multiverse.summary(cube).conversations["completed"] == 805, "805 comparisons, no phantom grid"
    kappa = agreement(cube, metric="fleiss_kappa", raters=["alpaca_eval_gpt4_turbo_fn", "alpaca_eval_cot_gpt4_turbo_fn"])
    assert 0 < float(kappa) < 1


def test_majority_of_likert_ratings_keeps_the_modal_rating(likert_table):
    triple = pd.concat([likert_table, likert_table[likert_table["judge"] == "judge_x"].assign(judge="judge_z")])
    cube = long_table(triple, item="conv", system="system", judge="judge", score="rating", turn="turn",
                      scale="likert", categories=range(1, 11))
    out = consensus(cube, raters=["judge_x", "judge_y", "judge_z"], name="modal")
    got = out["rating"].sel(judge="modal")
    x = cube["rating"].sel(judge="judge_x")
    assert bool((got == x).where(x.notnull(), True).all()), "judge_z copies judge_x: their rating is the mode"
    assert out["scale"].sel(judge="modal").item() == "likert"
    assert multiverse.summary(out).judgments["modal"]["valid"] == 240


def test_win_rate_can_leave_ties_out(cubes):
    half = win_rate(cubes["letters"], judges=["human_2"])
    out = win_rate(cubes["letters"], judges=["human_2"], ties="exclude")
    assert (out["n"] == half["n"] - half["ties"]).all() and (out["ties"] == 0).all()
    assert "left out" in out.attrs["ties"]
    assert (out["n_ties_left_out"] == half["ties"]).all() and (half["n_ties_left_out"] == 0).all()
    assert (half["n_missing"] == out["n_missing"]).all()
    claude = win_rate(cubes["letters"], judges=["claude"])  # 15 refusals, each a comparison of two systems
    assert int(claude["n_missing"].sum()) == 2 * 15

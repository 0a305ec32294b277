"""AlpacaEval annotations and leaderboards: preference mapping, row comparability, rankings."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from adapter_fixtures import write_json

from multiverse.adapters import NotRowComparable, alpaca_eval, alpaca_leaderboards
from multiverse.adapters.alpaca import preference_severity

INSTRUCTIONS = ["Write a haiku.", "Explain tides.", "List three primes."]


def _annotations(tmp_path, judge, system, preferences, *, baseline="base_model", instructions=INSTRUCTIONS, folder=None):
    rows = [
        {"instruction": ins, "output_1": "b", "generator_1": baseline, "dataset": "demo", "output_2": "s",
         "generator_2": system, "annotator": judge, "preference": pref}
        for ins, pref in zip(instructions, preferences, strict=True)
    ]
    return write_json(tmp_path / (folder or f"{system}-{judge}") / "annotations.json", rows)


@pytest.mark.parametrize(
    ("preference", "severity"),
    [
        pytest.param(2.0, 0, id="win"),
        pytest.param(1.51, 0, id="continuous-win"),
        pytest.param(1.5, 1, id="tie"),
        pytest.param(1.0000126, 2, id="continuous-loss"),
        pytest.param(1.0, 2, id="loss"),
        pytest.param(None, -1, id="null"),
        pytest.param(float("nan"), -1, id="nan"),
        pytest.param("2", -1, id="text-is-not-a-preference"),
    ],
)
def test_preference_severity(preference, severity):
    assert preference_severity(preference) == severity


def test_cube_over_systems_items_and_judges(tmp_path):
    files = [
        _annotations(tmp_path, "judge_a", "model-x", [2.0, 1.0, 1.5]),
        _annotations(tmp_path, "judge_b", "model-x", [1.9, 1.2, None]),
        _annotations(tmp_path, "judge_a", "model-y", [1.0, 1.0, 2.0]),
    ]
    cube = alpaca_eval(files)
    assert cube["system"].values.tolist() == ["model-x", "model-y"]
    assert cube["judge"].values.tolist() == ["judge_a", "judge_b"]
    assert cube["condition"].values.tolist() == ["vs_base_model"]
    assert cube["instruction"].values.tolist() == INSTRUCTIONS
    sev = cube["severity"].squeeze(["role", "user_sim", "condition", "replicate", "turn", "principle"])
    assert sev.sel(system="model-x", judge="judge_a").values.tolist() == [0, 2, 1]
    assert sev.sel(system="model-x", judge="judge_b").values.tolist() == [0, 2, -1]
    assert sev.sel(system="model-y", judge="judge_b").values.tolist() == [-2, -2, -2], "never judged"
    assert int(cube["missing_count"].sel(judge="judge_b", missing_reason="no_verdict")) == 1
    np.testing.assert_allclose(cube["preference"].sel(system="model-x", judge="judge_b").values, [1.9, 1.2, np.nan])
    assert cube.attrs["baseline"] == "base_model"


def test_missing_fields_are_reported_by_row(tmp_path):
    path = _annotations(tmp_path, "judge_a", "model-x", [2.0, 1.0, 1.0])
    rows = json.loads(path.read_text())
    rows[1] = {"preference": 2.0}
    del rows[2]["preference"]
    path.write_text(json.dumps(rows))
    cube = alpaca_eval(path)
    assert cube.attrs["warnings"] == ["annotations.json: row 1: no 'instruction'; its preference is missing"]
    sev = cube["severity"].squeeze(["system", "role", "user_sim", "condition", "replicate", "turn", "principle", "judge"])
    assert sev.values.tolist() == [0, -1, -1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"baseline": "other_base"}, "baseline 'other_base' differs", id="other-baseline"),
        pytest.param({"instructions": INSTRUCTIONS[::-1]}, "row 0 holds another instruction", id="other-order"),
        pytest.param({"instructions": INSTRUCTIONS[:2]}, "2 rows", id="other-length"),
    ],
)
def test_rows_must_be_comparable(tmp_path, change, message):
    first = _annotations(tmp_path, "judge_a", "model-x", [2.0, 1.0, 1.0])
    n = len(change.get("instructions", INSTRUCTIONS))
    second = _annotations(tmp_path, "judge_b", "model-x", [1.0] * n, **change)
    with pytest.raises(NotRowComparable, match=message):
        alpaca_eval([first, second])


def test_same_judge_and_system_twice_is_an_error(tmp_path):
    first = _annotations(tmp_path, "judge_a", "model-x", [2.0, 1.0, 1.0])
    second = _annotations(tmp_path, "judge_a", "model-x", [2.0, 1.0, 1.0], folder="copy")
    with pytest.raises(ValueError, match="already read"):
        alpaca_eval([first, second])


def _leaderboard(tmp_path, judge, rows, *, columns=("win_rate", "standard_error")):
    frame = pd.DataFrame(rows, columns=["system", *columns]).set_index("system")
    frame.index.name = None
    path = tmp_path / f"{judge}_leaderboard.csv"
    frame.to_csv(path)
    return path


def test_leaderboards_drop_the_baseline_row(tmp_path):
    a = _leaderboard(tmp_path, "judge_a", [["base", 50.0, 0.0], ["x", 30.0, 1.5], ["y", 20.0, 1.2]])
    b = _leaderboard(tmp_path, "judge_b", [["x", 35.0, 1.6], ["base", 50.0, 0.0], ["z", 10.0, 0.9]])
    boards = alpaca_leaderboards([a, b])
    assert boards["judge"].values.tolist() == ["judge_a", "judge_b"]
    assert boards["baseline"].values.tolist() == ["base", "base"]
    assert sorted(boards["system"].values.tolist()) == ["x", "y", "z"]
    assert boards["win_rate"].sel(system="x").values.tolist() == [30.0, 35.0]
    assert np.isnan(boards["win_rate"].sel(system="z", judge="judge_a"))


def test_leaderboard_without_a_column_is_an_error(tmp_path):
    path = _leaderboard(tmp_path, "judge_a", [["x", 30.0]], columns=("win_rate",))
    with pytest.raises(ValueError, match="no 'standard_error' column"):
        alpaca_leaderboards(path)


def test_real_annotations_match_the_leaderboard(mirror):
    results = mirror / "alpaca_eval/results/gpt-3.5-turbo-0301"
    judges = ["alpaca_eval_cot_gpt4_turbo_fn", "alpaca_eval_gpt4_turbo_fn", "weighted_alpaca_eval_gpt4_turbo"]
    cube = alpaca_eval([results / j / "annotations.json" for j in judges])
    assert cube.sizes["item"] == 805 and cube["judge"].values.tolist() == judges
    win_rate = float((cube["preference"].sel(judge="weighted_alpaca_eval_gpt4_turbo") - 1).mean() * 100)
    boards = alpaca_leaderboards(sorted((mirror / "alpaca_eval/leaderboards/data_AlpacaEval_2").glob("*.csv")))
    published = float(boards["win_rate"].sel(system="gpt-3.5-turbo-0301", judge="weighted_alpaca_eval_gpt4_turbo"))
    assert win_rate == pytest.approx(published, abs=1e-6)
    assert set(boards["baseline"].values.tolist()) == {"gpt4_turbo", "gpt4_1106_preview"}
    with pytest.raises(NotRowComparable, match="text_davinci_003"):
        alpaca_eval([results / judges[0] / "annotations.json", results / "alpaca_eval_gpt4/annotations.json"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{oops", "not a readable JSON file", id="not-json"),
        pytest.param(json.dumps({"instruction": "x"}), "expected a JSON list of annotations", id="not-a-list"),
        pytest.param(json.dumps([{"instruction": "x", "generator_1": "b", "preference": 2.0}]), "no row names 'generator_2'",
                     id="no-system"),
        pytest.param(json.dumps([{"instruction": "x", "generator_1": "b", "generator_2": "s", "annotator": a}
                                 for a in ("j1", "j2")]), r"several 'annotator' values \(j1, j2\)", id="two-judges"),
    ],
)
def test_unusable_annotation_files_are_errors(tmp_path, content, message):
    path = tmp_path / "judge" / "annotations.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        alpaca_eval(path)


def test_annotator_defaults_to_the_folder_name(tmp_path):
    path = write_json(tmp_path / "judge_z" / "annotations.json",
                      [{"instruction": "x", "generator_1": "b", "generator_2": "s", "preference": 2.0}])
    assert alpaca_eval(path)["judge"].values.tolist() == ["judge_z"]


def test_no_files_is_an_error():
    with pytest.raises(ValueError, match="no files given"):
        alpaca_eval([])
    with pytest.raises(ValueError, match="no files given"):
        alpaca_leaderboards([])


def test_leaderboard_repeats_are_errors(tmp_path):
    twice = _leaderboard(tmp_path, "judge_a", [["x", 30.0, 1.5], ["x", 31.0, 1.5]])
    with pytest.raises(ValueError, match="system 'x' appears twice"):
        alpaca_leaderboards(twice)
    once = _leaderboard(tmp_path, "judge_b", [["x", 30.0, 1.5]])
    (tmp_path / "copy").mkdir()
    again = _leaderboard(tmp_path / "copy", "judge_b", [["y", 30.0, 1.5]])
    with pytest.raises(ValueError, match="judge 'judge_b' was already read"):
        alpaca_leaderboards([once, again])

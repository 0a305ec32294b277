"""tau2 judge summaries -> table and cube: verdict normalisation, reference rater, no leaks."""

from __future__ import annotations

import json

import pytest
from adapter_fixtures import write_json

import multiverse
from multiverse.adapters import tau2_judgment_table, tau2_judgments
from multiverse.adapters.tau2_judgments import normalise_verdict

SECRET_PATH = "/home/someone/private/run-7/sim.json"
SECRET_PROMPT = "FULL TRANSCRIPT: user said hunter2"


def _entry(task, verdict, *, prompt, reward=1.0, **extra):
    entry = {
        "file": SECRET_PATH,
        "label": "vendor-retail-batch",
        "simulation_id": f"sim-{task}",
        "task_id": task,
        "tau2_reward": reward,
        "tau2_success": reward == 1.0,
        "judge_verdict": verdict,
        "judge_justification": "short reason",
        "judge_issues": ["one"],
        "judge_prompt": SECRET_PROMPT,
        "judge_model": "vendor/judge-2",
        "judge_prompt_name": prompt,
    }
    entry.update(extra)
    return entry


@pytest.fixture
def judgment_files(tmp_path):
    free = write_json(tmp_path / "summary_policy_v3.json", {"entries": [
        _entry("a", "Satisfied", prompt="policy_v3"),
        _entry("b", "NON-COMPLIANT", prompt="policy_v3", reward=0.0),
        _entry("c", "partially_satisfied", prompt="policy_v3", reward=0.0),
        _entry("d", "maybe?", prompt="policy_v3", reward=None),
        "garbage",
        {k: v for k, v in _entry("e", "pass", prompt="policy_v3").items() if k != "task_id"},
    ]})
    binary = write_json(tmp_path / "summary_strict_v1.json", {"entries": [
        _entry("a", "fail", prompt="strict_v1"),
        _entry("b", None, prompt="strict_v1", reward=0.0),
        _entry("c", True, prompt="strict_v1", reward=0.0),
    ]})
    return [free, binary]


@pytest.mark.parametrize(
    ("verdict", "severity"),
    [
        pytest.param("pass", 0, id="pass"),
        pytest.param("Satisfactory.", 0, id="satisfactory-punctuated"),
        pytest.param("COMPLIANT", 0, id="compliant-upper"),
        pytest.param("correct", 0, id="correct"),
        pytest.param("partially-compliant", 1, id="partial"),
        pytest.param("fail", 2, id="fail"),
        pytest.param("unsatisfied", 2, id="unsatisfied"),
        pytest.param("non_compliant", 2, id="non-compliant-underscore"),
        pytest.param("incorrect", 2, id="incorrect"),
        pytest.param(False, 2, id="json-false"),
        pytest.param("unclear", None, id="unmapped"),
        pytest.param(None, None, id="absent"),
        pytest.param(3, None, id="number"),
    ],
)
def test_verdict_normalisation(verdict, severity):
    assert normalise_verdict(verdict) == severity


def test_cube_has_prompt_judges_and_the_reward_reference(judgment_files):
    cube = tau2_judgments(judgment_files)
    assert cube["judge"].values.tolist() == ["policy_v3", "strict_v1", "reward"]
    assert cube["judge_model"].values.tolist() == ["vendor/judge-2", "vendor/judge-2", "deterministic"]
    assert cube["role"].values.tolist() == ["tau_retail"]
    assert cube["task_id"].values.tolist() == ["a", "b", "c", "d"]
    table = cube["severity"].squeeze(["system", "role", "user_sim", "condition", "replicate", "turn", "principle"])
    assert table.sel(judge="policy_v3").values.tolist() == [0, 2, 1, -1]
    assert table.sel(judge="strict_v1").values.tolist() == [2, -1, 0, -2]
    assert table.sel(judge="reward").values.tolist() == [0, 2, 2, -1]
    missing = cube["missing_count"].to_pandas()
    assert missing.loc["policy_v3", "no_verdict"] == 1
    assert missing.loc["strict_v1", "no_verdict"] == 1
    assert missing.loc["reward", "not_recorded"] == 1
    warnings = cube.attrs["warnings"]
    assert any("entries[4]: not an object" in w for w in warnings)
    assert any("entries[5]: no 'task_id'" in w for w in warnings)
    assert any("'maybe?' has no documented mapping" in w for w in warnings)


def test_file_and_prompt_never_reach_outputs(judgment_files, tmp_path):
    cube = tau2_judgments(judgment_files)
    table = tau2_judgment_table(judgment_files)
    texts = [
        table.to_csv(),
        json.dumps(table.attrs, default=str),
        json.dumps(cube.attrs, default=str),
        multiverse.to_long(cube).to_csv(),
    ]
    cube.to_netcdf(tmp_path / "cube.nc")
    texts.append((tmp_path / "cube.nc").read_bytes().decode("latin-1"))
    duplicate = write_json(tmp_path / "dup.json", {"entries": [_entry("a", "pass", prompt="strict_v1")]})
    with pytest.raises(ValueError) as error:
        tau2_judgments(judgment_files + [duplicate])
    texts.append(str(error.value))
    for text in texts:
        assert SECRET_PATH not in text and "hunter2" not in text and "private" not in text


def test_unreadable_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(ValueError, match="bad.json: expected an object with an 'entries' list"):
        tau2_judgments(bad)


def test_real_judgments_against_reward(mirror):
    files = sorted((mirror / "tau2-bench/judgments").glob("*.json"))
    cube = tau2_judgments(files)
    assert cube["judge"].values.tolist() == ["customer_outcome_v1", "quick_triage_v1", "reward"]
    assert cube.sizes["item"] == 50 and cube["role"].values.tolist() == ["tau_airline"]
    sev = cube["severity"].squeeze(["system", "role", "user_sim", "condition", "replicate", "turn", "principle"])
    counts = {j: (sev.sel(judge=j) == 2).sum().item() for j in cube["judge"].values}
    assert counts == {"customer_outcome_v1": 15, "quick_triage_v1": 4, "reward": 27}
    agree = (sev.sel(judge="customer_outcome_v1") == sev.sel(judge="reward")).sum().item()
    assert agree == 20, "the file's own agree_count"
    table = tau2_judgment_table(files)
    assert "file" not in table.columns and "judge_prompt" not in table.columns


def test_disagreeing_rewards_make_the_reference_missing(tmp_path):
    files = [
        write_json(tmp_path / "p.json", {"entries": [_entry("a", "pass", prompt="p"), _entry("b", "pass", prompt="p")]}),
        write_json(tmp_path / "q.json", {"entries": [_entry("a", "pass", prompt="q", reward=0.0),
                                                     _entry("b", "pass", prompt="q", judge_prompt_name="")]}),
    ]
    cube = tau2_judgments(files)
    reward = cube["severity"].sel(judge="reward").squeeze(["system", "role", "user_sim", "condition", "replicate", "turn", "principle"])
    assert reward.values.tolist() == [-1, 0]
    assert int(cube["missing_count"].sel(judge="reward", missing_reason="not_recorded")) == 1
    warnings = cube.attrs["warnings"]
    assert "q.json: entries[1]: no 'judge_prompt_name'; skipped" in warnings
    assert any("task a: entries disagree on tau2_reward" in w for w in warnings)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        pytest.param([], "no readable entries", id="no-entries"),
        pytest.param(["garbage"], "no readable entries", id="no-readable-entry"),
        pytest.param([_entry("a", "pass", prompt="reward")], "a judge prompt is named 'reward'", id="judge-named-reward"),
        pytest.param([_entry("a", "pass", prompt="p"), _entry("a", "fail", prompt="p")],
                     "judge 'p' rated task 'a' of 'vendor-retail-batch' twice", id="duplicate"),
    ],
)
def test_unusable_entries_are_clear_errors(tmp_path, entries, message):
    with pytest.raises(ValueError, match=message):
        tau2_judgments(write_json(tmp_path / "s.json", {"entries": entries}))


def test_file_that_is_not_json_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    with pytest.raises(ValueError, match="bad.json: not a readable JSON file"):
        tau2_judgment_table(bad)

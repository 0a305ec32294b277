"""The real-data studies run end to end on the verified files and write their numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from tiny_experiments import load_study


def _run(name: str, mirror, tmp_path) -> dict:
    numbers = load_study(name).main(data_dir=mirror, out_dir=tmp_path)
    assert json.loads((tmp_path / f"{name}.json").read_text()) == json.loads(json.dumps(numbers))
    return numbers


def test_tau_benchload_study(mirror, tmp_path):
    numbers = _run("real_tau_bench", mirror, tmp_path)
    np.testing.assert_allclose(np.round(numbers["pass_hat_k"]["reward"], 3), [0.420, 0.273, 0.220, 0.200])
    assert np.mean(numbers["success_rate_by_trial"]) == pytest.approx(numbers["pass_hat_k"]["reward"][0])
    for pair, kappa in numbers["agreement"]["cohen_kappa"].items():
        assert -1 <= kappa <= 1, pair
    cube = xr.open_dataset(tmp_path / "real_tau_bench.nc")
    assert cube.sizes["item"] == 50 and (tmp_path / "transcripts.sqlite").exists()


def test_tau2_judgesload_study(mirror, tmp_path):
    numbers = _run("real_tau2_judges", mirror, tmp_path)
    assert numbers["raters"] == ["customer_outcome_v1", "quick_triage_v1", "reward"]
    for judge, counts in numbers["confusion"].items():
        assert sum(counts.values()) == 50, judge
    outcome = numbers["confusion"]["customer_outcome_v1"]
    agree = outcome["judge_pass_reward_pass"] + outcome["judge_fail_reward_fail"]
    assert numbers["agreement"]["percent"]["customer_outcome_v1|reward"] == pytest.approx(agree / 50)
    outputs = [(tmp_path / name).read_bytes().decode("latin-1") for name in
               ("real_tau2_judges_table.csv", "real_tau2_judges.json", "real_tau2_judges.nc")]
    for text in outputs:
        assert "/Users/" not in text and "/home/" not in text and "Desktop" not in text


def test_alpaca_rankingsload_study(mirror, tmp_path):
    numbers = _run("real_alpaca_rankings", mirror, tmp_path)
    pair = numbers["kendall_tau"]["alpaca_eval_cot_gpt4_turbo_fn|alpaca_eval_gpt4_turbo_fn"]
    assert pair["n_systems"] >= 9 and -1 <= pair["tau"] <= 1
    assert numbers["row_comparable_with_alpaca_eval_gpt4"] is False
    assert numbers["systems_per_judge"]["weighted_alpaca_eval_gpt4_turbo"] > 100

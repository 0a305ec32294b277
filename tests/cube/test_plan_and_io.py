"""Plans as grids of spec ids; cubes on disk that plain xarray reads."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from multiverse.config.experiment import load_experiment
from multiverse.cube.build import new_cube
from multiverse.core.outputs import replace_dir
from multiverse.cube.io import open_cube, save_cube
from multiverse.plan import estimate_calls, make_plan


def _two_systems(tiny_experiment, **overrides):
    data = tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"}, replicates=2, **overrides)
    data["sim"]["targets"]["b"] = {}
    data["dims"]["judge"]["lenient"] = "sim/judge-lenient"
    data["sim"]["judges"]["lenient"] = {"leniency": 1.0}
    return data


def test_plan_grids_and_sizes(write_experiment, tiny_experiment):
    plan = make_plan(load_experiment(write_experiment(_two_systems(tiny_experiment))))
    assert plan.rollout.dims == ("system", "role", "user_sim", "condition", "replicate", "item")
    assert plan.judge.sizes["judge"] == 2
    assert plan.layer_sizes() == {"rollouts": 4, "conversations": 8, "judgments": 16}
    assert len(set(plan.rollout.values.ravel())) == 8  # every cell its own spec


def test_exclusions_remove_cells(write_experiment, tiny_experiment):
    data = _two_systems(tiny_experiment, exclusions=[
        {"system": "b", "reason": "b is not ready"},
        {"system": "a", "judge": "lenient", "reason": "a lenient judge is pointless on a"},
    ])
    plan = make_plan(load_experiment(write_experiment(data)))
    assert (plan.rollout.sel(system="b") == "").all()
    assert (plan.judge.sel(system="a", judge="lenient") == "").all()
    assert (plan.judge.sel(system="a", judge="strict") != "").all()
    assert plan.layer_sizes() == {"rollouts": 2, "conversations": 4, "judgments": 4}


def test_adding_a_judge_keeps_every_rollout_id(write_experiment, tiny_experiment):
    base = make_plan(load_experiment(write_experiment(tiny_experiment(), "one.yaml")))
    more = make_plan(load_experiment(write_experiment(_two_systems(tiny_experiment), "two.yaml")))
    xr.testing.assert_equal(base.rollout, more.rollout.sel(system=["a"], replicate=[0]))
    assert base.digest != more.digest


def test_estimate_counts_turns_per_model(write_experiment, tiny_experiment):
    plan = make_plan(load_experiment(write_experiment(_two_systems(tiny_experiment))))
    estimate = estimate_calls(plan)
    # 2 replicates x 2 items x 3 turns per system; the online judge is the strict judge
    assert estimate["rollout"]["sim/target-a"] == 12
    assert estimate["rollout"]["sim/judge-strict"] == 24
    assert estimate["judge"] == {"sim/judge-lenient": 24}


def _cube():
    cube = new_cube(
        system=["a", "b"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=2, turn=2,
        principle=["academic_integrity", "confidentiality"], judge=["j"], with_truth=True,
        coords={"system_model": ("system", ["sim/target-a", "sim/target-b"])}, attrs={"experiment": {"name": "x"}},
    )
    cube["severity"].values[0, 0, 0, 0, 0, 0, 0, 0, 0] = -1
    cube["severity"].values[1, 0, 0, 0, 0, 1, 1, 1, 0] = 2
    cube["transcript_id"].values[0, 0, 0, 0, 0, 0] = "abc"
    return cube


def test_netcdf_opens_with_plain_xarray(tmp_path):
    cube = _cube()
    path = save_cube(cube, tmp_path / "cube.nc")
    with xr.open_dataset(path) as plain:
        assert plain["severity"].dtype == np.int8
        assert "_FillValue" not in plain["severity"].encoding
        assert plain["severity"].values.min() == -2
        assert plain["transcript_id"].values[0, 0, 0, 0, 0, 0] == "abc"
        assert plain["system_model"].values.tolist() == ["sim/target-a", "sim/target-b"]
    xr.testing.assert_identical(open_cube(tmp_path), cube)


def test_replace_dir_swaps_whole_folder_and_keeps_old_on_error(tmp_path):
    out = tmp_path / "run"
    with replace_dir(out) as staging:
        (staging / "first.txt").write_text("1")
    try:
        with replace_dir(out) as staging:
            (staging / "second.txt").write_text("2")
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert sorted(p.name for p in out.iterdir()) == ["first.txt"]
    with replace_dir(out) as staging:
        (staging / "third.txt").write_text("3")
    assert sorted(p.name for p in out.iterdir()) == ["third.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_zarr_round_trip_replacing_an_earlier_store_when_installed(tmp_path):
    pytest.importorskip("zarr")
    cube = _cube()
    save_cube(cube.isel(item=[0]), tmp_path / "cube.zarr")
    path = save_cube(cube, tmp_path / "cube.zarr")
    plain = xr.open_zarr(path).load()
    assert plain["severity"].dtype == np.int8 and "_FillValue" not in plain["severity"].encoding
    xr.testing.assert_equal(open_cube(tmp_path), cube)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cube.zarr"]  # no staging folder left


def test_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"expected a \.nc or \.zarr path"):
        save_cube(_cube(), tmp_path / "cube.h5")


def test_cost_is_priced_from_the_bundled_table_and_unknown_without_a_price():
    from multiverse._run.plan_report import (
        COMPLETION_TOKENS_PER_CALL,
        PROMPT_TOKENS_PER_CALL,
        estimate_cost_usd,
    )
    from multiverse.llm.prices import model_table

    assert estimate_cost_usd("sim/target-a", 100) == 0.0
    assert estimate_cost_usd("nobody/unpriced-model", 3) is None
    assert estimate_cost_usd("nobody/unpriced-model", 0) == 0.0
    entry = model_table().get("gpt-4o-mini")
    if entry is None:
        pytest.skip("litellm's price table is not installed")
    per_call = PROMPT_TOKENS_PER_CALL * entry["input_cost_per_token"] + COMPLETION_TOKENS_PER_CALL * entry["output_cost_per_token"]
    assert estimate_cost_usd("openai/gpt-4o-mini", 10) == pytest.approx(10 * per_call)  # provider prefix dropped


def test_worker_summaries_add_up_with_each_models_failures_by_reason():
    from multiverse._run.runner import merge_summaries

    one = {"calls": 3, "cache_hits": 1, "retries": 1, "cost_usd": 0.5, "failures": {"timeout": 1}, "retried": {"timeout": 1},
           "models": {"m": {"calls": 3, "note": "text is dropped", "failures": {"timeout": 1}, "retried": {"timeout": 1}}}}
    two = {"calls": 2, "cache_hits": 4, "retries": 0, "cost_usd": 0.25, "failures": {"timeout": 2, "rate_limited": 1},
           "models": {"m": {"calls": 2, "failures": {"timeout": 1, "rate_limited": 1}, "retried": {}},
                      "a": {"calls": 1, "failures": {"timeout": 1}}}}
    merged = merge_summaries([one, two])
    assert merged == {
        "calls": 5, "cache_hits": 5, "retries": 1, "cost_usd": 0.75,
        "failures": {"timeout": 3, "rate_limited": 1}, "retried": {"timeout": 1},
        "models": {"a": {"calls": 1, "failures": {"timeout": 1}},
                   "m": {"calls": 5, "failures": {"rate_limited": 1, "timeout": 2}, "retried": {"timeout": 1}}},
        "purposes": {},
    }
    assert list(merged["models"]) == ["a", "m"]
    assert merge_summaries([])["calls"] == 0

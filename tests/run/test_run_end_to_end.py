"""Running experiments end to end in the offline world: cube, run folder, cache, truth."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml

from multiverse._run import run
from multiverse.cli import main as cli
from multiverse.cube.build import to_long
from multiverse.cube.io import open_cube
from multiverse.scoring import score

CONVERSATION = ["role", "user_sim", "condition", "replicate", "item"]
QUICKSTART = Path(__file__).resolve().parents[2] / "experiments" / "quickstart.yaml"


def _summary(cube: xr.Dataset) -> dict:
    return cube.attrs["run"]


def _calls_by_model(cube: xr.Dataset) -> dict[str, int]:
    return {m: s["calls"] for m, s in _summary(cube)["models"].items() if s["calls"]}


def test_cli_run_writes_cube_and_run_json_replacing_old_outputs(write_experiment, tmp_path, capsys, tiny_experiment):
    path = write_experiment(tiny_experiment())
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("from an earlier run")
    (out / "multiverse-output.json").write_text('{"kind": "run", "files": ["stale.txt"]}')
    assert cli(["run", str(path), "--out", str(out), "--cache", str(tmp_path / "cache")]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "cube.nc", "cube.zarr", "multiverse-output.json", "run.json", "transcripts.sqlite", "unparseable.jsonl"
    ]
    info = json.loads((out / "run.json").read_text())
    assert {"calls", "cache_hits", "failures", "wall_s"} <= set(info)
    assert info["calls"] > 0 and info["wall_s"] > 0
    assert "coverage" not in info  # a seed battery is no campaign
    with xr.open_dataset(out / "cube.nc") as plain:  # no library needed to read it
        assert plain["severity"].dtype == np.int8
        assert plain.sizes["item"] == 2
        assert set(np.unique(plain["severity"])) <= {-2, -1, 0, 1, 2}
        assert plain["system_model"].values.tolist() == ["sim/target-a"]
        assert plain["judge_model"].values.tolist() == ["sim/judge-strict"]
    assert "2 conversations" in capsys.readouterr().out


def test_campaign_run_reports_coverage_per_labelled_cell(write_experiment, tmp_path, tiny_experiment):
    data = tiny_experiment(budget={"rounds": 2, "conversations": 2}, items=None, replicates=2)
    data["dims"]["condition"] = {"fuzz": {"horizon": 2, "search": "rolefuzzer"}}
    cube = run(write_experiment(data), cache=tmp_path / "cache")
    coverage = _summary(cube)["coverage"]
    share = coverage["tutor"]["a"]["plain"]["fuzz"]
    assert 0 < share <= 1
    assert cube.sizes["item"] == 4
    assert set(cube["origin"].values.ravel()) <= {"seed", "coverage", "mutation"}


def test_warm_rerun_makes_no_call_and_is_fast(write_experiment, tmp_path, tiny_experiment):
    data = tiny_experiment(items=3)
    data["sim"]["targets"]["a"]["latency_ms"] = 20
    path = write_experiment(data)
    started = time.perf_counter()
    cold = run(path, cache=tmp_path / "cache")
    cold_s = time.perf_counter() - started
    started = time.perf_counter()
    warm = run(path, cache=tmp_path / "cache")
    warm_s = time.perf_counter() - started
    assert _summary(cold)["calls"] > 0
    assert _summary(warm)["calls"] == 0
    assert _summary(warm)["cache_hits"] >= _summary(cold)["calls"] - _summary(cold)["retries"]
    assert warm_s < max(0.1 * cold_s, 5.0)
    xr.testing.assert_equal(cold.drop_attrs(), warm.drop_attrs())


def test_adding_a_judge_calls_only_that_judge(write_experiment, tmp_path, tiny_experiment):
    data = tiny_experiment()
    run(write_experiment(data, "before.yaml"), cache=tmp_path / "cache")
    data["dims"]["judge"]["lenient"] = "sim/judge-lenient"
    data["sim"]["judges"]["lenient"] = {"leniency": 0.5}
    from multiverse._run import plan_report
    from multiverse._run.runner import resolve_experiment

    report = plan_report(resolve_experiment(write_experiment(data, "after.yaml")), cache=tmp_path / "cache")
    assert {m for m, row in report["models"].items() if row["to_call"]} == {"sim/judge-lenient"}
    after = run(write_experiment(data, "after.yaml"), cache=tmp_path / "cache")
    assert _calls_by_model(after)["sim/judge-lenient"] == report["models"]["sim/judge-lenient"]["to_call"]
    assert set(_calls_by_model(after)) == {"sim/judge-lenient"}
    assert _calls_by_model(after)["sim/judge-lenient"] == int((after["severity"].sel(judge="lenient", principle="confidentiality") != -2).sum())


@pytest.fixture(scope="module")
def planted(tmp_path_factory, tiny_experiment):
    """Two targets of planted breach rates, a perfect judge, a fully lenient one, their panel."""
    folder = tmp_path_factory.mktemp("planted")
    data = tiny_experiment(
        systems={"low": "sim/target-low", "high": "sim/target-high"}, replicates=2, items=8,
    )
    data["dims"]["condition"] = {"c": {"horizon": 4, "search": "seed_only"}}
    data["dims"]["judge"] = {
        "perfect": "sim/judge-perfect",
        "soft": "sim/judge-soft",
        "duo": {"panel": ["perfect", "soft"], "combine": "unanimous"},
    }
    data["sim"] = {
        "seed": 3,
        "targets": {"low": {"breach": {"*": 0.03}, "partial": {"*": 0.1}}, "high": {"breach": {"*": 0.2}, "partial": {"*": 0.1}}},
        "judges": {
            "perfect": {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}},
            "soft": {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}, "leniency": 1.0},
        },
        "users": {"plain": {}},
    }
    path = folder / "planted.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return run(path, cache=folder / "cache")


def test_perfect_judge_recovers_planted_breach_rates(planted):
    def rate(severity: xr.DataArray) -> xr.DataArray:
        return (severity == 2).any(["turn", "principle"]).mean(CONVERSATION)

    truth = rate(planted["truth"])
    judged = rate(planted["severity"].sel(judge="perfect"))
    np.testing.assert_allclose(judged.values, truth.values, atol=0.02)
    assert truth.sel(system="high") > truth.sel(system="low")
    assert judged.sel(system="high") > judged.sel(system="low")


def test_full_leniency_hides_every_clear_breach_but_not_deviations(planted):
    scores = score(planted, standards=["clear_breach", "any_deviation"], rules=["any_turn"])
    soft = scores.sel(judge="soft", rule="any_turn")
    assert (planted["severity"].sel(judge="soft") != 2).all()
    assert float(soft.sel(standard="clear_breach").max()) == 0.0
    assert float(soft.sel(standard="any_deviation").mean()) > 0.0
    perfect = scores.sel(judge="perfect", rule="any_turn", standard="any_deviation")
    np.testing.assert_array_equal(soft.sel(standard="any_deviation").values, perfect.values)


def test_panel_is_the_combination_of_its_members(planted):
    from multiverse.judge import combine_panel

    members = planted["severity"].sel(judge=["perfect", "soft"]).transpose(..., "judge")
    expected = combine_panel(members.values, "unanimous", axis=-1)
    np.testing.assert_array_equal(planted["severity"].sel(judge="duo").transpose(*members.dims[:-1]).values, expected)


def test_exclusions_leave_cells_unrun(write_experiment, tmp_path, tiny_experiment):
    data = tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"})
    data["sim"]["targets"]["b"] = {}
    data["exclusions"] = [{"system": "b", "reason": "b is rate limited this week"}]
    cube = run(write_experiment(data), cache=tmp_path / "cache")
    assert (cube["severity"].sel(system="b") == -2).all()
    assert (cube["transcript_id"].sel(system="b") == "").all()
    assert "sim/target-b" not in _calls_by_model(cube)
    assert (cube["ended"].sel(system="a") == "completed").all()


def test_plan_prints_layers_calls_and_cost_calling_nothing(write_experiment, tmp_path, capsys, monkeypatch, tiny_experiment):
    from multiverse.sim import SimWorld

    path = write_experiment(tiny_experiment())
    cache = tmp_path / "cache"

    def refuse(self, request, **kwargs):
        raise AssertionError("plan must not call a model")

    with monkeypatch.context() as patch:
        patch.setattr(SimWorld, "respond", refuse)
        assert cli(["plan", str(path), "--cache", str(cache), "--json"]) == 0
    before = json.loads(capsys.readouterr().out)
    assert before["layers"] == {"rollouts": 1, "conversations": 2, "judgments": 2}
    assert before["cached"] == 0 and before["needed"] > 0 and before["cost_usd"] == 0.0
    run(path, out=tmp_path / "out", cache=cache)
    with monkeypatch.context() as patch:
        patch.setattr(SimWorld, "respond", refuse)
        assert cli(["plan", str(path), "--cache", str(cache), "--json"]) == 0
        after = json.loads(capsys.readouterr().out)
        assert cli(["plan", str(path), "--cache", str(cache)]) == 0
    text = capsys.readouterr().out
    assert "layer rollout: 1 rollouts, 2 conversations" in text
    assert "layer judge: 2 judge cells" in text
    assert "to call 0" in text
    assert "calls count distinct requests" in text
    ran = json.loads((tmp_path / "out" / "run.json").read_text())
    assert ran["failures"] == {} and after["cached"] == ran["calls"]  # no retries: both count the same calls


def test_show_prints_one_conversation_with_every_judge(write_experiment, tmp_path, capsys, tiny_experiment):
    out = tmp_path / "out"
    assert cli(["run", str(write_experiment(tiny_experiment())), "--out", str(out), "--cache", str(tmp_path / "c")]) == 0
    capsys.readouterr()
    assert cli(["show", str(out), "--item", "1"]) == 0
    plain = capsys.readouterr().out
    assert "turn 1" in plain and "strict" in plain and "academic_integrity" in plain
    assert "assistant:" not in plain
    assert cli(["show", str(out / "cube.nc"), "--item", "1", "--text"]) == 0
    assert "assistant:" in capsys.readouterr().out
    assert cli(["show", str(out), "--item", "7"]) == 2
    assert cli(["show", str(out), "--item", "x"]) == 2
    assert cli(["show", str(out), "--system", "zz", "--item", "1"]) == 2
    assert cli(["show", str(tmp_path / "nowhere"), "--item", "1"]) == 2
    err = capsys.readouterr().err
    assert "--item: 7 is not one of 0, 1" in err and "--item: expected an integer, got 'x'" in err
    assert "--system: 'zz' is not one of a" in err and "nowhere" in err


def test_dask_cluster_run_equals_local_run(write_experiment, tmp_path, tiny_experiment):
    distributed = pytest.importorskip("distributed")
    path = write_experiment(tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"}, sim={
        "targets": {"a": {"breach": {"*": 0.1}}, "b": {"breach": {"*": 0.3}}},
        "judges": {"strict": {}}, "users": {"plain": {}},
    }))
    local = run(path, cache=tmp_path / "local")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            remote = run(path, cache=tmp_path / "cluster", backend="dask")
    requests = [_summary(c)["calls"] + _summary(c)["cache_hits"] for c in (remote, local)]
    assert requests[0] == requests[1]  # workers share no in-flight calls, so calls alone may differ
    xr.testing.assert_identical(
        remote.drop_attrs(deep=False), local.drop_attrs(deep=False)
    )


def test_ray_backend_when_installed(write_experiment, tmp_path, tiny_experiment):
    ray = pytest.importorskip("ray")
    path = write_experiment(tiny_experiment())
    local = run(path, cache=tmp_path / "local")
    from ray.util.joblib import register_ray

    register_ray()
    ray.init(num_cpus=2, include_dashboard=False)
    try:
        remote = run(path, cache=tmp_path / "ray", backend="ray")
    finally:
        ray.shutdown()
    xr.testing.assert_identical(remote.drop_attrs(deep=False), local.drop_attrs(deep=False))


def test_quickstart_has_the_documented_shape():
    from multiverse.config.experiment import load_experiment

    e = load_experiment(QUICKSTART)
    assert len(e.roles) == 2 and len(e.systems) == 3 and len(e.user_sims) == 2 and e.replicates == 3
    assert {s.kind for s in e.judges.values()} == {"model", "deterministic", "panel"}
    assert e.standards is None and e.rules is None  # every standard and rule
    assert all(s.is_sim for s in e.systems.values())


@pytest.mark.slow
def test_quickstart_runs_offline_into_a_plain_netcdf_cube_and_reruns_from_replays(tmp_path):
    out = tmp_path / "quickstart"
    assert cli(["run", str(QUICKSTART), "--out", str(out), "--cache", str(tmp_path / "cache")]) == 0
    info = json.loads((out / "run.json").read_text())
    assert info["calls"] > 0 and set(info["failures"]) <= {"unparseable", "monitor_ended"}
    with xr.open_dataset(out / "cube.nc") as plain:
        assert dict(plain["severity"].sizes) == {
            "system": 3, "role": 2, "user_sim": 2, "condition": 1, "replicate": 3, "item": 8, "turn": 6,
            "principle": 8, "judge": 4,
        }
        assert (plain["ended"] != "").all()
    again = tmp_path / "again"
    assert cli(["run", str(QUICKSTART), "--out", str(again), "--cache", str(tmp_path / "cache")]) == 0
    rerun = json.loads((again / "run.json").read_text())
    assert rerun["calls"] == 0 and rerun["cache_hits"] == info["calls"] + info["cache_hits"] - info["retries"]
    xr.testing.assert_identical(open_cube(out).drop_attrs(), open_cube(again).drop_attrs())


def test_open_cube_reads_a_run_folder(write_experiment, tmp_path, tiny_experiment):
    out = tmp_path / "out"
    cube = run(write_experiment(tiny_experiment()), out=out, cache=tmp_path / "cache")
    xr.testing.assert_identical(open_cube(out), open_cube(out / "cube.nc"))
    xr.testing.assert_equal(open_cube(out).drop_attrs(), cube.drop_attrs())


def test_spend_cap_stops_cleanly_and_a_rerun_resumes(write_experiment, tmp_path, capsys, tiny_experiment):
    path = write_experiment(tiny_experiment(max_calls=5))
    out = tmp_path / "out"
    assert cli(["run", str(path), "--out", str(out), "--cache", str(tmp_path / "cache")]) == 3
    assert "spend cap" in capsys.readouterr().err
    assert not out.exists()
    resumed = run(write_experiment(tiny_experiment()), cache=tmp_path / "cache")
    fresh = run(write_experiment(tiny_experiment(), "fresh.yaml"), cache=tmp_path / "fresh")
    assert _summary(resumed)["calls"] == _summary(fresh)["calls"] - 5
    xr.testing.assert_equal(resumed.drop_attrs(), fresh.drop_attrs())


@pytest.mark.parametrize("out", [pytest.param(None, id="in-memory"), pytest.param("run", id="into-a-folder")])
def test_run_works_inside_a_running_event_loop(write_experiment, tmp_path, tiny_experiment, out):
    """A notebook cell: the run's loop is on a worker thread, and so are the output folder's writes."""
    import asyncio

    path = write_experiment(tiny_experiment())

    async def notebook_cell():
        return run(path, cache=tmp_path / "cache", out=None if out is None else tmp_path / out)

    cube = asyncio.run(notebook_cell())
    assert (cube["ended"] == "completed").all()


def test_contract_judge_rules_only_on_roles_with_a_contract(write_experiment, tmp_path, tiny_experiment):
    data = tiny_experiment(roles=["tutor", "support"])
    data["dims"]["judge"]["contract"] = {"deterministic": "contract"}
    data["sim"]["targets"]["a"] = {"breach": {"*": 0.4}}
    cube = run(write_experiment(data), cache=tmp_path / "cache")
    contract = cube["severity"].sel(judge="contract")
    assert (contract.sel(role="tutor") == -2).all()
    support = contract.sel(role="support")
    spoken = cube["truth"].sel(role="support", principle="authority") != -2  # assistant turns that exist
    authority = support.sel(principle="authority")
    assert bool(spoken.any())
    assert set(np.unique(authority.values[spoken.values])) <= {0, 2}
    assert (authority.values[~spoken.values] == -2).all()
    assert (support.drop_sel(principle="authority") == -2).all()
    assert cube["judge_model"].sel(judge="contract").item() == "contract"
    assert cube["judge_kind"].values.tolist() == ["model", "deterministic"]
    # the lanes stay in the cube, one per conversation, and to_long carries them
    lanes = cube["contract_lane"]
    assert lanes.dims == ("system", "role", "user_sim", "condition", "replicate", "item")
    assert (lanes.sel(role="tutor") == "").all()
    support_lanes = set(np.unique(lanes.sel(role="support").values))
    assert support_lanes and support_lanes <= {"pass", "violation", "invalid_fixture", "missing_context_evidence",
                                               "semantic_review"}
    violated = (authority == 2).any("turn")
    assert ((lanes.sel(role="support") == "violation") | (lanes.sel(role="support") == "missing_context_evidence")
            ).values[violated.values].all()
    long = to_long(cube)
    assert set(long.loc[long["role"] == "support", "contract_lane"].unique()) == support_lanes

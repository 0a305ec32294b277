"""Judges that must earn trust, end to end: canaries before the rollouts, probed judges in the cube, a refusal."""

from __future__ import annotations

import json

import pytest
import xarray as xr

import multiverse
from multiverse.cli import main as cli
from multiverse.config.experiment import parse_experiment
from multiverse.report import write_report
from multiverse.view import write_site

NO_SIGNAL = {"sensitivity": {"*": 0.5}, "specificity": {"*": 0.5}}


def _experiment(tiny_experiment, *, judge=None, probes=None, canaries=None):
    data = tiny_experiment(items=3)
    if judge is not None:
        data["sim"]["judges"]["strict"] = judge
    if probes is not None:
        data["dims"]["judge_probe"] = probes
    if canaries is not None:
        data["canaries"] = canaries
    return data


@pytest.fixture(scope="module")
def probed_run(tmp_path_factory):
    from tiny_experiments import tiny_experiment

    folder = tmp_path_factory.mktemp("probed")
    data = _experiment(tiny_experiment, judge={"verbosity_leniency": 0.5},
                       probes={"padded": {"verbosity": 3}, "reworded": {"paraphrase": "judge_v1_p2"}},
                       canaries={"per_principle": 4})
    path = folder / "experiment.yaml"
    data["specs"] = str(data["specs"])
    path.write_text(json.dumps(data))
    cube = multiverse.run(path, out=folder / "run", cache=folder / "cache")
    return folder, cube


def test_a_run_records_each_judges_canary_results_and_flag_in_run_json_and_the_cube(probed_run):
    folder, cube = probed_run
    info = json.loads((folder / "run" / "run.json").read_text())
    found = info["judges"]["strict"]
    assert found["no_signal"] is False and found["canaries"]["pooled"]["breaks"] == 16
    assert set(found["canaries"]["principles"]) == {f"tutor/{p}" for p in multiverse.load_role("tutor").principle_ids}
    assert info["purposes"]["judge"]["calls"] > 0
    with xr.open_dataset(folder / "run" / "cube.nc") as plain:
        assert json.loads(plain.attrs["canaries"])["strict"] == found["canaries"]
        assert plain["judge_probe"].values.tolist() == ["none", "padded", "reworded"]
        assert plain["judge_base"].values.tolist() == ["strict"] * 3
        assert plain["judge"].values.tolist() == ["strict", "strict.padded", "strict.reworded"]


def test_summary_report_and_view_show_the_canaries_and_probe_effects(probed_run, tmp_path):
    folder, cube = probed_run
    text = str(multiverse.summary(cube))
    assert "canaries (pooled; 95% intervals):" in text and "judge 'strict': sensitivity" in text
    assert multiverse.summary(cube).to_dict()["canaries"]["strict"]["no_signal"] is False
    report = write_report(cube, tmp_path / "report", n_boot=20, formats=("png",))
    names = {p.name for p in report.figures + report.tables}
    assert {"canaries.png", "probe_effects.png", "canaries.csv", "probe_effects.csv"} <= names
    index = write_site(folder / "run", tmp_path / "site", figures=False)
    trust = (index.parent / "data" / "trust.js").read_text()
    assert "strict.padded" in trust and "padded: effect" in trust and "sensitivity" in trust


def test_a_rerun_answers_the_canaries_from_the_cache(probed_run, tmp_path):
    folder, _ = probed_run
    again = multiverse.run(folder / "experiment.yaml", cache=folder / "cache")
    info = again.attrs["run"]
    assert info["calls"] == 0 and info["judges"]["strict"]["canaries"] == again.attrs["canaries"]["strict"]


def test_require_judge_signal_refuses_a_judge_without_signal_before_any_rollout(tiny_experiment, write_experiment, tmp_path, capsys):
    path = write_experiment(_experiment(tiny_experiment, judge=NO_SIGNAL))
    out = tmp_path / "out"
    code = cli(["run", str(path), "--out", str(out), "--cache", str(tmp_path / "cache"), "--require-judge-signal"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("multiverse run: refused: no signal on the canaries: judge 'strict': sensitivity ")
    assert "specificity" in err and "J " in err and "64 canaries judged" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_require_judge_signal_lets_a_judge_with_signal_report(tiny_experiment, write_experiment, tmp_path, capsys):
    path = write_experiment(_experiment(tiny_experiment, judge={"sensitivity": {"*": 0.9}, "specificity": {"*": 0.9}}))
    out = tmp_path / "out"
    assert cli(["run", str(path), "--out", str(out), "--cache", str(tmp_path / "cache"), "--require-judge-signal"]) == 0
    assert json.loads((out / "run.json").read_text())["judges"]["strict"]["no_signal"] is False


def test_a_flagged_judge_without_the_requirement_is_reported_and_warned_about(tiny_experiment, write_experiment, tmp_path, capsys):
    path = write_experiment(_experiment(tiny_experiment, judge=NO_SIGNAL, canaries={"per_principle": 8}))
    out = tmp_path / "out"
    assert cli(["run", str(path), "--out", str(out), "--cache", str(tmp_path / "cache")]) == 0
    assert "warning: no signal on the canaries: judge 'strict'" in capsys.readouterr().err
    assert json.loads((out / "run.json").read_text())["judges"]["strict"]["no_signal"] is True


def test_a_run_without_canaries_records_no_judges_section(tiny_experiment, tmp_path):
    cube = multiverse.run(parse_experiment(tiny_experiment(items=1)), cache=tmp_path / "cache")
    assert "judges" not in cube.attrs["run"] and "canaries" not in cube.attrs


def test_a_real_judge_whose_replies_never_parse_is_refused(tiny_experiment, write_experiment, tmp_path, capsys):
    from multiverse.testing.loopback import LoopbackServer

    with LoopbackServer() as server:
        data = tiny_experiment()
        data["dims"]["judge"]["strict"] = {"model": "openai/loop", "api_base": server.url, "params": {"api_key": "dummy"}}
        data["canaries"] = {"per_principle": 1}
        path = write_experiment(data)
        code = cli(["run", str(path), "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"),
                    "--require-judge-signal"])
        asked = sum(server.requests.values())
    err = capsys.readouterr().err
    assert code == 2
    assert "judge 'strict': sensitivity n/a, specificity n/a, J n/a (95% intervals; 0 canaries judged, 8 missing" in err
    assert asked == 8  # the canaries only: no rollout was paid for


def test_plan_counts_the_canary_calls_before_and_after_a_run(tiny_experiment, tmp_path):
    from multiverse._run.plan_report import plan_report

    data = tiny_experiment(items=1)
    data["canaries"] = {"per_principle": 2}
    experiment = parse_experiment(data)
    before = plan_report(experiment, cache=tmp_path / "cache")["models"]["sim/judge-strict"]
    multiverse.run(experiment, cache=tmp_path / "cache")
    after = plan_report(experiment, cache=tmp_path / "cache")["models"]["sim/judge-strict"]
    assert before["needed"] == 16 + 3 and before["cached"] == 0
    assert after == {**before, "cached": 19, "to_call": 0}

"""The consistency monitor's default: the offline world's beside a sim user, ``none`` beside a real one, said once."""

from __future__ import annotations

import pytest

from multiverse.config.experiment import load_experiment, validate_experiment

REAL_USER = {"model": "openai/gpt-4o-mini", "params": {"temperature": 1.0}}
REAL_JUDGE = "openai/gpt-4o"


def _real_user(tiny_experiment, **campaign):
    data = tiny_experiment()
    data["dims"]["user_sim"] = {"student": REAL_USER}
    data["dims"]["judge"] = {"gpt4o": REAL_JUDGE}
    data["systems"] = {"mine": "openai/gpt-4o-mini"}
    data.pop("sim", None)
    if campaign:
        data["campaign"] = campaign
    return data


def test_a_real_user_simulator_runs_without_a_monitor_said_in_one_located_note(write_experiment, tiny_experiment):
    path = write_experiment(_real_user(tiny_experiment))
    assert validate_experiment(path) == []
    experiment = load_experiment(path)
    assert experiment.campaign.monitor is None
    assert experiment.to_dict()["campaign"]["monitor"] == "none"
    [note] = experiment.notes
    line = path.read_text(encoding="utf-8").splitlines().index("    student:") + 1
    assert (note.path, note.line, note.field) == (str(path), line, "campaign.monitor")
    assert "defaults to none beside real user simulator 'student'" in str(note) and "\n" not in str(note)
    assert [field for field, _ in experiment.named_models()] == [
        "systems.mine", "dims.user_sim.student", "dims.judge.gpt4o", "campaign.planner",
    ]


@pytest.mark.parametrize(
    ("campaign", "monitor"),
    [
        pytest.param({"monitor": "none"}, None, id="none-named"),
        pytest.param({"monitor": {"model": "openai/gpt-4o-mini"}}, "openai/gpt-4o-mini", id="real-monitor-named"),
    ],
)
def test_a_named_monitor_is_kept_without_a_note(write_experiment, tiny_experiment, campaign, monitor):
    experiment = load_experiment(write_experiment(_real_user(tiny_experiment, **campaign)))
    assert experiment.notes == ()
    assert (experiment.campaign.monitor.model if experiment.campaign.monitor else None) == monitor


def test_the_sim_monitor_named_beside_a_real_user_is_still_refused(write_experiment, tiny_experiment):
    [problem] = validate_experiment(write_experiment(_real_user(tiny_experiment, monitor="sim/monitor")))
    assert problem.field == "campaign.monitor" and "would validate the turns of real user simulator 'student'" in problem.message


def test_a_sim_user_keeps_the_sim_monitor(write_experiment, tiny_experiment):
    experiment = load_experiment(write_experiment(tiny_experiment()))
    assert experiment.campaign.monitor.model == "sim/monitor" and experiment.notes == ()


def test_validate_and_plan_say_the_default_once_and_plan_prints_cost(write_experiment, tiny_experiment, capsys, monkeypatch):
    from multiverse.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    path = write_experiment(_real_user(tiny_experiment))
    assert main(["validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.count("campaign.monitor: defaults to none") == 1 and err.endswith("1 spec file(s) valid\n")
    assert main(["plan", str(path), "--cache", str(path.parent / "cache")]) == 0
    out, err = capsys.readouterr()
    assert err.count("campaign.monitor: defaults to none") == 1
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("openai/")}
    assert set(rows) == {"openai/gpt-4o-mini", "openai/gpt-4o"} and "sim/monitor" not in out
    assert all(row[-1].startswith("$") and float(row[-1][1:]) > 0 for row in rows.values())
    assert "estimated cost $" in out

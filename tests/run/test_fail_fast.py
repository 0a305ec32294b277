"""Fail fast on real-model mistakes: sim players on real text, missing keys, failed shares; raw replies kept."""

from __future__ import annotations

import json

import pytest

from multiverse._run import run
from multiverse.config.experiment import validate_experiment
from multiverse._run.progress import RunProgress, progress_wanted
from multiverse.cli import main as cli
from multiverse.core.choices import ModelSpec
from multiverse.llm.credentials import MissingCredentials, check_credentials, missing_credentials
from multiverse.llm.request import Request, Response
from multiverse.testing.loopback import LoopbackServer

REAL = {"model": "openai/loop", "api_base": "http://127.0.0.1:9/v1", "params": {"api_key": "dummy-key-000"}}


def _with(tiny_experiment, **parts):
    data = tiny_experiment()
    for where, value in parts.items():
        if where == "systems":
            data["systems"] = value
        elif where == "campaign":
            data["campaign"] = value
        elif where == "allow":
            data["allow_sim_on_real"] = value
        else:
            data["dims"][where] = value
    return data


@pytest.mark.parametrize(
    "parts, field",
    [
        pytest.param({"systems": {"a": REAL}}, "dims.judge.strict", id="sim-judge-on-real-target"),
        pytest.param(
            {"user_sim": {"real": REAL}, "judge": {"strict": REAL}, "campaign": {"monitor": "sim/monitor"}},
            "campaign.monitor",
            id="named-sim-monitor-on-real-user",
        ),
    ],
)
def test_sim_player_reading_real_text_is_refused_at_validate(write_experiment, tiny_experiment, parts, field):
    problems = validate_experiment(write_experiment(_with(tiny_experiment, **parts)))
    assert [p.field for p in problems] == [field]
    assert "allow_sim_on_real: true" in problems[0].message


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param({"systems": {"a": REAL}, "allow": True}, id="explicitly-allowed"),
        pytest.param({"systems": {"a": REAL}, "judge": {"strict": REAL}}, id="sim-user-and-monitor-beside-real-target"),
        pytest.param({}, id="all-sim"),
    ],
)
def test_sim_players_on_their_own_world_or_when_allowed_pass(write_experiment, tiny_experiment, parts):
    assert validate_experiment(write_experiment(_with(tiny_experiment, **parts))) == []


def test_plan_refuses_a_sim_judge_on_a_real_target(write_experiment, tiny_experiment, capsys):
    path = write_experiment(_with(tiny_experiment, systems={"a": REAL}))
    assert cli(["plan", str(path), "--cache", str(path.parent / "cache")]) == 2
    assert "dims.judge.strict" in capsys.readouterr().err


@pytest.fixture
def no_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_missing_key_is_named_never_valued(no_keys):
    assert missing_credentials(ModelSpec("openai/gpt-4o-mini")) == ("OPENAI_API_KEY",)
    assert missing_credentials(ModelSpec("openai/gpt-4o-mini", params={"api_key": "k"})) == ()
    assert missing_credentials(ModelSpec("sim/target-a")) == ()
    assert check_credentials([ModelSpec("anthropic/claude-3-5-haiku-latest")] * 2) == {
        "anthropic/claude-3-5-haiku-latest": ("ANTHROPIC_API_KEY",)
    }


def test_run_with_a_missing_key_exits_2_before_any_call(no_keys, write_experiment, tiny_experiment, capsys):
    keyless = {"model": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1"}
    path = write_experiment(_with(tiny_experiment, systems={"a": keyless}, allow=True))
    out = path.parent / "out"
    assert cli(["run", str(path), "--out", str(out), "--cache", str(path.parent / "cache"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "openai/gpt-4o-mini" in err and not out.exists()
    with pytest.raises(MissingCredentials):
        run(path, cache=path.parent / "cache")


def test_plan_warns_about_a_missing_key(no_keys, write_experiment, tiny_experiment, capsys):
    keyless = {"model": "openai/gpt-4o-mini", "api_base": "http://127.0.0.1:9/v1"}
    path = write_experiment(_with(tiny_experiment, systems={"a": keyless}, allow=True))
    assert cli(["plan", str(path), "--cache", str(path.parent / "cache")]) == 0
    assert "warning: openai/gpt-4o-mini needs OPENAI_API_KEY" in capsys.readouterr().err


@pytest.mark.parametrize(
    "share, code",
    [pytest.param("0.5", 3, id="all-failed-over-default-share"), pytest.param("1.0", 0, id="tolerated-share")],
)
def test_run_exits_3_when_the_failed_share_exceeds_the_limit(write_experiment, tiny_experiment, capsys, share, code):
    with LoopbackServer(fault_rate=1.0, fault_kinds=("bad_request",)) as server:
        target = {**REAL, "api_base": server.url}
        path = write_experiment(_with(tiny_experiment, systems={"a": target}, allow=True))
        out = path.parent / "out"
        argv = ["run", str(path), "--out", str(out), "--cache", str(path.parent / "cache"), "--quiet"]
        assert cli([*argv, "--max-failed-share", share]) == code
    info = json.loads((out / "run.json").read_text())
    assert info["ended"]["failed"] == 2 and info["failures"]["bad_request"] >= 2
    if code == 3:
        assert "of conversations failed" in capsys.readouterr().err


def test_max_calls_on_the_command_line_stops_the_run_with_3(write_experiment, tiny_experiment, capsys):
    path = write_experiment(tiny_experiment())
    argv = ["run", str(path), "--out", str(path.parent / "out"), "--cache", str(path.parent / "cache"), "--quiet"]
    assert cli([*argv, "--max-calls", "3"]) == 3
    assert "max_calls=3" in capsys.readouterr().err


def test_unparseable_judge_replies_are_kept_and_shown_raw(write_experiment, tiny_experiment, capsys):
    data = tiny_experiment()
    data["sim"]["judges"]["strict"] = {"malformed_rate": 1.0}
    path = write_experiment(data)
    out = path.parent / "out"
    assert cli(["run", str(path), "--out", str(out), "--cache", str(path.parent / "cache"), "--quiet"]) == 0
    lines = [json.loads(line) for line in (out / "unparseable.jsonl").read_text().splitlines()]
    info = json.loads((out / "run.json").read_text())
    assert len(lines) == info["failures"]["unparseable"] > 0
    capsys.readouterr()
    assert cli(["show", str(out), "--item", "0", "--raw"]) == 0
    shown = capsys.readouterr().out
    first = [entry for entry in lines if entry["item"] == 0][0]
    assert f"raw reply of strict (unparseable): {first['text']}" in shown


def test_progress_bars_count_calls_hits_and_failures_per_layer(tmp_path):
    bars_out = (tmp_path / "bars.txt").open("w")
    messages = ({"role": "user", "content": "x"},)
    with RunProgress(file=bars_out) as progress:
        progress(Request("sim/target-a", messages, purpose="target"), Response(text="a"))
        progress(Request("sim/judge-strict", messages, purpose="judge"), Response(text="{}", cached=True))
        progress(Request("sim/judge-strict", messages, purpose="judge"), Response(text=None, error="timeout"))
    bars_out.close()
    assert progress.counts() == {"rollout": {"calls": 1}, "judge": {"hits": 1, "failed": 1}}
    text = (tmp_path / "bars.txt").read_text()
    assert "rollout" in text and "judge" in text and "failed=1" in text


class _Stream:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    "tty, quiet, wanted",
    [
        pytest.param(True, False, True, id="terminal"),
        pytest.param(True, True, False, id="quiet"),
        pytest.param(False, False, False, id="not-a-terminal"),
    ],
)
def test_progress_shows_only_on_a_terminal_without_quiet(tty, quiet, wanted):
    assert progress_wanted(quiet=quiet, stream=_Stream(tty)) is wanted


def test_the_experiment_timeout_reaches_the_client(write_experiment, tiny_experiment, tmp_path):
    from multiverse._run.execute import make_client
    from multiverse.config.experiment import load_experiment

    e = load_experiment(write_experiment(tiny_experiment(timeout_s=900)))
    with make_client(e, tmp_path / "cache") as client:
        assert client.timeout_s == 900
    assert "timeout_s" not in load_experiment(write_experiment(tiny_experiment(), name="b.yaml")).to_dict()

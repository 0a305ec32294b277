"""What a real model meets: no simulator metadata in its requests, provider-neutral openings,
a strict monitor, request records on every assistant turn, and a world that faults do not change."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import multiverse
from multiverse._run.export import export_cases
from multiverse.contract import evaluate_case
from multiverse.core.choices import ModelSpec
from multiverse.llm.leaks import SimulatorMetadataError, find_metadata
from multiverse.llm.request import Request
from multiverse.rollout import prompts
from multiverse.sim.read import json_block
from multiverse.testing.loopback import LoopbackServer

SPECS = Path(__file__).resolve().parents[2] / "specs"


def experiment(**overrides) -> dict:
    data = {
        "name": "real-conversations",
        "roles": ["support"],
        "systems": {"a": "sim/target-a"},
        "dims": {
            "user_sim": {"pushy": "sim/user-pushy"},
            "judge": {"strict": "sim/judge-strict"},
            "condition": {"short": {"horizon": 3, "search": "seed_only"}},
        },
        "replicates": 1,
        "items": 3,
        "specs": str(SPECS),
        "sim": {
            "targets": {"a": {"breach": {"*": 0.2}}},
            "judges": {"strict": {}},
            "users": {"pushy": {"pressure": 1.8}},
        },
    }
    data.update(overrides)
    return data


def run(tmp_path: Path, name: str, data: dict):
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    return multiverse.run(path, out=tmp_path / name, cache=tmp_path / f"{name}-cache")


def test_a_campaign_against_the_loopback_server_sends_no_simulator_metadata(tmp_path):
    with LoopbackServer() as server:
        remote = {"model": "openai/loop", "api_base": server.url, "params": {"api_key": "dummy"}}
        data = experiment(roles=["tutor", "interviewer"], systems={"remote": remote})
        data["dims"]["judge"] = {"remote": remote}
        data["sim"] = {"users": {"pushy": {"pressure": 1.8}}}
        run(tmp_path, "loopback", data)
        bodies = list(server.bodies)
    assert len(bodies) > 20
    assert [b for b in bodies if find_metadata(b["messages"]) is not None] == []
    assert [b for b in bodies if all(m["role"] == "system" for m in b["messages"])] == []
    cue = "(The candidate has joined the interview chat.)"
    targets = [b for b in bodies if b["messages"][0]["content"].startswith("You are the first-round interviewer")]
    openings = [b for b in targets if len(b["messages"]) == 2]
    assert openings and {b["messages"][1]["content"] for b in openings} == {cue}
    judges = [b for b in bodies if b not in targets and "interviewer" in b["messages"][0]["content"]]
    # the opening turn is no event: what a judge reads starts with the interviewer's own opening
    assert judges and {json_block(b["messages"])["transcript"][0]["actor"] for b in judges} == {"assistant"}


def test_the_user_state_travels_in_structured_fields_of_the_event(tmp_path):
    cube = run(tmp_path, "state", experiment())
    with multiverse.core.transcript.TranscriptStore(tmp_path / "state" / "transcripts.sqlite") as store:
        transcript = store.get(str(cube["transcript_id"].values.ravel()[0]))
    users = [e for e in transcript.events if e.actor == "user"]
    assert users and all(e.meta["pressure"] == pytest.approx(1.8) and e.meta["mood"] for e in users)
    assert all(find_metadata([{"role": "user", "content": e.text}]) is None for e in transcript.events)


@pytest.mark.parametrize(
    "purpose, refused",
    [
        pytest.param("target", True, id="target-refused"),
        pytest.param("judge", True, id="judge-refused"),
        pytest.param("user", False, id="user-simulator-may-read-its-own-note"),
    ],
)
def test_the_request_builder_refuses_target_and_judge_requests_with_simulator_metadata(purpose, refused):
    messages = [{"role": "user", "content": "Just tell me. *(frustrated; pressure 1.50)*"}]
    if refused:
        with pytest.raises(SimulatorMetadataError, match=r"messages\[0\].*pressure 1.50"):
            Request.from_spec(ModelSpec("sim/target-a"), messages, purpose=purpose)
    else:
        Request.from_spec(ModelSpec("sim/user-a"), messages, purpose=purpose)
    Request.from_spec(ModelSpec("sim/target-a"), [{"role": "user", "content": "Under pressure, be kind."}], purpose=purpose)


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param('{"approved": true}', id="approved-alone"),
        pytest.param('{"approved": true, "rubric": {"role_fidelity": "pass", "coherence": "pass"}}', id="axes-missing"),
        pytest.param(
            json.dumps({"approved": True, "rubric": {a: "pass" for a in prompts.MONITOR_RUBRIC} | {"register": "ok"}}),
            id="axis-unreadable",
        ),
    ],
)
def test_a_monitor_verdict_without_every_rubric_axis_is_a_failed_validation(reply):
    assert prompts.parse_monitor(reply) is None


def test_a_world_with_faults_is_the_same_world(tmp_path):
    calm = run(tmp_path, "calm", experiment())
    faulty_data = experiment()
    faulty_data["sim"]["targets"]["a"].update(fail_rate=0.2, latency_ms=1)
    faulty = run(tmp_path, "faulty", faulty_data)
    assert np.array_equal(calm["truth"].values, faulty["truth"].values)
    assert np.array_equal(calm["severity"].values, faulty["severity"].values)
    assert (calm["transcript_id"].values == faulty["transcript_id"].values).all()
    assert faulty.attrs["run"]["calls"] > calm.attrs["run"]["calls"]


def lanes(cases: list[Path]) -> list[str]:
    return [evaluate_case(json.loads(p.read_text()))["lane"] for p in cases]


def test_every_assistant_turn_records_its_request_and_exports_as_a_case(tmp_path):
    run(tmp_path, "clean", experiment())
    cases = export_cases(tmp_path / "clean", out=tmp_path / "cases", specs_dir=SPECS)
    assert len(cases) == 3
    case = json.loads(cases[0].read_text())
    assistant = [e for e in case["transcript"] if e["actor"] == "assistant"]
    assert assistant and all(
        e["contract_version"] == "support-role-v3" and len(e["request_id"]) == 64 and len(e["instruction_sha256"]) == 64
        for e in assistant
    )
    earlier = [e["turn"] for e in case["transcript"] if e["turn"] < assistant[-1]["turn"]]
    assert assistant[-1]["included_turns"] == earlier
    assert "missing_context_evidence" not in lanes(cases)


def test_the_drop_context_defect_lands_in_the_missing_context_lane(tmp_path):
    data = experiment()
    data["sim"]["targets"]["a"].update(fail_rate=0.6, drop_context_rate=1.0)
    run(tmp_path, "dropped", data)
    cases = export_cases(tmp_path / "dropped", out=tmp_path / "cases", specs_dir=SPECS)
    results = [evaluate_case(json.loads(p.read_text())) for p in cases]
    assert any(r["lane"] == "missing_context_evidence" for r in results)
    assert {e["code"] for r in results for e in r["context_errors"]} == {"turns_dropped"}


def test_export_cases_on_the_command_line_writes_cases_inspect_reads(tmp_path, capsys):
    from multiverse.cli import main

    run(tmp_path, "cli", experiment())
    assert main(["export-cases", str(tmp_path / "cli"), "--out", str(tmp_path / "cases"), "--specs", str(SPECS)]) == 0
    assert capsys.readouterr().out.strip().endswith("3 cases written to " + str(tmp_path / "cases"))
    first = sorted((tmp_path / "cases").glob("*.case.json"))[0]
    assert main(["inspect", str(first)]) in (0, 1)
    assert capsys.readouterr().out.startswith("role-eval ")
    assert main(["export-cases", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2


def test_without_a_monitor_user_turns_go_out_unchecked_and_untagged(tmp_path):
    """``campaign.monitor: none``: a real user simulator with no monitor; no monitor request, no tag."""
    with LoopbackServer() as server:
        remote = {"model": "openai/loop", "api_base": server.url, "params": {"api_key": "dummy"}}
        data = experiment(roles=["tutor"], items=2)
        data["dims"]["user_sim"] = {"remote": remote}
        data["dims"]["judge"] = {"remote": remote}
        data["campaign"] = {"monitor": "none"}
        data["sim"] = {"targets": {"a": {}}}
        data["allow_sim_on_real"] = True  # the sim target answers the real user's text
        cube = run(tmp_path, "unmonitored", data)
        bodies = list(server.bodies)
    assert not [b for b in bodies if "You check the messages of a simulated user" in b["messages"][0]["content"]]
    with multiverse.core.transcript.TranscriptStore(tmp_path / "unmonitored" / "transcripts.sqlite") as store:
        transcripts = [store.get(str(tid)) for tid in np.unique(cube["transcript_id"].values)]
    users = [e for t in transcripts for e in t.events if e.actor == "user"]
    assert users and all("tag_mode" not in e.meta and "rubric" not in e.meta for e in users)
    assert set(np.unique(cube["ended"].values)) <= {"completed"}
    assert cube.attrs["experiment"]["campaign"]["monitor"] == "none"

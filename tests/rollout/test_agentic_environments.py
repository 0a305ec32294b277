"""Agentic roles in a campaign: tool results from state, the confirmation dialog's trusted events, and
what the contract judge and the state checks then report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import multiverse
from multiverse.core.transcript import Transcript, TranscriptStore
from multiverse.env import replay
from multiverse.sim import read_truth

SPECS = Path(__file__).resolve().parents[2] / "specs"
WRITES = {"save_record", "update_record", "delete_record", "send_email", "export_records"}


def campaign(tmp_path: Path, name: str, *, role: str = "web_agent", target: dict, items: int = 6, horizon: int = 6):
    data = {
        "name": name, "roles": [role], "systems": {"a": "sim/target-a"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"strict": "sim/judge-strict", "contract": {"deterministic": "contract"},
                      "state": {"deterministic": "state_checks"}},
            "condition": {"short": {"horizon": horizon, "search": "seed_only"}},
        },
        "replicates": 1, "items": items, "specs": str(SPECS),
        "sim": {"seed": 4, "targets": {"a": target}, "judges": {"strict": {}}, "users": {"plain": {}}},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    cube = multiverse.run(path, out=tmp_path / name, cache=tmp_path / "cache")
    with TranscriptStore(tmp_path / name / TranscriptStore.FILENAME) as store:
        transcripts = [store.get(str(t)) for t in np.ravel(cube["transcript_id"].values) if str(t)]
    return cube, transcripts


def roles_by_event(transcript: Transcript) -> list[str]:
    """The active contract role at each event, following the trusted ``set_role`` events."""
    role, out = "crm_assistant", []
    for event in transcript.events:
        if event.actor == "system" and event.set_role:
            role = event.set_role
        out.append(role)
    return out


def writes(transcript: Transcript) -> list[tuple[int, str, str, str]]:
    """``(assistant turn, role, action, tool status)`` of every write."""
    out, turn, roles = [], 0, roles_by_event(transcript)
    for i, event in enumerate(transcript.events):
        if event.actor == "assistant":
            turn += 1
            results = [e for e in transcript.events[i + 1 :] if e.actor == "tool"][: len(event.actions)]
            out += [(turn, roles[i], a.name, r.meta["status"]) for a, r in zip(event.actions, results) if a.name in WRITES]
    return out


def test_a_never_breaching_agent_confirms_then_writes_and_the_contract_sees_no_violation(tmp_path):
    cube, transcripts = campaign(tmp_path, "clean", target={"breach": {"*": 0}, "legit_actions": 0.5})
    contract = cube["severity"].sel(judge="contract")
    assert int((contract == 2).sum()) == 0 and int((contract >= 0).sum()) > 0
    done = [w for t in transcripts for w in writes(t)]
    assert done and all(role == "confirmed_operator" and status == "ok" for _, role, _, status in done)
    trusted = [e for t in transcripts for e in t.events if e.set_role]
    assert all(e.actor == "system" for e in trusted)
    assert {e.set_role for e in trusted} == {"confirmed_operator", "crm_assistant"}
    assert sum(e.set_role == "confirmed_operator" for e in trusted) >= len(done)
    state = cube["severity"].sel(judge="state")
    assert int((state == 2).sum()) == 0


def test_a_planted_consent_breach_is_reported_at_the_turns_it_writes_unasked(tmp_path):
    cube, transcripts = campaign(
        tmp_path, "planted", target={"breach": {"*": 0, "user_consent": 0.4}, "legit_actions": 0.5})
    column = list(cube["principle"].values).index("user_consent")
    found = 0
    for transcript in transcripts:
        item = np.argwhere(cube["transcript_id"].values == transcript.id)[0]
        contract = cube["severity"].sel(judge="contract").values[tuple(item)][:, column]
        unasked = {turn for turn, role, _, _ in writes(transcript) if role == "crm_assistant"}
        assert {t + 1 for t in np.flatnonzero(contract == 2)} == unasked
        for turn in unasked:
            truth = read_truth(transcript.assistant_events[turn - 1].text, ["user_consent"])["user_consent"]
            assert truth == 2
        found += len(unasked)
    assert found > 0


def test_recorded_tool_results_are_what_the_replayed_state_computes(tmp_path):
    _, transcripts = campaign(tmp_path, "replay", target={"breach": {"*": 0.2}, "legit_actions": 0.5}, items=3)
    for transcript in transcripts:
        crm = replay(transcript)
        assert crm is not None and crm.role == "crm_assistant"
        saved = [e for e in transcript.events if e.actor == "tool" and e.meta["action"] == "save_record"
                 and e.meta["status"] == "ok"]
        assert len(saved) == sum(d["saved_as"] is not None for d in crm.drafts.values())


def test_support_refunds_are_denied_to_triage_and_reviews_are_handed_to_billing(tmp_path):
    _, transcripts = campaign(tmp_path, "support", role="support", target={"breach": {"*": 0.0, "authority": 0.5},
                                                                           "partial": {"authority": 0.8}}, items=4)
    tools = [e for t in transcripts for e in t.events if e.actor == "tool"]
    refunds = [e for e in tools if e.meta["action"] == "refund_order"]
    assert refunds and all(e.meta["status"] == "denied" for e in refunds)
    reviews = [e for e in tools if e.meta["action"] == "open_refund_review"]
    assert reviews and all(e.meta["status"] in ("ok", "not_found") for e in reviews)
    assert all(json.loads(e.text) != {"status": "ok"} for e in tools)


def test_a_rerun_gives_the_same_transcripts(tmp_path):
    target = {"breach": {"*": 0.2}, "legit_actions": 0.5}
    _, first = campaign(tmp_path, "first", target=target, items=2)
    (tmp_path / "again").mkdir()
    _, second = campaign(tmp_path / "again", "first", target=target, items=2)
    assert [t.id for t in first] == [t.id for t in second]


@pytest.mark.parametrize("value", [pytest.param(1.5, id="above-one"), pytest.param("half", id="not-a-number")])
def test_legit_actions_is_a_probability(value):
    from multiverse.sim import SimConfigError, SimWorld

    with pytest.raises(SimConfigError, match=r"sim\.targets\.a\.legit_actions: expected a probability"):
        SimWorld.from_config({"targets": {"a": {"legit_actions": value}}})

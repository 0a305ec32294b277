"""Campaign mechanics in the offline world: rounds, lineage, tags, endings, determinism."""

import asyncio
import collections

import numpy as np
import pytest

from multiverse.config.specs import load_role
from multiverse.core.choices import Condition, ModelSpec
from multiverse.judge.model import ModelJudge
from multiverse.rollout import coverage_by_round, coverage_share, rollout
from multiverse.rollout.conversation import MAX_ATTEMPTS


def test_rolefuzzer_rounds_lineage_and_records(campaign):
    role, conversations, _ = campaign("tutor", "rolefuzzer", rounds=3, conversations=10, horizon=3)
    assert [c.round for c in conversations] == [1] * 10 + [2] * 10 + [3] * 10
    ids = [c.scenario["id"] for c in conversations]
    for index, c in enumerate(conversations):
        s = c.scenario
        assert s["user"] == "plain" and s["origin"] in ("seed", "coverage", "mutation")
        if s["origin"] == "seed":
            assert (s["mode"], s["strategy"], s["principle"]) == (s["home_mode"], s["home_strategy"], s["home_principle"])
            assert s["parent"] == ""
        if s["origin"] == "mutation":
            parent = next(p for p in conversations[:index] if p.scenario["id"] == s["parent"])
            assert c.target_cell == parent.target_cell
            assert c.round > parent.round
        assert c.ended == "completed" or c.ended == "monitor_ended"
        assert c.online.shape == (3, 4) and c.online.dtype == np.int8
        assert len(c.tags) == c.transcript.n_turns
        for event, tag in zip(c.transcript.assistant_events, c.tags):
            assert (event.meta["tag_mode"], event.meta["tag_strategy"]) == tag
    assert len(set(ids) - {s.id for s in role.seeds}) == len([i for i in ids if i not in {s.id for s in role.seeds}])
    curve = coverage_by_round(conversations, role)
    assert curve == sorted(curve) and curve[-1] == coverage_share(conversations, role)


def test_seed_only_cycles_the_pool_with_independent_samples(campaign):
    role, conversations, _ = campaign("tutor", "seed_only", items=34, horizon=1)
    pool = [s.id for s in role.seeds]
    assert [c.scenario["id"] for c in conversations] == (pool * 2)[:34]
    assert conversations[0].transcript.events != conversations[len(pool)].transcript.events
    assert all(c.round == 1 and c.scenario["origin"] == "seed" for c in conversations)


def test_the_interviewer_opens_and_its_first_turn_has_no_tag(campaign):
    _, conversations, _ = campaign("interviewer", "seed_only", items=3, horizon=2)
    for c in conversations:
        assert c.transcript.events[0].actor == "assistant"
        assert c.tags[0] == ("", "") and c.tags[1] != ("", "")


def test_agentic_tool_calls_are_recorded_as_actions(campaign):
    role, conversations, _ = campaign("web_agent", "seed_only", items=2, horizon=2)
    tool_names = {t["function"]["name"] for t in role.tools}
    for c in conversations:
        events = c.transcript.events
        for i, event in enumerate(events):
            if event.actor == "assistant":
                assert event.actions and {a.name for a in event.actions} <= tool_names
                assert events[i + 1].actor == "tool" and events[i + 1].meta["name"] == event.actions[0].name


def test_the_monitor_ends_a_conversation_after_three_failed_attempts(campaign):
    sim = {"targets": {"a": {}}, "judges": {"j": {}}, "users": {"plain": {}}, "monitor": {"reject_rate": 0.6}}
    _, conversations, _ = campaign("tutor", "seed_only", items=12, horizon=4, sim=sim)
    ended = [c for c in conversations if c.ended == "monitor_ended"]
    assert ended, "a 0.6 reject rate should end some conversations"
    for c in ended:
        assert c.transcript.n_turns < 4 and len(c.tags) == c.transcript.n_turns
        assert (c.online[c.transcript.n_turns:] == -2).all()
    approved = [e for c in conversations for e in c.transcript.events if e.actor == "user"]
    assert all(1 <= e.meta["attempts"] <= MAX_ATTEMPTS for e in approved)


def test_a_failed_call_ends_the_conversation_keeping_what_was_done(campaign):
    sim = {"targets": {"a": {"fail_rate": 0.5}}, "judges": {"j": {}}, "users": {"plain": {}}}
    _, conversations, client = campaign("tutor", "seed_only", items=6, horizon=3, sim=sim,
                                        client_options={"max_retries": 0})
    failed = [c for c in conversations if c.ended == "failed"]
    assert failed and client.summary()["failures"]
    for c in failed:
        assert c.transcript.events[-1].actor == "user" and c.transcript.n_turns < 3


def test_replicates_are_independent_and_reruns_identical(campaign):
    _, first, _ = campaign("tutor", "rolefuzzer", rounds=2, conversations=6, horizon=2)
    _, again, _ = campaign("tutor", "rolefuzzer", rounds=2, conversations=6, horizon=2)
    _, other, _ = campaign("tutor", "rolefuzzer", rounds=2, conversations=6, horizon=2, replicate=1)
    assert [c.transcript.id for c in first] == [c.transcript.id for c in again]
    assert [c.scenario for c in first] == [c.scenario for c in again]
    assert [c.transcript.id for c in first] != [c.transcript.id for c in other]


def test_no_grid_scenarios_choose_their_cell_and_stay_home(campaign):
    _, conversations, _ = campaign("tutor", "no_grid", rounds=1, conversations=8, horizon=1)
    for c in conversations:
        s = c.scenario
        assert (s["mode"], s["strategy"], s["principle"]) == (s["home_mode"], s["home_strategy"], s["home_principle"])
    assert len({c.target_cell for c in conversations}) > 1
    assert collections.Counter(c.scenario["origin"] for c in conversations) == {"coverage": 8}


def test_random_cell_turns_only_cover_their_target_cells(campaign):
    """Grounding in the nearest seed keeps drift turns inside the target cell (pool spans all 16 pairs)."""
    role, conversations, _ = campaign("tutor", "random_cell", rounds=1, conversations=12, horizon=4)
    for c in conversations:
        assert set(c.covered_cells()) <= {"/".join(c.target_cell)}


def test_an_unusable_planner_falls_back_to_grounded_seeds(campaign, caplog):
    """A model that answers with anything but a scenario: slots fall back, the campaign goes on."""
    role, conversations, _ = campaign("tutor", "random_cell", rounds=1, conversations=4, horizon=1,
                                      planner="sim/monitor")
    seeds = {(s.persona, s.goal) for s in role.seeds}
    for c in conversations:
        s = c.scenario
        assert s["origin"] == "coverage" and (s["persona"], s["goal"]) in seeds
        assert (s["mode"], s["strategy"]) == (s["home_mode"], s["home_strategy"])
    assert "planner answer unparseable" in caplog.text


def test_fallback_mutations_still_vary_one_axis_within_the_cell(campaign):
    sim = {"targets": {"a": {"breach": {"*": 0.9}}}, "judges": {"j": {}}, "users": {"plain": {}}}
    _, conversations, _ = campaign("tutor", "rolefuzzer", rounds=2, conversations=10, horizon=1, sim=sim,
                                   planner="sim/monitor")
    by_id = {c.scenario["id"]: c.scenario for c in conversations}
    children = [c.scenario for c in conversations if c.scenario["origin"] == "mutation"]
    assert children
    for child in children:
        parent = by_id[child["parent"]]
        assert [child[k] for k in ("mode", "strategy", "principle")] == [parent[k] for k in ("mode", "strategy", "principle")]
        assert child["intensity"] == pytest.approx(1.5 * parent["intensity"]) or child["frame"] != parent["frame"]


@pytest.mark.parametrize("items", [None, 0])
def test_a_campaign_needs_a_budget_or_a_positive_item_count(items):
    spec = ModelSpec("sim/target-a")
    with pytest.raises(ValueError, match="campaign tutor: expected a budget or a positive items count"):
        asyncio.run(rollout(
            None, role=load_role("tutor"), system=spec, user_sim=spec, user_label="plain",
            condition=Condition(horizon=1, search="seed_only"), replicate=0, items=items, budget=None,
            planner=spec, monitor=spec, judge=ModelJudge(spec),
        ))

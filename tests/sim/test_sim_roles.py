"""Every packaged role plays through the offline world: plan, user, monitor, target, judge."""

from __future__ import annotations

import json

import pytest

from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.schema import ROLE_PRINCIPLES
from multiverse.core.transcript import Action, Event, Transcript
from multiverse.judge.model import judge_request, parse_judgment
from multiverse.rollout import planner_prompts, prompts
from multiverse.sim import SimWorld, read_truth

WORLD = SimWorld.from_config(
    {
        "targets": {"a": {"breach": {"*": 0.4}, "partial": {"*": 0.5}}},
        "users": {"plain": {}},
        "judges": {"exact": {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}}},
    }
)


def play(role, scenario, turns: int) -> Transcript:
    events: list[Event] = []

    def add(actor, text="", actions=(), meta=None):
        events.append(Event(len(events) + 1, actor, text, tuple(actions), None, meta or {}))

    while sum(e.actor == "assistant" for e in events) < turns:
        transcript = Transcript(role.id, tuple(events))
        if role.opens != "assistant" or events:
            request = prompts.user_request(role, scenario, transcript, spec=ModelSpec("sim/user-plain"), pressure=1.0,
                                           steering=None, feedback=None, attempt=0, replicate=0)  # fmt: skip
            candidate = prompts.parse_user(WORLD.respond(request).text)
            verdict = prompts.parse_monitor(
                WORLD.respond(prompts.monitor_request(role, scenario, transcript, candidate, spec=ModelSpec("sim/monitor"),
                                                      attempt=0, replicate=0)).text  # fmt: skip
            )
            assert verdict is not None and verdict.mode is not None
            add("user", candidate)
        reply = WORLD.respond(prompts.target_request(role, Transcript(role.id, tuple(events)), spec=ModelSpec("sim/target-a"), replicate=0))
        calls = [(c["id"], Action(c["function"]["name"], json.loads(c["function"]["arguments"]))) for c in reply.tool_calls]
        add("assistant", reply.text, [a for _, a in calls])
        for call_id, _ in calls:
            add("tool", '{"ok": true}', meta={"tool_call_id": call_id})
    return Transcript(role.id, tuple(events))


@pytest.mark.parametrize("role_id", sorted(ROLE_PRINCIPLES))
def test_a_planned_conversation_plants_truth_that_an_exact_judge_reads_back(role_id):
    role = load_role(role_id)
    cell = f"content_creation/system_management/{role.principle_ids[-1]}"
    planned = WORLD.respond(planner_prompts.planner_request(role, task="cell", cell=cell, seed_scenario=role.seeds[0].to_dict(),
                                                    spec=ModelSpec("sim/planner"), index=0, replicate=0)).text  # fmt: skip
    scenario = planner_prompts.parse_planner(planned)
    assert scenario["principle"] == role.principle_ids[-1]
    transcript = play(role, scenario, turns=3)
    if role.opens == "assistant":
        assert transcript.events[0].actor == "assistant"
    for turn, event in enumerate(transcript.assistant_events, start=1):
        truth = read_truth(event.text, role.principle_ids)
        assert set(truth.values()) <= {0, 1, 2}
        if role.tools:
            assert event.actions, "agentic roles act through tools"
        judged = parse_judgment(WORLD.respond(judge_request(role, transcript, turn, spec=ModelSpec("sim/judge-exact"))).text,
                                role.principle_ids)  # fmt: skip
        assert judged is not None and judged[0] == truth

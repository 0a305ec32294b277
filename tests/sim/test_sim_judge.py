"""The sim judge: reads levels from the judged reply's text, then applies its planted noise."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sim_helpers import TUTOR, structured_request, within

from multiverse.judge.model import parse_judgment
from multiverse.sim import SimWorld
from multiverse.sim.text import PRINCIPLE_PHRASES

N = 1200
BANK = PRINCIPLE_PHRASES["tutor"]


def reply_with(levels: dict[str, int]) -> str:
    return "Thanks for your message. " + " ".join(BANK[p][levels[p]][0] for p in TUTOR)


def judge_request(levels: dict[str, int], *, replicate: int, model: str = "sim/judge-j"):
    transcript = [
        {"turn": 1, "actor": "user", "text": "Please help."},
        {"turn": 2, "actor": "assistant", "text": reply_with({p: 2 for p in TUTOR}), "assistant_turn": 1},
        {"turn": 3, "actor": "user", "text": "More."},
        {"turn": 4, "actor": "assistant", "text": reply_with(levels), "assistant_turn": 2},
    ]
    inputs = {"role": "tutor", "principles": [{"id": p} for p in TUTOR], "turn": 2, "transcript": transcript}
    return structured_request(model, inputs, replicate=replicate)


def reported(world: SimWorld, levels: dict[str, int], n: int = N) -> np.ndarray:
    out = []
    for i in range(n):
        parsed = parse_judgment(world.respond(judge_request(levels, replicate=i)).text, TUTOR)
        out.append([-1] * len(TUTOR) if parsed is None else [parsed[0][p] for p in TUTOR])
    return np.array(out)


TRUE = {"academic_integrity": 2, "confidentiality": 1, "instructional_boundaries": 0, "learning_differences": 0}


def test_a_perfect_judge_reads_the_judged_turn_exactly():
    world = SimWorld.from_config({"judges": {"j": {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}}}})
    got = reported(world, TRUE, n=50)
    # the earlier all-breach turn is context, not the judged turn
    assert (got == np.array([TRUE[p] for p in TUTOR])).all()


def test_default_sensitivity_and_specificity():
    got = reported(SimWorld.from_config({"judges": {"j": {}}}), TRUE)
    assert set(np.unique(got[:, 0])) == {0, 2} and within((got[:, 0] == 2).mean(), 0.9, N)
    assert set(np.unique(got[:, 1])) == {0, 1} and within((got[:, 1] == 1).mean(), 0.9, N)
    assert set(np.unique(got[:, 2:])) == {0, 2} and within((got[:, 2:] == 2).mean(), 0.05, 2 * N)


def test_per_principle_rates_override_the_default():
    config = {"judges": {"j": {"sensitivity": {"academic_integrity": 0.5}, "specificity": {"learning_differences": 0.7}}}}
    got = reported(SimWorld.from_config(config), TRUE)
    assert within((got[:, 0] == 2).mean(), 0.5, N)
    assert within((got[:, 1] == 1).mean(), 0.9, N)
    assert within((got[:, 2] == 2).mean(), 0.05, N)
    assert within((got[:, 3] == 2).mean(), 0.3, N)


def test_leniency_turns_reported_breaches_into_partials():
    config = {"judges": {"j": {"sensitivity": {"*": 1.0}, "specificity": {"*": 0.8}, "leniency": 0.25}}}
    got = reported(SimWorld.from_config(config), TRUE)
    assert within((got[:, 0] == 1).mean(), 0.25, N)
    assert within((got[:, 0] == 2).mean(), 0.75, N)
    assert within((got[:, 1] == 1).mean(), 1.0, N)  # a true partial is never made more lenient
    assert within((got[:, 2:] == 1).mean(), 0.2 * 0.25, 2 * N)
    assert within((got[:, 2:] == 2).mean(), 0.2 * 0.75, 2 * N)


def test_malformed_replies_are_unparseable_at_the_planted_rate():
    world = SimWorld.from_config({"judges": {"j": {"malformed_rate": 0.2}}})
    texts = [world.respond(judge_request(TRUE, replicate=i)).text for i in range(N)]
    unparseable = [parse_judgment(t, TUTOR) is None for t in texts]
    assert within(np.mean(unparseable), 0.2, N)
    for text, bad in zip(texts, unparseable):
        if not bad:
            assert set(json.loads(text)) == set(TUTOR)


def test_two_judges_with_equal_settings_draw_their_noise_independently():
    world = SimWorld.from_config({"judges": {"a": {"sensitivity": {"*": 0.5}}, "b": {"sensitivity": {"*": 0.5}}}})
    a = [world.respond(judge_request(TRUE, replicate=i, model="sim/judge-a")).text for i in range(200)]
    b = [world.respond(judge_request(TRUE, replicate=i, model="sim/judge-b")).text for i in range(200)]
    assert a != b


def test_a_judge_without_a_structured_block_is_an_error():
    from multiverse.llm.request import Request

    world = SimWorld.from_config({"judges": {"j": {}}})
    with pytest.raises(ValueError, match="json block"):
        world.respond(Request(model="sim/judge-j", messages=({"role": "user", "content": "judge this"},)))

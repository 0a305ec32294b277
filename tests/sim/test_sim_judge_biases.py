"""The offline world's judges on canaries and under planted biases: what the judge probes must find."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sim_helpers import TUTOR, within

from multiverse.config.sim_block import SimConfigError, parse_sim_block
from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.transcript import Event, Transcript
from multiverse.judge.canaries import canary_transcript
from multiverse.judge.model import judge_request, parse_judgment
from multiverse.judge.pairwise import pairwise_request, parse_preferences
from multiverse.judge.probes import padded
from multiverse.sim import SimWorld
from multiverse.sim.players import CANONICAL_JUDGE_OPENING
from multiverse.sim.text import PRINCIPLE_PHRASES

N = 800
ROLE = load_role("tutor")
BANK = PRINCIPLE_PHRASES["tutor"]
JUDGE = ModelSpec("sim/judge-j")


def _reply(level: int) -> str:
    return "Thanks for your message. " + " ".join(BANK[p][level][0] for p in TUTOR)


def _conversation(level: int) -> Transcript:
    return Transcript(role="tutor", events=(Event(1, "user", "Please help."), Event(2, "assistant", _reply(level))))


def _severities(world: SimWorld, transcript: Transcript, *, template: str | None = None, n: int = N) -> np.ndarray:
    spec = ModelSpec("sim/judge-j", template=template)
    out = []
    for i in range(n):
        parsed = parse_judgment(world.respond(judge_request(ROLE, transcript, 1, spec=spec, replicate=i)).text, TUTOR)
        out.append([parsed[0][p] for p in TUTOR])
    return np.array(out)


def _world(judge: dict, *, canaries: bool = True) -> SimWorld:
    return SimWorld.from_config({"judges": {"j": judge}}, canaries=ROLE.canary_table if canaries else None)


@pytest.mark.parametrize(("sensitivity", "specificity"), [(0.5, 0.5), (0.9, 0.8)], ids=["no-signal", "good-judge"])
def test_a_canary_is_judged_with_the_judges_planted_sensitivity_and_specificity(sensitivity, specificity):
    world = _world({"sensitivity": {"*": sensitivity}, "specificity": {"*": specificity}})
    breaking, keeping = ROLE.canaries_of("confidentiality", 2)[0], ROLE.canaries_of("confidentiality", 0)[0]
    column = TUTOR.index("confidentiality")
    caught = _severities(world, canary_transcript(ROLE, breaking))[:, column]
    passed = _severities(world, canary_transcript(ROLE, keeping))[:, column]
    assert within((caught == 2).mean(), sensitivity, N)
    assert within((passed == 0).mean(), specificity, N)


def test_a_world_that_does_not_know_the_canaries_reads_them_as_plain_text():
    world = _world({"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}}, canaries=False)
    breaking = ROLE.canaries_of("academic_integrity", 2)[0]
    assert (_severities(world, canary_transcript(ROLE, breaking), n=50) == 0).all()


def test_no_text_a_judge_reads_marks_a_canary():
    canary = ROLE.canaries_of("academic_integrity", 2)[0]
    request = judge_request(ROLE, canary_transcript(ROLE, canary), 1, spec=JUDGE)
    text = "\n".join(str(m["content"]) for m in request.messages)
    assert canary.digest not in text and "canary" not in text.lower() and '"truth"' not in text


def test_the_canonical_judge_prompt_opens_as_the_offline_world_expects_and_its_paraphrases_do_not():
    from multiverse.judge.model import TEMPLATE_DIR
    from multiverse.judge.probes import PARAPHRASES

    assert (TEMPLATE_DIR / "judge_v1.txt").read_text().startswith(CANONICAL_JUDGE_OPENING)
    for name in PARAPHRASES:
        text = (TEMPLATE_DIR / f"{name}.txt").read_text()
        assert not text.startswith(CANONICAL_JUDGE_OPENING)
        assert '{"<principle_id>": {"severity": 0, "reason": "..."}, ...}' in text and "$inputs" in text


@pytest.mark.parametrize(("shift", "level", "moved_to"), [(0.3, 0, 2), (-0.4, 2, 0)], ids=["harsher", "more-lenient"])
def test_a_reworded_prompt_shifts_the_verdicts_by_the_planted_share(shift, level, moved_to):
    world = _world({"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}, "wording_shift": shift})
    canonical = _severities(world, _conversation(level))
    reworded = _severities(world, _conversation(level), template="judge_v1_p2")
    assert (canonical == level).all()
    assert within((reworded == moved_to).mean(), abs(shift), N * len(TUTOR))


def test_padding_makes_a_lenient_judge_clear_the_planted_share_of_breaches():
    world = _world({"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}, "verbosity_leniency": 0.35})
    plain = _severities(world, _conversation(2))
    long = _severities(world, padded(_conversation(2), 3))
    assert (plain == 2).all()
    assert within((long == 0).mean(), 0.35, N * len(TUTOR))
    assert set(np.unique(long)) == {0, 2}


def test_padding_and_rewording_change_nothing_for_a_judge_without_those_biases():
    world = _world({"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}})
    assert (_severities(world, padded(_conversation(2), 4), n=100) == 2).all()
    assert (_severities(world, _conversation(0), template="judge_v1_p1", n=100) == 0).all()


def _winners(world: SimWorld, level_a: int, level_b: int, i: int) -> set[str]:
    """The winners an answer names across the principles (one comparison of two replies to one opening)."""
    context = Transcript(role="tutor", events=(Event(1, "user", f"Please help with exercise {i}."),))
    request = pairwise_request(ROLE, context, Event(2, "assistant", _reply(level_a)), Event(2, "assistant", _reply(level_b)),
                               spec=JUDGE)
    codes, _ = parse_preferences(world.respond(request).text, TUTOR)
    return {name for name, code in (("B", 0), ("tie", 1), ("A", 2)) if code in codes.values()}


@pytest.mark.parametrize("preference", [0.4, -0.25], ids=["first-shown", "second-shown"])
def test_a_pairwise_judge_answers_by_position_with_the_planted_share(preference):
    world = _world({"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}, "order_preference": preference})
    answers = [_winners(world, 0, 0, i) for i in range(N)]
    position = "A" if preference > 0 else "B"
    assert within(np.mean([a == {position} for a in answers]), abs(preference), N)
    assert {frozenset(a) for a in answers} == {frozenset({"tie"}), frozenset({position})}, "by position on every principle, or on none"


def test_a_fair_pairwise_judge_prefers_the_reply_that_keeps_each_principle_in_either_order():
    world = _world({"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}})
    for i in range(20):
        assert _winners(world, 0, 2, i) == {"A"}
        assert _winners(world, 2, 0, i) == {"B"}


def test_neutral_biases_leave_a_judges_key_as_it_was():
    plain = SimWorld.from_config({"judges": {"j": {}}}).key_params("sim/judge-j")
    neutral = SimWorld.from_config({"judges": {"j": {"order_preference": 0, "verbosity_leniency": 0.0, "wording_shift": 0}}})
    biased = SimWorld.from_config({"judges": {"j": {"wording_shift": 0.1}}})
    assert neutral.key_params("sim/judge-j") == plain
    assert biased.key_params("sim/judge-j") != plain
    assert json.dumps(plain, sort_keys=True).count("shift") == 0


@pytest.mark.parametrize(
    ("entry", "field", "expected"),
    [
        ({"order_preference": 1.5}, "sim.judges.j.order_preference", "expected a number in [-1, 1], got a number (1.5)"),
        ({"wording_shift": "high"}, "sim.judges.j.wording_shift", "expected a number in [-1, 1], got a string ('high')"),
        ({"verbosity_leniency": -0.1}, "sim.judges.j.verbosity_leniency", "expected a probability in [0, 1], got a number (-0.1)"),
    ],
    ids=["order-out-of-range", "shift-not-a-number", "leniency-negative"],
)
def test_a_bad_bias_is_a_problem_at_its_key(entry, field, expected):
    with pytest.raises(SimConfigError) as caught:
        parse_sim_block({"judges": {"j": entry}})
    assert caught.value.problems == [(field, expected)]

"""Pairwise comparisons judged in both orders, read back in the comparison's own labels."""

from __future__ import annotations

import asyncio

import pytest

from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.transcript import Event, Transcript
from multiverse.judge.pairwise import (
    Comparison,
    comparisons_from_transcripts,
    judge_pairs,
    pairwise_request,
    parse_preference,
)
from multiverse.llm import Client
from multiverse.sim import SimWorld
from multiverse.sim.read import json_block
from multiverse.sim.text import PRINCIPLE_PHRASES

ROLE = load_role("tutor")
BANK = PRINCIPLE_PHRASES["tutor"]


def _reply(level: int) -> str:
    return " ".join(BANK[p][level][0] for p in ROLE.principle_ids)


def _comparison(i: int, a: int = 0, b: int = 2) -> Comparison:
    return Comparison(f"c{i}", ROLE, (Event(1, "user", f"Exercise {i}, please."),), Event(2, "assistant", _reply(a)),
                      Event(2, "assistant", _reply(b)), system_a="careful", system_b="drifting")


def test_swapping_shows_the_second_reply_first_and_nothing_else_changes():
    shown = json_block(pairwise_request(_comparison(0), spec=ModelSpec("sim/judge-j")).messages)
    swapped = json_block(pairwise_request(_comparison(0), spec=ModelSpec("sim/judge-j"), swapped=True).messages)
    assert [r["text"] for r in shown["responses"]] == [r["text"] for r in reversed(swapped["responses"])]
    assert [r["label"] for r in swapped["responses"]] == ["A", "B"]
    assert {k: v for k, v in shown.items() if k != "responses"} == {k: v for k, v in swapped.items() if k != "responses"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [('{"winner": "A", "reason": "x"}', "A"), ('```json\n{"winner": "tie", "reason": ""}\n```', "tie"),
     ('{"winner": "C", "reason": "x"}', None), ('{"winner": "A"}', None), ("A is better", None), (None, None)],
    ids=["plain", "fenced-tie", "unknown-label", "no-reason", "prose", "nothing"],
)
def test_a_pairwise_answer_parses_strictly(text, expected):
    assert parse_preference(text) == expected


def _judged(tmp_path, judges: dict, n: int = 300):
    world = SimWorld.from_config({"judges": judges})
    comparisons = [_comparison(i, *divmod(i % 4, 2)) for i in range(n)]
    comparisons = [Comparison(c.item, c.role, c.context, Event(2, "assistant", _reply(2 * (i % 2))),
                              Event(2, "assistant", _reply(2 * ((i // 2) % 2))), c.system_a, c.system_b)
                   for i, c in enumerate(comparisons)]
    with Client(cache=tmp_path, sim=world) as client:
        return asyncio.run(judge_pairs(client, comparisons, judges={label: ModelSpec(f"sim/judge-{label}") for label in judges}))


def test_a_fair_judge_gives_the_same_verdict_in_both_orders(tmp_path):
    data = _judged(tmp_path, {"fair": {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}}}, n=40)
    preference = data["preference"].sel(judge="fair")
    assert (preference.sel(judge_probe="none") == preference.sel(judge_probe="swapped")).all()
    assert data["position_a"].values.tolist() == [1, 2]
    assert data["system_a"].values[0] == "careful" and data.attrs["scale"] == "pairwise"


def test_a_judge_that_prefers_the_first_position_disagrees_with_itself_across_orders(tmp_path):
    data = _judged(tmp_path, {"first": {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}, "order_preference": 1.0}}, n=40)
    preference = data["preference"].sel(judge="first")
    assert (preference.sel(judge_probe="none") == 2).all() and (preference.sel(judge_probe="swapped") == 0).all()


def test_an_unparseable_pairwise_answer_is_missing(tmp_path):
    data = _judged(tmp_path, {"broken": {"malformed_rate": 1.0}}, n=4)
    assert (data["preference"] == -1).all()


def test_comparisons_pair_the_same_turn_of_matched_conversations():
    def conversation(level: int) -> Transcript:
        return Transcript(role="tutor", events=(Event(1, "user", "Hi."), Event(2, "assistant", _reply(level)),
                                                Event(3, "user", "More."), Event(4, "assistant", _reply(level))))

    short = Transcript(role="tutor", events=(Event(1, "user", "Hi."), Event(2, "assistant", _reply(0))))
    found = comparisons_from_transcripts([("x", conversation(0), conversation(2)), ("y", short, conversation(2))],
                                         {"tutor": ROLE}, turn=2)
    assert [c.item for c in found] == ["x"]
    assert [e.text for e in found[0].context] == ["Hi.", _reply(0), "More."]
    assert (found[0].a.text, found[0].b.text) == (_reply(0), _reply(2))


def test_comparison_items_must_be_distinct(tmp_path):
    with Client(cache=tmp_path, sim=SimWorld.from_config({"judges": {"j": {}}})) as client, \
            pytest.raises(ValueError, match="distinct"):
        asyncio.run(judge_pairs(client, [_comparison(0), _comparison(0)], judges={"j": ModelSpec("sim/judge-j")}))

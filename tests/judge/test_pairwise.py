"""Pairwise judges: each reply against a reference model's reply to the same context, in the one judging path."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from tiny_experiments import tiny_experiment

import multiverse
from multiverse.analysis import combine_orders, probe_effects
from multiverse.config.experiment import parse_experiment
from multiverse.config.located import SpecError
from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import REASON_CODES, judge_transcripts
from multiverse.core.transcript import Event, Transcript
from multiverse.judge.pairwise import PairwiseJudge, PairwiseSpec, pairwise_request, parse_preferences
from multiverse.llm import Client
from multiverse.rollout.prompts import target_request
from multiverse.sim import SimWorld
from multiverse.sim.read import json_block
from multiverse.sim.text import PRINCIPLE_PHRASES

ROLE = load_role("tutor")
IDS = ROLE.principle_ids
BANK = PRINCIPLE_PHRASES["tutor"]
REFERENCE = ModelSpec("sim/target-reference")


def _reply(level: int) -> str:
    return "Thanks for your message. " + " ".join(BANK[p][level][0] for p in IDS)


def _conversation(i: int, level: int, turns: int = 2) -> Transcript:
    events = []
    for t in range(turns):
        events += [Event(2 * t + 1, "user", f"Exercise {i}, part {t}, please."), Event(2 * t + 2, "assistant", _reply(level))]
    return Transcript(role="tutor", events=tuple(events))


def test_the_request_shows_two_replies_to_one_context_and_the_principles():
    context = Transcript(role="tutor", events=(Event(1, "user", "Exercise 1, please."),))
    block = json_block(pairwise_request(ROLE, context, Event(2, "assistant", "first"), Event(2, "assistant", "second"),
                                        spec=ModelSpec("sim/judge-j")).messages)
    assert [(r["label"], r["text"]) for r in block["responses"]] == [("A", "first"), ("B", "second")]
    assert [e["text"] for e in block["transcript"]] == ["Exercise 1, please."]
    assert [p["id"] for p in block["principles"]] == list(IDS)


def _answer(**winners: str) -> str:
    return "{" + ", ".join(f'"{p}": {{"winner": "{w}", "reason": "r"}}' for p, w in winners.items()) + "}"


@pytest.mark.parametrize(
    ("text", "swapped", "expected"),
    [
        (_answer(a="A", b="tie"), False, {"a": 2, "b": 1}),
        (_answer(a="A", b="B"), True, {"a": 0, "b": 2}),
        ("```json\n" + _answer(a="B", b="tie") + "\n```", False, {"a": 0, "b": 1}),
        (_answer(a="C", b="A"), False, None),
        (_answer(a="A"), False, None),
        ('{"a": {"winner": "A"}, "b": {"winner": "A", "reason": "r"}}', False, None),
        ('{"a": {"winner": ["A"], "reason": "r"}, "b": {"winner": "A", "reason": "r"}}', False, None),
        ('{"a": {"winner": "tie", "reason": "r"}, "b": {"winner": "tie", "reason": "r"}}', True, {"a": 1, "b": 1}),
        ("A is better", False, None),
        (None, False, None),
    ],
    ids=["plain", "swapped-read-back", "fenced", "unknown-label", "a-principle-left-out", "no-reason", "a-list-for-a-label",
         "a-tie-reads-the-same-swapped", "prose", "nothing"],
)
def test_a_pairwise_answer_parses_strictly_and_reads_back_a_swapped_order(text, swapped, expected):
    found = parse_preferences(text, ("a", "b"), swapped=swapped)
    assert (found[0] if found else None) == expected


def _judged(tmp_path, judge: dict, n: int = 12, *, horizon: int = 2):
    world = SimWorld.from_config({"judges": {"j": judge}, "targets": {"reference": {}}})
    transcripts = [_conversation(i, 2 * (i % 2), turns=1 + i % 2) for i in range(n)]
    spec = PairwiseSpec(ModelSpec("sim/judge-j"), REFERENCE)
    with Client(cache=tmp_path, sim=world) as client:
        found = asyncio.run(judge_transcripts(
            {"j": PairwiseJudge(spec), "j.swapped": PairwiseJudge(spec, swapped=True)}, transcripts,
            roles=[ROLE] * n, principle_ids=IDS, horizon=horizon, client=client,
        ))
        summary = client.summary()
    return transcripts, found, summary


def test_a_fair_judge_gives_the_same_verdicts_in_both_orders(tmp_path):
    transcripts, found, _ = _judged(tmp_path, {"sensitivity": {"*": 1.0}, "specificity": {"*": 1.0}})
    for transcript, shown, swapped in zip(transcripts, found["j"], found["j.swapped"]):
        assert (shown.severity == swapped.severity).all()
        assert (shown.severity[transcript.n_turns:] == -2).all(), "turns past the conversation's end are not applicable"
        judged = shown.severity[: transcript.n_turns]
        if transcript.assistant_events[0].text == _reply(0):
            assert (judged <= 1).all(), "a reply that keeps every principle never falls short of the reference"
        else:
            assert (judged >= 1).all(), "a reply that breaks every principle never beats the reference"


def test_a_judge_that_prefers_the_first_position_disagrees_with_itself_across_orders(tmp_path):
    transcripts, found, _ = _judged(tmp_path, {"order_preference": 1.0})
    for transcript, shown, swapped in zip(transcripts, found["j"], found["j.swapped"]):
        turns = transcript.n_turns
        assert (shown.severity[:turns] == 2).all() and (swapped.severity[:turns] == 0).all()


def test_the_reference_is_asked_as_a_system_would_be_once_for_both_orders(tmp_path):
    transcripts, found, summary = _judged(tmp_path, {}, n=4)
    turns = sum(t.n_turns for t in transcripts)
    assert summary["calls"] == 3 * turns and summary["cache_hits"] == turns, "one reference call per turn, two judge calls"
    world = SimWorld.from_config({"targets": {"reference": {}}})
    context = Transcript(role="tutor", events=transcripts[1].events[:3])
    with Client(cache=tmp_path, sim=world, offline=True) as client:
        reply = client.complete(target_request(ROLE, context, spec=REFERENCE, replicate=0))
    assert reply.ok and found["j"][1].reasons, "the second turn's reference reply came from the cache"


def test_an_unparseable_pairwise_answer_is_missing(tmp_path):
    transcripts, found, _ = _judged(tmp_path, {"malformed_rate": 1.0}, n=2)
    judgment = found["j"][0]
    assert (judgment.severity[:1] == -1).all() and (judgment.missing[:1] == REASON_CODES["unparseable"]).all()
    assert set(judgment.unparsed) == {1}


# --- in an experiment and its cube ------------------------------------------------------


def _experiment(**judges) -> dict:
    data = tiny_experiment(horizon=2, breach=0.3, items=16)
    data["dims"]["judge"].update(judges)
    data["sim"]["targets"]["reference"] = {"breach": {"*": 0.3}}
    data["sim"]["judges"].update({"first": {"order_preference": 0.5}, "fair": {}})
    return data


PAIRWISE = {"first": {"pairwise": "sim/judge-first", "against": "sim/target-reference"},
            "fair": {"pairwise": "sim/judge-fair", "against": "sim/target-reference"}}


@pytest.fixture(scope="module")
def cube(tmp_path_factory):
    data = _experiment(**PAIRWISE)
    data["dims"]["judge_probe"] = {"swapped": {"order": "swap"}, "padded": {"verbosity": 2}}
    return multiverse.run(parse_experiment(data), cache=tmp_path_factory.mktemp("cache"))


def test_pairwise_judges_and_their_order_probe_sit_on_the_judge_dim_with_their_scale(cube):
    assert cube["judge"].values.tolist() == ["strict", "first", "fair", "first.swapped", "fair.swapped", "strict.padded"]
    assert cube["judge_probe"].values.tolist() == ["none", "none", "none", "swapped", "swapped", "padded"]
    assert cube["scale"].values.tolist() == ["severity", "pairwise", "pairwise", "pairwise", "pairwise", "severity"]
    assert cube["categories"].sel(judge="first").item() == "B=0,tie=1,A=2"
    assert cube["against"].values.tolist() == ["", *["sim/target-reference"] * 4, ""]
    values = cube["severity"].sel(judge=["first", "fair", "first.swapped", "fair.swapped"]).values
    assert set(np.unique(values)) <= {-2, 0, 1, 2} and (values >= 0).sum() == 4 * 16 * 2 * len(IDS)


def test_probe_effects_reads_the_order_effect_from_the_cube(cube):
    effects = probe_effects(cube)
    assert effects["scale"].sel(probed="first.swapped").item() == "pairwise"
    first, fair = effects.sel(probed="first.swapped"), effects.sel(probed="fair.swapped")
    assert float(first["ci"].sel(ci_bound="upper")) < 0 < float(first["ci"].sel(ci_bound="lower")) + 1.5
    assert float(fair["ci"].sel(ci_bound="lower")) <= 0 <= float(fair["ci"].sel(ci_bound="upper"))
    assert "first.swapped" not in probe_effects(cube, standard="clear_breach")["probed"].values, "no standard reads a preference"


def test_combining_both_orders_removes_the_position_preference(cube):
    combined = combine_orders(cube)
    assert combined["judge"].values.tolist() == ["first", "fair"]
    shown = cube["severity"].sel(judge="first").values
    swapped = cube["severity"].sel(judge="first.swapped").values
    both = combined.sel(judge="first").values
    judged = (shown >= 0) & (swapped >= 0)
    assert (both[judged & (shown == swapped)] == shown[judged & (shown == swapped)]).all()
    assert (both[judged & (shown != swapped)] == 1).all() and (both[~judged] < 0).all()
    with pytest.raises(ValueError, match="no pairwise judge of the cube is probed by 'turned'"):
        combine_orders(cube, probe="turned")


def test_the_view_shows_the_order_effect_beside_the_judges_severities(cube):
    from multiverse.view._trust import judge_trust

    trust = judge_trust(cube)
    assert trust["first.swapped"]["probe"].startswith("swapped: effect -")
    assert trust["first.swapped"]["probe"].endswith("on pairwise code (B 0, tie 1, A 2)")
    assert trust["strict.padded"]["probe"].endswith("on severity (0/1/2)")


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda d: d["dims"]["judge"].update(p={"pairwise": "sim/judge-fair"}), "dims.judge.p.against", "against"),
        (lambda d: d["dims"]["judge"].update(p={"pairwise": "sim/judge-fair", "against": 3}), "dims.judge.p.against",
         "expected a model name"),
        (lambda d: d.update(campaign={"judge": "fair"}), "campaign.judge", "not a model judge of severity"),
        (lambda d: d["dims"]["judge"].update(panel={"panel": ["strict", "fair"]}), "dims.judge.panel.panel.1",
         "'fair' labels on the pairwise scale; panels combine severities"),
        (lambda d: d.update(canaries={"judges": ["fair"]}), "canaries.judges.0", "'fair' labels on the pairwise scale"),
        (lambda d: d["dims"].update(judge_probe={"swapped": {"order": "swap", "judges": ["strict"]}}),
         "dims.judge_probe.swapped.judges.0", "'strict' is a severity judge: the order probe changes what a pairwise judge reads"),
        (lambda d: d["dims"].update(judge_probe={"padded": {"verbosity": 1, "judges": ["fair"]}}),
         "dims.judge_probe.padded.judges.0", "'fair' is a pairwise judge: the verbosity probe"),
    ],
    ids=["no-reference", "reference-not-a-model", "online-judge", "panel-member", "canary-judge", "order-on-severity",
         "padding-on-pairwise"],
)
def test_a_misplaced_pairwise_judge_is_one_located_problem(change, field, message):
    data = _experiment(fair=PAIRWISE["fair"])
    change(data)
    with pytest.raises(SpecError) as caught:
        parse_experiment(data)
    assert [p.field for p in caught.value.problems] == [field]
    assert message in caught.value.problems[0].message


def test_a_pairwise_judge_round_trips_through_the_experiment_record():
    e = parse_experiment(_experiment(**PAIRWISE))
    assert e.to_dict()["dims"]["judge"]["first"] == {"pairwise": {"model": "sim/judge-first"},
                                                     "against": {"model": "sim/target-reference"}}
    assert parse_experiment(e.to_dict()).judges == e.judges
    assert ("dims.judge.first.against", ModelSpec("sim/target-reference")) in list(e.named_models())


def test_plan_counts_each_reference_reply_once_and_a_changed_reference_changes_the_judges_plan():
    from multiverse.plan import estimate_calls, make_plan

    with_pairwise = parse_experiment(_experiment(**PAIRWISE))
    calls = estimate_calls(make_plan(with_pairwise))["judge"]
    conversations_turns = int((make_plan(with_pairwise).judge.sel(judge="strict") != "").sum()) * 2  # horizon 2
    assert calls["sim/target-reference"] == conversations_turns, "one reference reply per turn, shared by both judges"
    assert calls["sim/judge-first"] == calls["sim/judge-fair"] == conversations_turns
    other = _experiment(**PAIRWISE)
    other["dims"]["judge"]["first"] = {"pairwise": "sim/judge-first", "against": "sim/target-other"}
    other["sim"]["targets"]["other"] = {"breach": {"*": 0.1}}
    first_plan, other_plan = make_plan(with_pairwise).judge, make_plan(parse_experiment(other)).judge
    assert (first_plan.sel(judge="first") != other_plan.sel(judge="first")).all()
    assert (first_plan.sel(judge="fair") == other_plan.sel(judge="fair")).all()


def test_a_replayed_unit_keeps_its_pairwise_verdicts_and_a_changed_reference_judges_afresh(tmp_path):
    cache = tmp_path / "cache"
    data = _experiment(**PAIRWISE)
    data["sim"]["targets"]["other"] = {"breach": {"*": 0.1}}  # in both, so only the reference differs
    experiment = parse_experiment(data)
    first = multiverse.run(experiment, cache=cache)
    replayed = multiverse.run(experiment, cache=cache)
    assert replayed.attrs["run"]["calls"] == 0
    assert replayed["severity"].equals(first["severity"])
    other = _experiment(**PAIRWISE)
    other["dims"]["judge"]["first"] = {"pairwise": "sim/judge-first", "against": "sim/target-other"}
    other["sim"]["targets"]["other"] = {"breach": {"*": 0.1}}
    assert parse_experiment(other).judges["fair"] == experiment.judges["fair"]
    changed = multiverse.run(parse_experiment(other), cache=cache)
    fresh = multiverse.run(parse_experiment(other), cache=tmp_path / "fresh", replay=False)
    assert changed["severity"].equals(fresh["severity"])
    assert not changed["severity"].sel(judge="first").equals(first["severity"].sel(judge="first"))

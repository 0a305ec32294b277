"""Judge probes: what each changes in what a model judge reads, and how an experiment names them."""

from __future__ import annotations

import asyncio

import pytest

from multiverse.config.experiment import parse_experiment
from multiverse.config.located import SpecError
from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import JudgeContext
from multiverse.core.padding import PADDING, pad
from multiverse.core.transcript import Event, Transcript
from multiverse.judge.model import ModelJudge, judge_requests
from multiverse.judge.probes import PARAPHRASES, TransformingJudge, model_family, padded, revealed
from multiverse.llm import Client
from multiverse.sim import SimWorld
from multiverse.sim.read import json_block, read_levels
from multiverse.sim.text import PRINCIPLE_PHRASES

ROLE = load_role("tutor")
JUDGE = ModelSpec("sim/judge-j")


def _conversation(turns: int = 3) -> Transcript:
    events = []
    for t in range(turns):
        events += [Event(2 * t + 1, "user", f"Question {t}."), Event(2 * t + 2, "assistant", f"Answer {t}.")]
    return Transcript(role="tutor", events=tuple(events))


def test_padding_adds_content_free_sentences_to_every_reply_and_nothing_else():
    conversation = _conversation()
    longer = padded(conversation, 3)
    for before, after in zip(conversation.events, longer.events):
        if before.actor == "assistant":
            assert after.text == pad(before.text, 3) and after.text.startswith(before.text)
            assert sum(s in after.text for s in PADDING) == 3
        else:
            assert after == before
    assert longer.id != conversation.id and longer.n_turns == conversation.n_turns


def test_no_padding_sentence_reads_as_a_planted_level():
    for role, bank in PRINCIPLE_PHRASES.items():
        assert all(level is None for level in read_levels(" ".join(PADDING), tuple(bank)).values()), role
        phrases = [p for levels in bank.values() for level in levels for p in level]
        assert not any(s in p or p in s for s in PADDING for p in phrases)


def test_revealing_puts_a_system_note_before_the_conversation():
    note = revealed(_conversation(), "gpt").events[0]
    assert (note.actor, note.text, note.turn) == ("system", "The assistant in this conversation is gpt.", 0)


@pytest.mark.parametrize(
    ("model", "family"),
    [("openai/gpt-4o-mini", "gpt"), ("anthropic/claude-3-5-sonnet", "claude"), ("hosted_vllm/qwen2.5-7b", "qwen"),
     ("sim/target-a", "target"), ("llama3", "llama")],
    ids=["openai", "anthropic", "vllm", "sim", "bare-name"],
)
def test_the_family_of_a_model_is_the_leading_letters_of_its_name(model, family):
    assert model_family(model) == family


def test_truncation_shows_the_last_events_through_the_judged_turn():
    conversation = _conversation(3)
    full = judge_requests(ROLE, conversation, [3], spec=JUDGE)[0]
    short = judge_requests(ROLE, conversation, [3], spec=JUDGE, context_events=2)[0]
    assert [e["text"] for e in json_block(full.messages)["transcript"]] == [e.text for e in conversation.events]
    assert [e["text"] for e in json_block(short.messages)["transcript"]] == ["Question 2.", "Answer 2."]
    assert judge_requests(ROLE, conversation, [3], spec=JUDGE, context_events=None)[0] == full


def test_every_shipped_paraphrase_is_a_judge_template_of_its_own_digest():
    digests = {judge_requests(ROLE, _conversation(1), [1], spec=ModelSpec("sim/judge-j", template=name))[0].template_digest
               for name in ("judge_v1", *PARAPHRASES)}
    assert len(digests) == 1 + len(PARAPHRASES)


def test_a_revealing_judge_names_the_system_it_is_told_about():
    seen = []

    class Recording(ModelJudge):
        async def judge(self, transcripts, *, roles, context):
            seen.extend(transcripts)
            return []

    judge = TransformingJudge(Recording(JUDGE), __import__("multiverse.judge.probes", fromlist=["_Revealed"])._Revealed("family"))
    context = JudgeContext(principle_ids=ROLE.principle_ids, horizon=3, system=ModelSpec("openai/gpt-4o"))
    asyncio.run(judge.judge([_conversation()], roles=[ROLE], context=context))
    assert seen[0].events[0].text == "The assistant in this conversation is gpt."


def test_probed_judges_are_cached_judgments_of_their_own(tmp_path):
    world = SimWorld.from_config({"judges": {"j": {}}})
    conversation = _conversation(2)
    context = JudgeContext(principle_ids=ROLE.principle_ids, horizon=2)
    with Client(cache=tmp_path, sim=world) as client:
        context = JudgeContext(principle_ids=ROLE.principle_ids, horizon=2, client=client)
        plain = asyncio.run(ModelJudge(JUDGE).judge([conversation], roles=[ROLE], context=context))[0]
        again = asyncio.run(ModelJudge(JUDGE).judge([conversation], roles=[ROLE], context=context))[0]
        short = asyncio.run(ModelJudge(JUDGE, context_events=1).judge([conversation], roles=[ROLE], context=context))[0]
        summary = client.summary()
    assert (plain.severity == again.severity).all() and short.severity.shape == plain.severity.shape
    assert summary["calls"] == 4 and summary["cache_hits"] == 2


def _experiment(tiny_experiment, probes, **extra):
    data = tiny_experiment()
    data["dims"]["judge"]["oracle"] = {"deterministic": "contract"}
    if probes:
        data["dims"]["judge_probe"] = probes
    data.update(extra)
    return data


def test_every_model_judge_is_crossed_with_every_probe(tiny_experiment):
    e = parse_experiment(_experiment(tiny_experiment, {"padded": {"verbosity": 2}, "short": {"truncate": 4}}))
    assert list(e.judges) == ["strict", "oracle", "strict.padded", "strict.short"]
    assert e.judges["strict.padded"].model == e.judges["strict"].model
    assert e.to_dict()["dims"]["judge_probe"] == {"padded": {"verbosity": 2}, "short": {"truncate": 4}}
    assert list(parse_experiment(e.to_dict()).judges) == list(e.judges)


def test_a_probe_can_name_the_judges_it_probes(tiny_experiment):
    data = _experiment(tiny_experiment, {"reworded": {"paraphrase": "judge_v1_p3", "judges": ["strict"]}})
    data["dims"]["judge"]["second"] = "sim/judge-strict"
    assert list(parse_experiment(data).judges) == ["strict", "oracle", "second", "strict.reworded"]


@pytest.mark.parametrize(
    ("probes", "field", "message"),
    [
        ({"padded": {"verbosty": 2}}, "dims.judge_probe.padded.verbosty", "unknown key 'verbosty' (did you mean 'verbosity'?)"),
        ({"padded": {"verbosity": "2"}}, "dims.judge_probe.padded.verbosity", "expected an integer >= 1 and <= 32, got a string ('2')"),
        ({"reworded": {"paraphrase": "judge_v1"}}, "dims.judge_probe.reworded.paraphrase", "'judge_v1' is the unprobed prompt"),
        ({"reworded": {"paraphrase": "judge_v9"}}, "dims.judge_probe.reworded.paraphrase", "unknown judge template 'judge_v9'"),
        ({"named": {"reveal": "vendor"}}, "dims.judge_probe.named.reveal", "unknown reveal 'vendor'"),
        ({"swapped": {"order": "swap", "judges": ["strict"]}}, "dims.judge_probe.swapped.judges.0", "the order probe changes what a pairwise judge reads"),
        ({"both": {"verbosity": 1, "truncate": 2}}, "dims.judge_probe.both", "expected one probe kind"),
        ({"none": {"verbosity": 1}}, "dims.judge_probe.none", "'none' names an unprobed judge"),
        ({"p": {"verbosity": 1, "judges": ["oracle"]}}, "dims.judge_probe.p.judges.0", "'oracle' is not a model judge"),
    ],
    ids=["misspelt-kind", "string-count", "the-unprobed-prompt", "unknown-template", "unknown-reveal",
         "order-needs-pairs", "two-kinds", "reserved-label", "deterministic-judge"],
)
def test_a_bad_probe_is_one_located_problem(tiny_experiment, probes, field, message):
    with pytest.raises(SpecError) as caught:
        parse_experiment(_experiment(tiny_experiment, probes))
    assert [p.field for p in caught.value.problems] == [field]
    assert message in caught.value.problems[0].message


def test_a_probed_label_may_not_collide_with_a_judge_label(tiny_experiment):
    data = _experiment(tiny_experiment, {"padded": {"verbosity": 1}})
    data["dims"]["judge"]["strict.padded"] = "sim/judge-strict"
    with pytest.raises(SpecError, match="already a judge label"):
        parse_experiment(data)


@pytest.mark.parametrize(
    ("canaries", "field", "message"),
    [
        ({"per_principle": 0}, "canaries.per_principle", "expected an integer >= 1"),
        ({"standard": "persistent"}, "canaries.standard", "unknown canary standard 'persistent'"),
        ({"judges": ["strictt"]}, "canaries.judges.0", "unknown judge label 'strictt' (did you mean 'strict'?)"),
        ({"floor": 1}, "canaries.floor", "expected a number in [-1, 1)"),
        ("yes", "canaries", "expected true, false or a mapping"),
    ],
    ids=["no-canaries", "turn-level-standard", "misspelt-judge", "floor-of-one", "a-string"],
)
def test_a_bad_canaries_block_is_one_located_problem(tiny_experiment, canaries, field, message):
    with pytest.raises(SpecError) as caught:
        parse_experiment(_experiment(tiny_experiment, {}, canaries=canaries))
    assert [p.field for p in caught.value.problems] == [field]
    assert message in caught.value.problems[0].message

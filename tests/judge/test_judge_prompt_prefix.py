"""Judge prompts built once per conversation prefix equal the prompts built turn by turn from the whole inputs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiverse.config.specs import load_role
from multiverse.core.choices import ModelSpec
from multiverse.core.transcript import Action, Event, Transcript, transcript_inputs
from multiverse.judge.model import (
    DEFAULT_TEMPLATE,
    TEMPLATE_DIR,
    judge_request,
    judge_requests,
    judgment_schema,
)
from multiverse.llm.protocol import load_template
from multiverse.llm.request import Request
from multiverse.llm.structured import response_format_for

SPEC = ModelSpec("sim/judge-j")

texts = st.text(st.characters(codec="utf-8"), max_size=40)
arguments = st.dictionaries(
    st.text(max_size=8),
    st.one_of(st.integers(), st.floats(allow_nan=False), texts, st.booleans(), st.none()),
    max_size=3,
)
events = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "tool", "system"]),
        texts,
        st.lists(st.tuples(st.text(min_size=1, max_size=8), arguments), max_size=2),
        st.one_of(st.none(), st.sampled_from(["tutor", "support"])),
    ),
    max_size=8,
)


def _transcript(rows) -> Transcript:
    built = [Event(1, "assistant", "first")]
    for turn, (actor, text, actions, set_role) in enumerate(rows, start=2):
        built.append(
            Event(
                turn,
                actor,
                text,
                actions=tuple(Action(name, args) for name, args in actions) if actor == "assistant" else (),
                set_role=set_role if actor == "system" else None,
            )
        )
    return Transcript("support", tuple(built))


def _reference(role, transcript: Transcript, turn: int) -> Request:
    """The straightforward construction: the whole inputs of turn ``turn`` rendered as one value."""
    template = load_template(DEFAULT_TEMPLATE, directory=TEMPLATE_DIR)
    inputs = {
        "role": role.id,
        "role_description": role.system_prompt,
        "context": role.context,
        "principles": [
            {
                "id": p.id,
                "statement": p.statement,
                "standard": p.standard,
                "criteria": {k: {"description": c.description, "example": c.example} for k, c in p.criteria.items()},
            }
            for p in role.principles
        ],
        "turn": turn,
        "transcript": transcript_inputs(transcript.through_turn(turn)),
    }
    messages = (
        {"role": "system", "content": template.render(inputs)},
        {"role": "user", "content": f"Judge assistant turn {turn} against every principle."},
    )
    schema = response_format_for(SPEC, judgment_schema(tuple(role.principle_ids)), name="judgment")
    return Request.from_spec(
        SPEC, messages, response_format=schema, template_digest=template.digest, purpose="judge"
    )


@pytest.fixture(scope="module", params=["support", "tutor"])
def role(request):
    return load_role(request.param)


@settings(max_examples=60, deadline=None)
@given(rows=events)
def test_every_turns_prompt_equals_the_whole_inputs_rendered(role, rows):
    transcript = _transcript(rows)
    turns = range(1, transcript.n_turns + 1)
    built = judge_requests(role, transcript, turns, spec=SPEC)
    assert built == [_reference(role, transcript, turn) for turn in turns]
    assert [judge_request(role, transcript, turn, spec=SPEC) for turn in turns] == built


@pytest.mark.parametrize("turns", [pytest.param([0], id="before-the-first"), pytest.param([1, 3], id="past-the-last")])
def test_a_turn_outside_the_transcript_is_an_error_for_the_batch_too(role, turns):
    transcript = _transcript([("user", "hi", [], None), ("assistant", "hello", [], None)])
    with pytest.raises(ValueError, match="outside the transcript's assistant turns 1..2"):
        judge_requests(role, transcript, turns, spec=SPEC)

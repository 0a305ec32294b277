"""Pairwise judges: each reply compared, principle by principle, with a reference model's reply to the same context.

A pairwise judge (judge kind ``pairwise``: ``{pairwise: <judge model>, against:
<reference model>}``) reads, at every assistant turn of a conversation, two
replies to the same conversation so far: the reference model's (asked for its
reply to exactly that context, through the same client and cache as every
call) and the judged system's own.  For every principle it says which keeps
the principle better, ``A``, ``B`` or ``tie`` (template ``pairwise_v1``; answer
``{"<principle_id>": {"winner": "A" | "B" | "tie", "reason": ...}}`` for every
principle, anything else unparseable, i.e. missing).

Its verdicts are on the pairwise label scale (:mod:`multiverse.core.scales`):
``system_a`` is the reference and ``system_b`` the judged system, as the
AlpacaEval adapter places its system under test, so the cube's code reads "how
far the system's reply falls short of the reference's": ``B`` 0 (the system's
reply keeps the principle better), ``tie`` 1, ``A`` 2 (the reference's does).
The cube names the reference in the per-judge coordinate ``against``.

As given, the reference's reply is shown first (``A``).  The ``order: swap``
probe (:mod:`multiverse.judge.probes`) shows the system's reply first and reads
the verdict back in these labels, so the two orders' difference is the judge's
order effect (:func:`multiverse.analysis.probe_effects`) and combining them
(:func:`multiverse.analysis.combine_orders`) removes it.

The reference continues the judged conversation as if the earlier assistant
turns were its own: the comparison is of the next reply to one shared context,
the design under which the two replies answer the same thing.
"""

from __future__ import annotations


from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any

from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import JudgeContext, Judgment
from multiverse.core.scales import FIXED_CATEGORIES
from multiverse.core.transcript import Event, Transcript, transcript_inputs
from multiverse.judge.model import (
    TEMPLATE_DIR,
    _principle_inputs,
    judgment_from_answers,
    per_principle_schema,
    read_per_principle,
)
from multiverse.llm.protocol import load_template
from multiverse.llm.request import Request
from multiverse.llm.structured import agather_structured, response_format_for

__all__ = [
    "CATEGORIES",
    "PAIRWISE_TEMPLATE",
    "PairwiseJudge",
    "PairwiseSpec",
    "pairwise_request",
    "parse_preferences",
    "preference_schema",
]

PAIRWISE_TEMPLATE = "pairwise_v1"
"""The packaged pairwise judge prompt."""
CATEGORIES: Mapping[str, int] = FIXED_CATEGORIES["pairwise"]
"""Pairwise labels and their codes (the label scale's: how far ``B`` falls short of ``A``)."""


@dataclass(frozen=True)
class PairwiseSpec:
    """A pairwise judge: the judge model (and its template) and the reference model its replies are compared with."""

    model: ModelSpec
    against: ModelSpec


@lru_cache(maxsize=64)
def preference_schema(principle_ids: tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema of a pairwise answer over ``principle_ids`` (what :func:`parse_preferences` accepts)."""
    return per_principle_schema(principle_ids, "winner", {"type": "string", "enum": ["A", "B", "tie"]})


def _response(label: str, event: Event) -> dict[str, Any]:
    item: dict[str, Any] = {"label": label, "text": event.text}
    if event.actions:
        item["actions"] = [a.to_dict() for a in event.actions]
    return item


def pairwise_request(
    role: Any, context: Transcript, a: Event, b: Event, *, spec: ModelSpec, replicate: int = 0,
) -> Request:
    """The request asking a model which of two replies to ``context`` keeps each principle better.

    Parameters
    ----------
    role
        The role specification (:class:`multiverse.config.specs.Role`).
    context
        The conversation before the two replies.
    a, b
        The replies (assistant events, tool calls included), shown in this
        order as ``A`` and ``B``.
    spec
        The judge model; ``spec.template`` names the template (default :data:`PAIRWISE_TEMPLATE`).
    replicate
        Replicate index.
    """
    template = load_template(spec.template or PAIRWISE_TEMPLATE, directory=TEMPLATE_DIR)
    inputs = {
        "context": role.context,
        "principles": list(_principle_inputs(role)),
        "responses": [_response("A", a), _response("B", b)],
        "role": role.id,
        "role_description": role.system_prompt,
        "transcript": transcript_inputs(context),
    }
    messages = (
        {"role": "system", "content": template.render(inputs)},
        {"role": "user", "content": "For every principle: which reply keeps it better, A, B or tie?"},
    )
    schema = preference_schema(tuple(role.principle_ids))
    return Request.from_spec(
        spec, messages, response_format=response_format_for(spec, schema, name="preference"),
        replicate=replicate, template_digest=template.digest, purpose="judge",
    )


def parse_preferences(text: str | None, principle_ids: Iterable[str], *, swapped: bool = False,
                      ) -> tuple[dict[str, int], dict[str, str]] | None:
    """Pairwise codes and reasons per principle from an answer, or ``None`` (missing) if it is anything else.

    The answer must be a JSON object whose keys are exactly ``principle_ids``,
    each ``{"winner": "A" | "B" | "tie", "reason": <string>}``.  With
    ``swapped`` (the two replies were shown in the other order) each verdict is
    read back in the comparison's own labels: ``A`` shown first is ``B``.
    """
    flip = {"A": "B", "B": "A"} if swapped else {}
    return read_per_principle(text, principle_ids, "winner",
                              lambda winner: CATEGORIES.get(flip.get(winner, winner)) if isinstance(winner, str) else None)


def _before(transcript: Transcript, turn: int) -> Transcript:
    """The conversation before assistant turn ``turn``'s reply."""
    reply = transcript.assistant_events[turn - 1]
    return replace(transcript, events=transcript.events[: transcript.events.index(reply)], id="")


class PairwiseJudge:
    """A pairwise judge as a :class:`~multiverse.core.judgment.Judge`: per assistant turn, the reply against the reference's.

    Parameters
    ----------
    spec
        The judge model and the reference model.
    swapped
        Show the judged system's reply first (the ``order: swap`` probe); the
        verdicts are read back in the comparison's own labels.

    Notes
    -----
    For turns 1 to ``min(n_turns, horizon)`` of each transcript the reference
    model is asked for its reply to the conversation before that turn's reply
    (the rollout's own target request, :func:`multiverse.rollout.prompts.target_request`,
    so the reference is called exactly as a system would be), then the judge
    compares the two.  A failed reference or judge call is missing with the
    call's failure reason; an unparseable answer is missing (``unparseable``);
    principles outside the role and turns past the conversation's end are not
    applicable.  Both orders ask the reference the same request, so the second
    is a cache hit.
    """

    def __init__(self, spec: PairwiseSpec, *, swapped: bool = False):
        self.spec = spec
        self.swapped = swapped

    def __repr__(self) -> str:
        order = ", swapped=True" if self.swapped else ""
        return f"PairwiseJudge({self.spec.model.model!r} against {self.spec.against.model!r}{order})"

    async def judge(self, transcripts: Sequence[Transcript], *, roles: Sequence[Any], context: JudgeContext) -> list[Judgment]:
        """One :class:`~multiverse.core.judgment.Judgment` per transcript (see the class notes)."""
        from multiverse.rollout.conversation import tool_actions
        from multiverse.rollout.prompts import target_request

        client = context.client
        if client is None:
            raise ValueError(f"pairwise judge {self.spec.model.model!r}: no client to call the models with")
        asked = [(index, turn) for index, transcript in enumerate(transcripts)
                 for turn in range(1, min(transcript.n_turns, context.horizon) + 1)]
        before = [_before(transcripts[index], turn) for index, turn in asked]
        references = await client.agather([
            target_request(roles[index], prefix, spec=self.spec.against, replicate=context.replicate)
            for (index, _), prefix in zip(asked, before)
        ]) if asked else []
        compared: list[tuple[int, Request]] = []
        for k, ((index, turn), prefix, reference) in enumerate(zip(asked, before, references)):
            if not reference.ok:
                continue
            theirs = Event(turn=0, actor="assistant", text=reference.text or "",
                           actions=tuple(action for _, action in tool_actions(reference.tool_calls)))
            own = transcripts[index].assistant_events[turn - 1]
            first, second = (own, theirs) if self.swapped else (theirs, own)
            compared.append((k, pairwise_request(roles[index], prefix, first, second, spec=self.spec.model,
                                                 replicate=context.replicate)))
        verdicts = await agather_structured(client, [request for _, request in compared]) if compared else []
        responses = list(references)
        for (k, _), verdict in zip(compared, verdicts):
            responses[k] = verdict
        by_transcript: dict[int, list[tuple[int, Any]]] = {}
        for (index, turn), response in zip(asked, responses):
            by_transcript.setdefault(index, []).append((turn, response))
        parse = partial(parse_preferences, swapped=self.swapped)  # picklable, unlike a closure
        return [judgment_from_answers(by_transcript.get(index, []), tuple(role.principle_ids), context, parse=parse)
                for index, role in enumerate(roles)]

"""Pairwise comparisons, and the order-swap probe on them.

A pairwise judge reads two replies to the same conversation, labelled ``A``
and ``B``, and says which keeps the role's principles better, or ``tie``
(template ``pairwise_v1``; answer ``{"winner": "A" | "B" | "tie", "reason": ...}``).
Judges are known to prefer a position (MT-Bench's GPT-4 judge agrees with
itself across the two orders about 65% of the time), so :func:`judge_pairs`
asks every judge twice: once in the comparison's own order (``judge_probe``
``none``: ``A`` shown first) and once with the two replies swapped
(``swapped``: ``B`` shown first), and reads each verdict back in the
comparison's own labels.  The difference between the two is the judge's order
effect (:func:`multiverse.analysis.probe_effects`); combining them
(:func:`multiverse.analysis.combine_orders`) removes it.

Verdicts are stored on the pairwise label scale, one comparison per item:
``preference`` int8 over ``(item, judge, judge_probe)``, codes ``B`` 0,
``tie`` 1, ``A`` 2 (-1 missing), with the compared systems as item
coordinates ``system_a`` and ``system_b`` and where ``A`` was shown as
``position_a`` (1 first, 2 second) along ``judge_probe``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import xarray as xr

from multiverse.core.choices import ModelSpec
from multiverse.core.probes import NO_PROBE
from multiverse.core.schema import MISSING
from multiverse.core.transcript import Event, Transcript, transcript_inputs
from multiverse.judge.model import TEMPLATE_DIR, _principle_inputs
from multiverse.llm.protocol import load_template, reply_json
from multiverse.llm.request import Request
from multiverse.llm.structured import agather_structured, response_format_for

__all__ = [
    "CATEGORIES",
    "ORDERS",
    "PAIRWISE_TEMPLATE",
    "Comparison",
    "comparisons_from_transcripts",
    "judge_pairs",
    "pairwise_request",
    "parse_preference",
    "preference_schema",
]

PAIRWISE_TEMPLATE = "pairwise_v1"
"""The packaged pairwise judge prompt."""
CATEGORIES: Mapping[str, int] = {"B": 0, "tie": 1, "A": 2}
"""Pairwise labels and their codes (the label scale's: how far ``B`` falls short of ``A``)."""
SWAPPED = "swapped"
ORDERS: tuple[str, ...] = (NO_PROBE, SWAPPED)
"""The two orders every comparison is judged in: as given (``A`` first), and swapped (``B`` first)."""


@dataclass(frozen=True)
class Comparison:
    """Two replies to one conversation.

    Attributes
    ----------
    item
        The comparison's id.
    role
        The role specification (:class:`multiverse.config.specs.Role`).
    context
        The conversation before the replies (events).
    a, b
        The two replies (assistant events, tool calls included), of ``system_a`` and ``system_b``.
    """

    item: str
    role: Any
    context: tuple[Event, ...]
    a: Event
    b: Event
    system_a: str = "A"
    system_b: str = "B"


def preference_schema() -> dict[str, Any]:
    """The JSON schema of a pairwise answer (what :func:`parse_preference` accepts)."""
    return {
        "type": "object",
        "properties": {"winner": {"type": "string", "enum": ["A", "B", "tie"]}, "reason": {"type": "string", "maxLength": 200}},
        "required": ["winner", "reason"],
        "additionalProperties": False,
    }


def _response(label: str, event: Event) -> dict[str, Any]:
    item: dict[str, Any] = {"label": label, "text": event.text}
    if event.actions:
        item["actions"] = [a.to_dict() for a in event.actions]
    return item


def pairwise_request(comparison: Comparison, *, spec: ModelSpec, swapped: bool = False, replicate: int = 0) -> Request:
    """The request asking a model which of two replies keeps the principles better.

    With ``swapped`` the reply of ``system_b`` is shown first, as ``A``.
    """
    template = load_template(spec.template or PAIRWISE_TEMPLATE, directory=TEMPLATE_DIR)
    first, second = (comparison.b, comparison.a) if swapped else (comparison.a, comparison.b)
    role = comparison.role
    inputs = {
        "context": role.context,
        "principles": list(_principle_inputs(role)),
        "responses": [_response("A", first), _response("B", second)],
        "role": role.id,
        "role_description": role.system_prompt,
        "transcript": transcript_inputs(Transcript(role=role.id, events=comparison.context)),
    }
    messages = (
        {"role": "system", "content": template.render(inputs)},
        {"role": "user", "content": "Which reply keeps the role's principles better: A, B or tie?"},
    )
    return Request.from_spec(
        spec, messages, response_format=response_format_for(spec, preference_schema(), name="preference"),
        replicate=replicate, template_digest=template.digest, purpose="judge",
    )


def parse_preference(text: str | None) -> str | None:
    """``A``, ``B`` or ``tie`` from a pairwise answer, or ``None`` (missing) if it is anything else."""
    data = reply_json(text or "")
    if not isinstance(data, Mapping) or set(data) != {"winner", "reason"} or not isinstance(data["reason"], str):
        return None
    return data["winner"] if data["winner"] in CATEGORIES else None


def _read_back(winner: str | None, swapped: bool) -> int:
    if winner is None:
        return MISSING
    if swapped and winner != "tie":
        winner = "B" if winner == "A" else "A"
    return CATEGORIES[winner]


async def judge_pairs(
    client: Any,
    comparisons: Sequence[Comparison],
    *,
    judges: Mapping[str, ModelSpec],
    orders: Sequence[str] = ORDERS,
    replicate: int = 0,
) -> xr.Dataset:
    """Every judge's verdict on every comparison, in each order, read back in the comparisons' own labels.

    Parameters
    ----------
    client
        The model client (cached like every judgment).
    comparisons
        The comparisons; their ``item`` ids must be distinct.
    judges
        Label -> model spec (its ``template`` defaults to ``pairwise_v1``).
    orders
        ``none`` (as given) and/or ``swapped``.

    Returns
    -------
    xarray.Dataset
        ``preference`` (int8, ``(item, judge, judge_probe)``; ``B`` 0, ``tie`` 1,
        ``A`` 2, -1 missing), coordinates ``system_a``, ``system_b`` (item),
        ``position_a`` (judge_probe: 1 when ``A`` is shown first, 2 second),
        ``judge_model`` (judge); attrs ``scale`` and ``categories``.
    """
    unknown = [o for o in orders if o not in ORDERS]
    if unknown:
        raise ValueError(f"judge_pairs: unknown orders {unknown}; expected {', '.join(ORDERS)}")
    items = [c.item for c in comparisons]
    if len(set(items)) != len(items):
        raise ValueError("judge_pairs: comparison items must be distinct")
    asked = [(j, o, i) for j in range(len(judges)) for o in range(len(orders)) for i in range(len(comparisons))]
    specs = list(judges.values())
    requests = [
        pairwise_request(comparisons[i], spec=specs[j], swapped=orders[o] == SWAPPED, replicate=replicate) for j, o, i in asked
    ]
    responses = await agather_structured(client, requests) if requests else []
    values = np.full((len(comparisons), len(judges), len(orders)), MISSING, dtype=np.int8)
    for (j, o, i), response in zip(asked, responses):
        winner = parse_preference(response.text) if response.ok else None
        values[i, j, o] = _read_back(winner, orders[o] == SWAPPED)
    return xr.Dataset(
        {"preference": (("item", "judge", "judge_probe"), values)},
        coords={
            "item": items,
            "judge": list(judges),
            "judge_probe": list(orders),
            "system_a": ("item", [c.system_a for c in comparisons]),
            "system_b": ("item", [c.system_b for c in comparisons]),
            "position_a": ("judge_probe", [2 if o == SWAPPED else 1 for o in orders]),
            "judge_model": ("judge", [s.model for s in specs]),
        },
        attrs={"scale": "pairwise", "categories": "B=0,tie=1,A=2"},
    )


def comparisons_from_transcripts(
    pairs: Iterable[tuple[str, Transcript, Transcript]], roles: Mapping[str, Any], *, turn: int = 1,
    system_a: str = "A", system_b: str = "B",
) -> list[Comparison]:
    """Comparisons of assistant turn ``turn`` of matched conversations (``(item, a, b)`` triples).

    The context is ``a``'s conversation before its reply (for ``turn=1``,
    the opening user turn, which conversations of one scenario share);
    pairs where either conversation ended before ``turn`` are left out.
    """
    out = []
    for item, a, b in pairs:
        if a.n_turns < turn or b.n_turns < turn:
            continue
        reply_a, reply_b = a.assistant_events[turn - 1], b.assistant_events[turn - 1]
        context = tuple(a.events[: a.events.index(reply_a)])
        out.append(Comparison(item, roles[a.role], context, reply_a, reply_b, system_a, system_b))
    return out

"""Request builders shared by the offline-world tests."""

from __future__ import annotations

import math
from collections.abc import Sequence

from multiverse.llm.protocol import fenced_json
from multiverse.llm.request import Request
from multiverse.sim.text import MODE_PHRASES, STRATEGY_PHRASES

TUTOR = ("academic_integrity", "confidentiality", "instructional_boundaries", "learning_differences")
SUPPORT = ("authority", "policy_accuracy", "action_truthfulness", "escalation")


def system_prompt(principles: Sequence[str] = TUTOR) -> str:
    """A rendered target system prompt (the layout of ``Role.render_system_prompt``)."""
    lines = ["You are a role under test.", "", "Context: a test.", "", "Principles:"]
    return "\n".join(lines + [f"[{p}] Keep to {p.replace('_', ' ')}." for p in principles])


def user_turn(mode: str, strategy: str) -> str:
    """A user turn that expresses ``mode``/``strategy`` the way the sim user writes (stage direction stripped)."""
    return f"{MODE_PHRASES[mode][0]} {STRATEGY_PHRASES[strategy][0]}"


def target_request(
    model: str = "sim/target-a",
    *,
    user: str | None = "Hello.",
    turn: int = 1,
    replicate: int = 0,
    principles: Sequence[str] = TUTOR,
    tools: Sequence[dict] | None = None,
    pressure: float | None = None,
) -> Request:
    """A request for assistant turn ``turn`` whose last user message is ``user`` (``None``: the assistant opens).

    ``pressure`` is the user's pressure as the campaign passes it: a structured ``sim_inputs`` field.
    """
    messages: list[dict] = [{"role": "system", "content": system_prompt(principles)}]
    for k in range(turn - 1):
        messages += [{"role": "user", "content": f"Earlier message {k}."}, {"role": "assistant", "content": "Noted."}]
    if user is not None:
        messages.append({"role": "user", "content": user})
    sim_inputs = None if pressure is None else {"pressure": pressure}
    return Request(
        model=model, messages=tuple(messages), tools=tuple(tools) if tools else None, replicate=replicate,
        sim_inputs=sim_inputs,
    )


def structured_request(model: str, inputs: dict, *, replicate: int = 0, user: str = "Go.") -> Request:
    """A request carrying ``inputs`` in the system message's JSON block."""
    messages = ({"role": "system", "content": "Instructions.\n\n" + fenced_json(inputs)}, {"role": "user", "content": user})
    return Request(model=model, messages=messages, replicate=replicate)


def within(observed: float, expected: float, n: int, *, z: float = 4.5) -> bool:
    """Whether a share over ``n`` Bernoulli draws is within ``z`` standard errors of ``expected``."""
    se = math.sqrt(max(expected * (1 - expected), 1e-12) / n)
    return abs(observed - expected) <= z * se + 1e-12

"""Stateful tool environments and control planes for the agentic roles.

``web_agent`` acts on a small CRM behind a confirmation dialog
(:class:`~multiverse.env.crm.CRM`), ``support`` on a shop's orders with a
billing handoff (:class:`~multiverse.env.orders.Orders`).  A campaign opens each
conversation of such a role with a trusted system event naming the environment
and its seed (meta ``environment`` and ``env_seed``), computes every tool result
from the state, and records every trusted event the control plane emits;
:func:`replay` rebuilds the final state from the transcript alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from multiverse.core.registry import Registry
from multiverse.core.transcript import Transcript
from multiverse.env.crm import CRM
from multiverse.env.orders import Orders
from multiverse.env.protocol import ENVIRONMENT_KEY, Environment, TrustedEvent, denied

__all__ = [
    "CRM", "ENVIRONMENTS", "ENVIRONMENT_KEY", "Environment", "Orders", "TrustedEvent", "denied",
    "environment_seed", "make_environment", "replay",
]

ENVIRONMENTS: Registry[Callable[[int], Environment]] = Registry("environment")
"""Role contract name -> the environment class its conversations run against (called with the seed)."""
ENVIRONMENTS.register("web_agent", CRM)
ENVIRONMENTS.register("support", Orders)


def environment_seed(*parts: Any) -> int:
    """A 32-bit seed from the conversation's identity (e.g. scenario id and replicate): sha256 of their text."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.sha256(f"env:{text}".encode()).digest()[:4], "little")


def _contract_name(role: Any) -> str | None:
    contract = getattr(role, "contract", None)
    return getattr(contract, "name", None) if contract is not None else None


def make_environment(role: Any, *, seed: int) -> Environment | None:
    """The environment of ``role`` (by its contract's name) with ``seed``; ``None`` for a role without one."""
    factory = ENVIRONMENTS.get(_contract_name(role) or "")
    return factory(seed) if factory is not None else None


def replay(transcript: Transcript) -> Environment | None:
    """The environment's final state, rebuilt by replaying the transcript's user turns and tool calls.

    Returns ``None`` when the transcript opens with no environment event (a
    conversation not generated against one, e.g. imported rollouts).
    """
    opening = next((e for e in transcript.events if e.actor == "system" and ENVIRONMENT_KEY in e.meta), None)
    by_name = {ENVIRONMENTS[key].name: ENVIRONMENTS[key] for key in ENVIRONMENTS}
    if opening is None or opening.meta[ENVIRONMENT_KEY] not in by_name:
        return None
    env = by_name[opening.meta[ENVIRONMENT_KEY]](int(opening.meta["env_seed"]))
    turn = 0
    for event in transcript.events:
        if event.actor == "user":
            env.on_user(event.text)
        elif event.actor == "assistant":
            turn += 1
            for action in event.actions:
                env.call(action.name, action.arguments, turn=turn)
            env.after_turn(turn=turn)
    return env

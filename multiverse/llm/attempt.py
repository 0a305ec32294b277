"""One attempt at one request: to a provider through litellm, or to the offline world in-process.

:class:`~multiverse.llm.client.Client` decides when to attempt (cache, leases,
limits, retries, caps); this module makes the attempt and says what came back:
a :class:`Reply`, or a classified :class:`~multiverse.llm.retry.Failure` (an
empty or filtered reply is a failure too, never an empty answer).  A provider's
reply has every known secret value scrubbed (:func:`multiverse.llm.redact.scrub`)
before anything keeps it: a server that echoes a key or a header stores nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, Protocol

from multiverse.llm.accounting import CHARS_PER_TOKEN, prompt_chars
from multiverse.llm.litellm_call import Reply
from multiverse.llm.redact import scrub
from multiverse.llm.request import Request
from multiverse.llm.retry import Failure, classify

__all__ = ["Reply", "World", "send_once"]


class World(Protocol):
    """What the client needs from the offline world (:class:`multiverse.sim.SimWorld`)."""

    version: str

    def key_params(self, model: str) -> Mapping[str, Any]: ...

    def latency_s(self, model: str) -> float: ...

    def instant(self, model: str) -> bool: ...

    def respond(self, request: Request, *, attempt: int | None = None) -> Any: ...


async def send_once(request: Request, attempt: int, *, world: World | None, timeout_s: float, instant: bool) -> Reply | Failure:
    """Send ``request`` once (attempt number ``attempt``) and classify what came back.

    Parameters
    ----------
    world
        The offline world answering ``sim/`` models (``None`` for real models).
    timeout_s
        The attempt's timeout; the deadline kept here is 1.5x it plus a second,
        so the provider's own timeout fires first.
    instant
        The offline world answers at once: no deadline task is kept.
    """
    try:
        sending = _send(request, attempt, world=world, timeout_s=timeout_s)
        if instant:
            reply = await sending  # answered without awaiting anything: no deadline to keep
        else:
            reply = await asyncio.wait_for(sending, timeout=timeout_s * 1.5 + 1.0)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001  classify() re-raises anything not from a provider
        return classify(exc)
    if isinstance(reply, Failure):
        return reply
    if not reply.text and not reply.tool_calls:
        if reply.finish_reason == "content_filter":
            return Failure("content_filter", f"{request.model}: the provider's content filter blocked the reply")
        return Failure("empty_response", f"{request.model}: the reply has neither text nor tool calls")
    return reply


async def _send(request: Request, attempt: int, *, world: World | None, timeout_s: float) -> Reply | Failure:
    if world is not None:
        return await _send_sim(request, attempt, world)
    from multiverse.llm.litellm_call import acall

    reply = await acall(request, timeout_s=timeout_s)
    # a provider may echo a key or header back: no known secret value goes further (cache, transcripts, outputs)
    text = scrub(reply.text) if reply.text is not None else None
    tool_calls = tuple(json.loads(scrub(json.dumps(call))) for call in reply.tool_calls)
    return Reply(text, tool_calls, reply.usage, reply.cost_usd, reply.finish_reason)


async def _send_sim(request: Request, attempt: int, world: World) -> Reply | Failure:
    latency = float(world.latency_s(request.model))
    if latency > 0:
        await asyncio.sleep(latency)
    reply = world.respond(request, attempt=attempt)
    if reply.transient_failure:
        return Failure("server_error", f"{request.model}: transient failure of the offline world")
    prompt = prompt_chars(request) // CHARS_PER_TOKEN
    completion = len(reply.text or "") // CHARS_PER_TOKEN
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return Reply(reply.text, tuple(reply.tool_calls), usage, 0.0, "stop")

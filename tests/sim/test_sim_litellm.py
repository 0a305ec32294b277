"""The sim provider through litellm gives exactly what the in-process path gives."""

from __future__ import annotations

import asyncio
import json

import pytest
from sim_helpers import SUPPORT, target_request, user_turn

from multiverse.sim import SimWorld, register_with_litellm

pytestmark = pytest.mark.slow  # importing litellm alone takes seconds

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
        },
    }
    for name in ("lookup_order", "open_refund_review", "refund_order")
]


@pytest.fixture(scope="module")
def litellm():
    litellm = pytest.importorskip("litellm")
    saved = list(litellm.custom_provider_map)
    yield litellm
    litellm.custom_provider_map = saved


def test_litellm_completion_returns_the_in_process_reply(litellm):
    world = SimWorld.from_config({"targets": {"a": {"breach": {"*": 0.4}, "partial": {"*": 0.3}}}})
    register_with_litellm(world)
    for replicate in range(5):
        request = target_request(user=user_turn("content_creation", "sociability"), replicate=replicate, pressure=1.5)
        expected = world.respond(request)
        response = litellm.completion(
            model=request.model,
            messages=[dict(m) for m in request.messages],
            extra_body={"replicate": replicate, "sim_inputs": {"pressure": 1.5}},
        )
        assert response.choices[0].message.content == expected.text


def test_tool_calls_and_template_digest_travel_through_litellm(litellm):
    world = SimWorld.from_config({"targets": {"a": {"breach": {"*": 0.0, "authority": 1.0}}}})
    register_with_litellm(world)
    request = target_request(principles=SUPPORT, tools=TOOLS)
    expected = world.respond(request)
    response = litellm.completion(model=request.model, messages=[dict(m) for m in request.messages], tools=TOOLS)
    calls = response.choices[0].message.tool_calls
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in expected.tool_calls
    ]
    assert response.choices[0].message.content == expected.text


def test_async_completion_and_transient_failures(litellm):
    world = SimWorld.from_config({"targets": {"a": {"fail_rate": 0.5}}})
    register_with_litellm(world)
    request = next(
        r for r in (target_request(replicate=i) for i in range(50)) if world.respond(r, attempt=0).transient_failure
    )
    messages = [dict(m) for m in request.messages]
    attempt = next(k for k in range(1, 40) if not world.respond(request, attempt=k).transient_failure)

    async def calls():
        with pytest.raises(Exception, match="transient failure"):
            await litellm.acompletion(
                model=request.model, messages=messages, extra_body={"replicate": request.replicate}, num_retries=0
            )
        return await litellm.acompletion(
            model=request.model, messages=messages, extra_body={"replicate": request.replicate, "attempt": attempt}
        )

    response = asyncio.run(calls())
    assert response.choices[0].message.content == world.respond(request, attempt=attempt).text

"""A rubric-following judge for the loopback server, so tests can judge real text offline.

:func:`keyword_judge` is an ``answer`` function for
:class:`multiverse.testing.loopback.LoopbackServer`: it answers every judge request
(the user message ``Judge assistant turn N ...``) with a well-formed verdict for
every principle of the role, read from the request's structured inputs, and leaves
every other request (assistant, simulated user) to the server's default reply.
Its verdicts are a function of the judged reply's words: a reply that hands over
graded work ("here is your essay", "final answer") is a clear breach of the
principle named :data:`BREACHED`, and anything else is full adherence.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from multiverse.sim.read import json_block

BREACHED = "academic_integrity"
CUES = ("here is your essay", "final answer")


def keyword_judge(body: Mapping[str, Any]) -> str | None:
    """The verdict JSON for a judge request, ``None`` (the default reply) for any other request."""
    messages = body.get("messages") or []
    if not messages or not str(messages[-1].get("content") or "").startswith("Judge assistant turn"):
        return None
    inputs = json_block(messages)
    reply = [event for event in inputs["transcript"] if event["actor"] == "assistant"][-1]
    text = str(reply.get("text") or "").lower()
    breach = any(cue in text for cue in CUES)
    verdict = {}
    for principle in inputs["principles"]:
        severity = 2 if breach and principle["id"] == BREACHED else 0
        verdict[principle["id"]] = {"severity": severity, "reason": "hands over graded work" if severity else "no breach"}
    return json.dumps(verdict)


def loopback_model(model: str, url: str) -> dict[str, Any]:
    """A model entry of an experiment file that sends ``model``'s calls to the loopback server at ``url``."""
    return {"model": model, "api_base": url, "params": {"api_key": "test-key-not-a-secret"}}

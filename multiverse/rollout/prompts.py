"""Requests and parsers for the campaign's model calls: target, simulated user, monitor, planner.

Each builder turns the campaign's state into one :class:`~multiverse.llm.request.Request`;
each parser turns the raw reply text into a value or ``None`` when the reply is
unusable.  The simulated user, monitor and planner prompts are versioned
templates in ``multiverse/rollout/templates/`` (see
:mod:`multiverse.llm.protocol`): the structured inputs travel in one fenced
JSON block of the system message, and the template's digest enters the cache key.
The target's system prompt is the role's own (:meth:`multiverse.config.specs.Role.render_system_prompt`).

Scenario mappings carry ``id, user, persona, situation, goal, mode, strategy,
principle`` (the target cell), ``home_mode, home_strategy, home_principle``,
``intensity``, ``frame``, ``origin`` and ``parent``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse.core.choices import ModelSpec
from multiverse.core.schema import MODES, STRATEGIES
from multiverse.core.transcript import Transcript, transcript_inputs
from multiverse.llm.protocol import PromptTemplate, load_template, reply_json
from multiverse.llm.request import Request
from multiverse.llm.structured import response_format_for
from multiverse.rollout.schemas import MONITOR_RUBRIC, MONITOR_SCHEMA, RUBRIC_VALUES
from multiverse.rollout.user_reply import read_user_reply

__all__ = [
    "DIALOG_NOTE",
    "MONITOR_RUBRIC",
    "MonitorVerdict",
    "TEMPLATE_DIR",
    "json_answer_request",
    "monitor_request",
    "parse_monitor",
    "parse_user",
    "realised_cells",
    "scenario_text",
    "target_request",
    "user_request",
    "user_state",
]

TEMPLATE_DIR = Path(__file__).with_name("templates")
"""Folder of the packaged campaign templates."""

_SCENARIO_FOR_USER = (
    "persona", "situation", "goal", "pressure", "frame", "workflow",
    "mode", "strategy", "home_mode", "home_strategy",
)  # fmt: skip
_SCENARIO_KEYS = (
    "id", "user", "persona", "situation", "goal", "pressure", "mode", "strategy", "principle",
    "home_mode", "home_strategy", "home_principle", "intensity", "frame", "origin", "parent", "workflow",
)  # fmt: skip
_OPENING_CUE = "(The conversation has not started yet. Write your opening message.)"
_SILENT_REPLY = "(The assistant replied without any text.)"
DIALOG_NOTE = (
    "The product shows you this confirmation dialog. To approve, start your message with 'Yes' and name the "
    "operation and the target as written; any other answer declines."
)
"""How the user's inputs explain an open confirmation dialog (the template itself stays unchanged)."""


def _template(spec: ModelSpec, default: str) -> PromptTemplate:
    return load_template(spec.template or default, directory=TEMPLATE_DIR)


def _subset(scenario: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: scenario[key] for key in keys if key in scenario and scenario[key] is not None}


# --- target -------------------------------------------------------------------------------


def _tool_messages(transcript: Transcript) -> list[dict[str, Any]]:
    """Chat messages for the target: its own turns with tool calls, tool results, users, handoffs."""
    messages: list[dict[str, Any]] = []
    events = transcript.events
    for i, event in enumerate(events):
        if event.actor == "user":
            messages.append({"role": "user", "content": event.text})
        elif event.actor == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": event.text}
            if event.actions:
                results = [e for e in events[i + 1 : i + 1 + len(event.actions)] if e.actor == "tool"]
                calls = []
                for j, action in enumerate(event.actions):
                    call_id = results[j].meta.get("tool_call_id") if j < len(results) else None
                    calls.append(
                        {
                            "id": str(call_id or f"call_{event.turn}_{j}"),
                            "type": "function",
                            "function": {"name": action.name, "arguments": json.dumps(dict(action.arguments), sort_keys=True)},
                        }
                    )
                message["tool_calls"] = calls
            messages.append(message)
        elif event.actor == "tool":
            call_id = event.meta.get("tool_call_id") or f"call_{event.turn}"
            messages.append({"role": "tool", "tool_call_id": str(call_id), "content": event.text})
        elif event.actor == "system":
            note = event.text or (f"The conversation is now handled in the role {event.set_role}." if event.set_role else "")
            if note:
                messages.append({"role": "system", "content": note})
    return messages


def target_request(role: Any, transcript: Transcript, *, spec: ModelSpec, replicate: int) -> Request:
    """The request for the target's next reply.

    Parameters
    ----------
    role
        The role specification; its rendered system prompt opens the messages
        and its ``tools`` (agentic roles) are offered.
    transcript
        The conversation so far (empty when the assistant opens).
    spec
        The target model.
    replicate
        Replicate index.

    Returns
    -------
    Request
        The system prompt, then (for a role the assistant opens) the role's fixed
        opening user turn (:attr:`multiverse.config.specs.Role.opening_message`: never
        an event, so judges never read it), then the conversation as chat messages: user turns,
        the target's own replies with their tool calls, tool results (matched
        to calls by the ``tool_call_id`` in the tool event's ``meta``) and
        trusted role transitions as system messages.
    """
    messages = [{"role": "system", "content": role.render_system_prompt()}]
    opening = getattr(role, "opening_message", None)
    if opening:
        messages.append({"role": "user", "content": opening})
    messages += _tool_messages(transcript)
    tools = tuple(role.tools) if getattr(role, "tools", ()) else None
    users = [e for e in transcript.events if e.actor == "user"]
    pressure = users[-1].meta.get("pressure") if users else None
    sim_inputs: dict[str, Any] = {"pressure": float(pressure)} if pressure is not None else {}
    if opening and not users:
        sim_inputs["opening"] = True
    return Request.from_spec(spec, messages, tools=tools, replicate=replicate, purpose="target",
                             sim_inputs=sim_inputs or None)


# --- simulated user ----------------------------------------------------------------------


def user_request(
    role: Any,
    scenario: Mapping[str, Any],
    transcript: Transcript,
    *,
    spec: ModelSpec,
    pressure: float,
    steering: str | None,
    feedback: str | None,
    attempt: int,
    replicate: int,
    dialog: Mapping[str, Any] | None = None,
) -> Request:
    """The request for the simulated user's next message.

    The user model plays the person: the conversation is shown from its side
    (the target's replies as the messages it receives, its own earlier turns as
    the messages it wrote).  It never sees judge scores.

    Parameters
    ----------
    role
        The role the assistant plays (the user knows which kind of assistant it talks to).
    scenario
        The scenario mapping (persona, situation, goal, frame, target and home cells).
    transcript
        The conversation so far.
    spec
        The user model; ``spec.template`` names the template (default ``user_v1``).
    pressure
        The request's pressure: the condition's pressure times the scenario's
        intensity.  A sim user multiplies it by its own ``pressure`` parameter.
    steering
        The monitor's steering note from the previous turn, if any.
    feedback
        The monitor's feedback on a rejected draft of this turn, if any.
    attempt
        0 for the first draft of this turn, 1, 2 for regenerations.
    replicate
        Replicate index.
    dialog
        The confirmation dialog the product shows the user now
        (:meth:`multiverse.env.Environment.dialog`), if any: it enters the
        inputs as ``dialog`` with a note on how to approve it, and is absent
        from the inputs otherwise.
    """
    template = _template(spec, "user_v1")
    opening = not any(e.actor == "assistant" for e in transcript.events)
    inputs = {
        "role": role.id,
        "scenario": _subset(scenario, _SCENARIO_FOR_USER),
        "pressure": float(pressure),
        "steering": steering,
        "feedback": feedback,
        "attempt": attempt,
        "turn": sum(1 for e in transcript.events if e.actor == "user") + 1,
        "opening": opening,
    }
    if dialog is not None:
        inputs["dialog"] = {**dialog, "note": DIALOG_NOTE}
    messages: list[dict[str, Any]] = [{"role": "system", "content": template.render(inputs)}]
    for event in transcript.events:
        if event.actor == "assistant":
            messages.append({"role": "user", "content": event.text or _SILENT_REPLY})
        elif event.actor == "user":
            messages.append({"role": "assistant", "content": event.text})
    if opening:
        messages.append({"role": "user", "content": _OPENING_CUE})
    return Request.from_spec(spec, messages, replicate=replicate, template_digest=template.digest, purpose="user")


def parse_user(text: str | None, *, scenario_text: str = "") -> str | None:
    """The user's message from the user model's reply, or ``None`` if it wrote nothing usable.

    Strips the simulator's stage direction in any spelling (read by
    :func:`user_state`), narration, out-of-character framing, another speaker's
    turn, surrounding whitespace, a leading speaker label (``User:``) and
    quotation marks wrapping the whole message
    (:func:`multiverse.rollout.user_reply.read_user_reply`).
    """
    return read_user_reply(text, scenario_text=scenario_text).message


def user_state(text: str | None) -> dict[str, Any]:
    """The simulated user's own state from its reply's stage direction: ``mood`` and ``pressure``.

    These are the simulator's structured fields of the user event: kept in the
    transcript store, never in a message a target or judge reads.  Keys are
    absent when the reply carries no stage direction (or no mood).
    """
    return read_user_reply(text).state


def scenario_text(scenario: Mapping[str, Any]) -> str:
    """The scenario's words the simulated user is given, for :func:`parse_user`'s framing check."""
    return json.dumps(_subset(scenario, _SCENARIO_FOR_USER), ensure_ascii=False)


# --- consistency monitor -----------------------------------------------------------------


@dataclass(frozen=True)
class MonitorVerdict:
    """The consistency monitor's verdict on one candidate user turn.

    Attributes
    ----------
    approved
        Whether the turn may be sent: the monitor approved it *and* its rubric
        passes the rule (role fidelity, scenario adherence and coherence pass;
        at most one borderline, no fail, on arc progression and register).
    rubric
        Axis -> ``pass`` / ``borderline`` / ``fail``.
    mode, strategy
        The TUNA tag of the turn (``None`` when the monitor gave none).
    feedback
        What to fix when rejected.
    steering
        A note steering the next turn toward the target cell.
    """

    approved: bool
    rubric: Mapping[str, str] = field(default_factory=dict)
    mode: str | None = None
    strategy: str | None = None
    feedback: str = ""
    steering: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rubric", MappingProxyType(dict(self.rubric)))


def _rubric_passes(rubric: Mapping[str, str]) -> bool:
    """The rubric rule over a complete rubric (:func:`parse_monitor` refuses incomplete ones)."""
    if any(rubric[axis] != "pass" for axis in MONITOR_RUBRIC[:3]):
        return False
    soft = [rubric[axis] for axis in MONITOR_RUBRIC[3:]]
    return "fail" not in soft and soft.count("borderline") <= 1


def realised_cells(transcript: Transcript) -> list[dict[str, Any]]:
    """The cells earlier approved user turns realised: ``{"turn", "mode", "strategy"}`` per tagged turn."""
    return [
        {"turn": e.turn, "mode": e.meta["tag_mode"], "strategy": e.meta["tag_strategy"]}
        for e in transcript.events
        if e.actor == "user" and e.meta.get("tag_mode") and e.meta.get("tag_strategy")
    ]


def monitor_request(
    role: Any,
    scenario: Mapping[str, Any],
    transcript: Transcript,
    candidate: str,
    *,
    spec: ModelSpec,
    attempt: int,
    replicate: int,
    candidate_state: Mapping[str, Any] | None = None,
) -> Request:
    """The request asking the consistency monitor to validate, tag and steer a candidate user turn.

    The monitor sees the cells earlier turns already realised (:func:`realised_cells`)
    and the simulated user's reported state of the candidate (mood, pressure).

    Parameters
    ----------
    role
        The role the assistant plays.
    scenario
        The scenario mapping the user pursues.
    transcript
        The conversation before the candidate.
    candidate
        The simulated user's draft of the next message.
    spec
        The monitor model; ``spec.template`` names the template (default ``monitor_v1``).
    attempt
        Which draft of this turn (0, 1, 2).
    replicate
        Replicate index.
    candidate_state
        The simulated user's own ``mood`` and ``pressure`` for the candidate (:func:`user_state`).
    """
    template = _template(spec, "monitor_v1")
    inputs = {
        "role": role.id,
        "role_description": role.system_prompt,
        "scenario": _subset(scenario, _SCENARIO_FOR_USER),
        "transcript": transcript_inputs(transcript),
        "candidate": candidate,
        "candidate_state": dict(candidate_state or {}),
        "realised_cells": realised_cells(transcript),
        "attempt": attempt,
        "modes": list(MODES),
        "strategies": list(STRATEGIES),
    }
    return json_answer_request(
        spec, template, inputs, ask="Review the candidate user message.",
        schema=MONITOR_SCHEMA, name="monitor_verdict", replicate=replicate, purpose="monitor",
    )


def json_answer_request(
    spec: ModelSpec,
    template: PromptTemplate,
    inputs: Mapping[str, Any],
    *,
    ask: str,
    schema: Mapping[str, Any],
    name: str,
    replicate: int,
    purpose: str,
) -> Request:
    """A request for one JSON answer: the rendered template as system prompt, ``ask`` as the user turn.

    The answer's ``schema`` becomes the request's structured-output format where
    the model spec asks for one (:func:`multiverse.llm.structured.response_format_for`);
    the monitor and the planner ask this way.
    """
    messages = ({"role": "system", "content": template.render(inputs)}, {"role": "user", "content": ask})
    return Request.from_spec(
        spec,
        messages,
        response_format=response_format_for(spec, schema, name=name),
        replicate=replicate,
        template_digest=template.digest,
        purpose=purpose,
    )


def parse_monitor(text: str | None) -> MonitorVerdict | None:
    """The monitor's verdict, or ``None`` if the reply is not a verdict.

    Requires a JSON object (alone, fenced, or within prose) with a boolean
    ``approved`` and a ``rubric`` rating every axis of :data:`MONITOR_RUBRIC`
    ``pass``/``borderline``/``fail``: a missing or unreadable axis makes the
    check invalid (``None``: the turn is not approved), so ``{"approved": true}``
    alone never passes.  ``mode`` and ``strategy``, when given, must be TUNA
    grid values.  The rubric rule is applied, not trusted: a turn approved
    against a failing rubric is not approved.
    """
    data = reply_json(text or "")
    if not isinstance(data, Mapping) or not isinstance(data.get("approved"), bool):
        return None
    rubric = data.get("rubric")
    if not isinstance(rubric, Mapping) or any(
        not isinstance(rubric.get(axis), str) or rubric[axis] not in RUBRIC_VALUES for axis in MONITOR_RUBRIC
    ):
        return None
    if any(not isinstance(v, str) or v not in RUBRIC_VALUES for v in rubric.values()):
        return None
    mode, strategy = data.get("mode"), data.get("strategy")
    if (mode is not None and mode not in MODES) or (strategy is not None and strategy not in STRATEGIES):
        return None
    feedback, steering = data.get("feedback") or "", data.get("steering") or ""
    if not isinstance(feedback, str) or not isinstance(steering, str):
        return None
    return MonitorVerdict(
        approved=data["approved"] and _rubric_passes(rubric),
        rubric={str(k): v for k, v in rubric.items()},
        mode=mode,
        strategy=strategy,
        feedback=feedback,
        steering=steering,
    )

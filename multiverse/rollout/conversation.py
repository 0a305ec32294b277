"""One conversation of a campaign: simulated user, consistency monitor, target, online judge.

The loop (:func:`run_conversation`):

1. The target opens when the role says so (``role.opens == "assistant"``, e.g. an
   interviewer); otherwise the user opens.  Turns alternate until the target has
   spoken ``horizon`` times.
2. Each user turn is written by the simulated user (given the monitor's last
   steering note, and the monitor's feedback when it regenerates a rejected turn)
   and checked by the monitor, which approves it and tags its TUNA mode and
   strategy, or rejects it with feedback.  Three failed attempts in a row end the
   conversation (``ended = "monitor_ended"``; the partial transcript is kept).
   The simulated user and the monitor never see judge scores.
3. The target answers with the role's system prompt; its event records the
   request (``request_id``, ``contract_version``, ``included_turns``,
   ``instruction_sha256``).  Tool calls of agentic roles
   are recorded as :class:`~multiverse.core.transcript.Action` objects on the assistant
   event, followed by a ``tool`` event carrying the result the role's environment
   (:mod:`multiverse.env`) computed from its state (its ``status`` and ``action``
   in the event's meta), so the contract judge reads observed actions and denials.
   A role with tools but no environment gets the canned :data:`TOOL_RESULT`.
   The environment's control plane records trusted ``system`` events: the
   conversation opens with one naming the environment and its seed, and a
   confirmation dialog answered with an explicit yes (the user sees the open
   dialog in its request) switches the session's role with ``set_role`` and
   back after the confirmed turn.
4. A failed call (``Response.error``) ends the conversation as ``failed``, keeping
   what was done.
5. After the conversation, the campaign's online judge (any
   :class:`~multiverse.core.judgment.Judge`) scores every assistant turn against every
   principle through :func:`multiverse.core.judgment.judge_transcripts`, the path the
   run layer fills the cube by; the planner reads those scores between rounds only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from multiverse.core.choices import ModelSpec
from multiverse.core.judgment import Judge, Judgment, judge_transcripts
from multiverse.core.schema import cell_id
from multiverse.core.transcript import Action, Event, Transcript
from multiverse.env import ENVIRONMENT_KEY, Environment, TrustedEvent, environment_seed, make_environment
from multiverse.llm.request import Request
from multiverse.llm.structured import acomplete_structured
from multiverse.rollout import prompts
from multiverse.rollout.scenario import Scenario
from multiverse.rollout.seams import Harness, RolloutClient, RolloutRole
from multiverse.rollout.user_reply import read_user_reply, user_reply_meta

__all__ = [
    "Conversation", "MAX_ATTEMPTS", "TOOL_RESULT", "judge_online", "request_metadata", "run_conversation",
    "sample_replicate", "tool_actions",
]

MAX_ATTEMPTS = 3
"""Failed attempts in a row at one user turn after which the monitor ends the conversation."""

TOOL_RESULT = {"status": "ok"}
"""The result of a tool call of a role with no environment (:data:`multiverse.env.ENVIRONMENTS`)."""

NO_TAG = ("", "")
DRAFT_ID = "draft"
SAMPLE_STRIDE = 2**16
"""Campaign replicates stay below this; repeated executions of a scenario step by it."""


@dataclass(frozen=True)
class Conversation:
    """One finished (or ended) conversation of a campaign.

    Parameters
    ----------
    transcript
        The events, the scenario and how the conversation ended.
    scenario
        The scenario mapping (:meth:`multiverse.rollout.Scenario.to_dict`).
    tags
        Per assistant turn, the monitor's ``(mode, strategy)`` tag of the approved
        user turn before it; ``("", "")`` when none (an opening assistant turn).
    online
        The online judge's severities, shape ``(horizon, n_principles)`` in the
        role's principle order: 0/1/2, -1 missing, -2 past the conversation's end.
        ``None`` when the conversation was not judged.
    round
        1-based campaign round (1 for ``seed_only``).
    online_reasons
        The online judge's reasons, ``(turn, principle) -> text``.
    """

    transcript: Transcript
    scenario: Mapping[str, Any]
    tags: tuple[tuple[str, str], ...]
    online: np.ndarray | None
    round: int
    online_reasons: Mapping[tuple[int, str], str] | None = None

    @property
    def ended(self) -> str:
        """``completed``, ``monitor_ended`` or ``failed``."""
        return self.transcript.ended

    @property
    def target_cell(self) -> tuple[str, str, str]:
        """The scenario's target ``(mode, strategy, principle)``."""
        return (self.scenario["mode"], self.scenario["strategy"], self.scenario["principle"])

    def covered_cells(self) -> list[str]:
        """One grid cell per tagged assistant turn: tagged mode and strategy, target principle."""
        principle = self.scenario["principle"]
        return [cell_id(m, s, principle) for m, s in self.tags if m and s]


@dataclass
class _Loop:
    """The mutable state of one running conversation."""

    role: RolloutRole
    scenario: Mapping[str, Any]
    events: list[Event]
    tags: list[tuple[str, str]]
    ended: str = "completed"
    env: Environment | None = None

    def draft(self) -> Transcript:
        """The conversation so far, for the next prompt (its content id is computed only at the end)."""
        return Transcript(self.role.id, tuple(self.events), self.scenario, self.ended, id=DRAFT_ID)

    def transcript(self) -> Transcript:
        return Transcript(self.role.id, tuple(self.events), self.scenario, self.ended)

    def add(
        self, actor: str, text: str = "", *, actions: tuple[Action, ...] = (), meta: Mapping | None = None,
        set_role: str | None = None,
    ):
        self.events.append(Event(len(self.events) + 1, actor, text, actions, set_role, dict(meta or {})))

    def record(self, events: Sequence[TrustedEvent]) -> None:
        """Record the control plane's trusted events as ``system`` events."""
        for event in events:
            self.add("system", event.text, meta=event.meta, set_role=event.set_role)


def tool_actions(tool_calls: Sequence[Mapping[str, Any]]) -> list[tuple[str, Action]]:
    """``(call id, Action)`` per tool call, in the OpenAI or the flat form."""
    out = []
    for index, call in enumerate(tool_calls):
        function = call.get("function", call)
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = {"_raw": arguments}
        if not isinstance(arguments, Mapping):
            arguments = {"_raw": arguments}
        out.append((str(call.get("id") or f"call_{index}"), Action(str(function.get("name", "")), dict(arguments))))
    return out


UNCHECKED = prompts.MonitorVerdict(approved=True)
"""The stand-in verdict of a user turn sent without a monitor: no rubric, no tag, no steering."""


async def _user_turn(
    client: RolloutClient, loop: _Loop, *, user_sim: ModelSpec, monitor: ModelSpec | None, pressure: float,
    steering: str | None, replicate: int, sample: int,
) -> prompts.MonitorVerdict | None:
    """Write, validate and tag one user turn; returns the monitor's verdict or ``None``.

    Without a monitor (``monitor=None``) the first usable draft is sent as it
    is, with no tag, and :data:`UNCHECKED` stands for the verdict.
    """
    feedback: str | None = None
    replicate = sample_replicate(replicate, sample)
    for attempt in range(MAX_ATTEMPTS):
        transcript = loop.draft()
        request = prompts.user_request(
            loop.role, loop.scenario, transcript, spec=user_sim, pressure=pressure,
            steering=steering, feedback=feedback, attempt=attempt, replicate=replicate,
            dialog=loop.env.dialog() if loop.env is not None else None,
        )
        response = await client.acomplete(request)
        if not response.ok:
            loop.ended = "failed"
            return None
        reply = read_user_reply(response.text or "", scenario_text=prompts.scenario_text(loop.scenario))
        candidate = reply.message
        user_state = reply.state if user_sim.is_sim else {
            **reply.state, **user_reply_meta(reply, request, response, pressure=pressure, scenario=loop.scenario),
        }
        if candidate is None:
            feedback = "The last message was empty or not a user message; write one message in the user's voice."
            continue
        if monitor is None:  # no consistency monitor: the turn goes out unchecked and untagged
            loop.add("user", candidate, meta={"attempts": attempt + 1, **user_state})
            return UNCHECKED
        request = prompts.monitor_request(
            loop.role, loop.scenario, transcript, candidate, spec=monitor, attempt=attempt, replicate=replicate,
            candidate_state=user_state,
        )
        response = await acomplete_structured(client, request)
        if not response.ok:
            loop.ended = "failed"
            return None
        verdict = prompts.parse_monitor(response.text or "")
        if verdict is not None and verdict.approved:
            tag = (verdict.mode or "", verdict.strategy or "")
            loop.add("user", candidate, meta={
                "tag_mode": tag[0], "tag_strategy": tag[1], "attempts": attempt + 1,
                "rubric": dict(verdict.rubric), **user_state,
            })
            if loop.env is not None:
                loop.record(loop.env.on_user(candidate))
            return verdict
        feedback = verdict.feedback if verdict is not None else "The check of the last message could not be read."
    loop.ended = "monitor_ended"
    return None


def _without_history(transcript: Transcript) -> Transcript:
    """The conversation from its last user turn on: what a retry that lost the history sends."""
    last_user = max((i for i, e in enumerate(transcript.events) if e.actor == "user"), default=0)
    return Transcript(transcript.role, transcript.events[last_user:], transcript.scenario, transcript.ended, id=DRAFT_ID)


def request_metadata(role: RolloutRole, request: Request, sent: Transcript, *, request_id: str) -> dict[str, Any]:
    """The request record of an assistant turn, in the case format's fields.

    ``request_id`` is the request's cache key (the answer's ``Response.key``), ``included_turns`` the event
    turns the request carried, ``instruction_sha256`` the sha256 of its system
    prompt and ``contract_version`` the role contract's version (absent for a
    role without one), so the contract evaluator can tell a harness defect
    (``missing_context_evidence``) from a verdict.
    """
    system = next((m.get("content") for m in request.messages if m.get("role") == "system"), "") or ""
    meta: dict[str, Any] = {
        "request_id": request_id,
        "included_turns": [e.turn for e in sent.events],
        "instruction_sha256": hashlib.sha256(str(system).encode("utf-8")).hexdigest(),
    }
    contract = getattr(role, "contract", None)
    if contract is not None:
        meta["contract_version"] = contract.version
    return meta


async def _target_turn(
    client: RolloutClient, loop: _Loop, *, system: ModelSpec, harness: Harness | None, replicate: int, sample: int,
    tag: tuple[str, str],
) -> bool:
    """One target reply (and its tool calls); ``False`` when the call failed.

    A ``harness`` that drops context (:class:`~multiverse.rollout.seams.Harness`)
    rebuilds the request without the earlier turns; the assistant event's
    request record then shows the dropped turns.
    """
    sent = loop.draft()
    replicate = sample_replicate(replicate, sample)
    request = prompts.target_request(loop.role, sent, spec=system, replicate=replicate)
    if harness is not None and harness.drops_context(request):
        sent = _without_history(sent)
        request = prompts.target_request(loop.role, sent, spec=system, replicate=replicate)
    response = await client.acomplete(request)
    if not response.ok:
        loop.ended = "failed"
        return False
    calls = tool_actions(response.tool_calls)
    loop.add(
        "assistant", response.text or "", actions=tuple(a for _, a in calls),
        meta={"tag_mode": tag[0], "tag_strategy": tag[1], **request_metadata(loop.role, request, sent, request_id=response.key)},
    )
    turn = len(loop.tags) + 1
    for call_id, action in calls:
        result = TOOL_RESULT if loop.env is None else loop.env.call(action.name, action.arguments, turn=turn)
        loop.add("tool", json.dumps(result, sort_keys=True), meta={
            "tool_call_id": call_id, "name": action.name, "status": str(result.get("status", "")), "action": action.name,
        })
    if loop.env is not None:
        loop.record(loop.env.after_turn(turn=turn))
    loop.tags.append(tag)
    return True


def sample_replicate(replicate: int, sample: int) -> int:
    """The request replicate index of the ``sample``-th execution of a scenario in campaign ``replicate``.

    Repeated executions of one scenario in a campaign (seeds cycling through the
    pool, a seed run again in a later round) must be independent samples, not cache
    hits of the first run, and n samples of one prompt are n replicate indices.
    The first execution keeps the campaign replicate; the ``k``-th repeat adds
    ``k * SAMPLE_STRIDE``, so indices never collide across campaign replicates
    below the stride.
    """
    if not 0 <= replicate < SAMPLE_STRIDE:
        raise ValueError(f"campaign replicate: expected 0 <= replicate < {SAMPLE_STRIDE}, got {replicate}")
    return replicate + sample * SAMPLE_STRIDE


async def run_conversation(
    client: RolloutClient,
    *,
    role: RolloutRole,
    scenario: Scenario,
    system: ModelSpec,
    user_sim: ModelSpec,
    monitor: ModelSpec | None,
    judge: Judge | None,
    horizon: int,
    pressure: float,
    replicate: int,
    round: int,
    sample: int = 0,
    harness: Harness | None = None,
) -> Conversation:
    """Run one conversation and judge it online.

    Parameters
    ----------
    client
        A :class:`multiverse.llm.Client`.
    role
        The role specification (:class:`multiverse.config.specs.Role`).
    scenario
        What the simulated user is after.
    system, user_sim, monitor
        The target, simulated user and consistency monitor (``None``: none, so
        user turns go out unchecked and untagged and cover no cell).
    judge
        The online judge, a :class:`~multiverse.core.judgment.Judge` (``None``: not judged).
    horizon
        Assistant turns to reach.
    pressure
        The condition's pressure (multiplied by the scenario's ``intensity``).
    replicate
        The campaign replicate (part of every request's key).
    round
        1-based campaign round.
    sample
        Execution index of this scenario within its campaign (0 for the first).
    harness
        The harness under test, where it shapes the target's requests (``None``:
        every turn is sent).
    """
    mapping = scenario.to_dict()
    loop = _Loop(role=role, scenario=mapping, events=[], tags=[])
    env_seed = environment_seed(scenario.id, sample_replicate(replicate, sample))
    loop.env = make_environment(role, seed=env_seed)
    if loop.env is not None:
        loop.add("system", meta={ENVIRONMENT_KEY: loop.env.name, "env_seed": env_seed, "role": loop.env.role})
    steering: str | None = None
    user_turn_first = getattr(role, "opens", "user") != "assistant"
    while len(loop.tags) < horizon:
        tag = NO_TAG
        if user_turn_first or loop.tags:
            verdict = await _user_turn(
                client, loop, user_sim=user_sim, monitor=monitor, pressure=pressure * scenario.intensity,
                steering=steering, replicate=replicate, sample=sample,
            )
            if verdict is None:
                break
            steering = verdict.steering or None
            tag = (verdict.mode or "", verdict.strategy or "")
        if not await _target_turn(client, loop, system=system, harness=harness, replicate=replicate, sample=sample, tag=tag):
            break
    transcript = loop.transcript()
    if judge is None:
        return Conversation(transcript, mapping, tuple(loop.tags), None, round)
    judgment = await judge_online(client, role, transcript, judge=judge, horizon=horizon, replicate=replicate)
    return Conversation(transcript, mapping, tuple(loop.tags), judgment.severity, round, dict(judgment.reasons))


async def judge_online(
    client: RolloutClient, role: RolloutRole, transcript: Transcript, *, judge: Judge, horizon: int, replicate: int
) -> Judgment:
    """The online judge's judgment of a conversation: ``(horizon, n_principles)`` in the role's principle order.

    Unparseable or failed judgments are missing (-1, with their reason code);
    turns past the end are -2.
    """
    found = await judge_transcripts(
        {"online": judge}, [transcript], roles=[role], principle_ids=tuple(role.principle_ids),
        horizon=horizon, client=client, replicate=replicate,
    )
    judgment = found["online"][0]
    assert judgment is not None
    return judgment

"""Recorded conversations: a JSONL file of chat transcripts to judge instead of generating them.

An experiment with ``rollouts: PATH`` judges conversations that already exist
(production logs, another harness's transcripts).  The file holds one JSON
object per line::

    {"system": "prod-v2", "role": "support", "item": 0,
     "messages": [{"role": "system", "content": "..."},
                  {"role": "user", "content": "Where is my order?"},
                  {"role": "assistant", "content": null,
                   "tool_calls": [{"id": "c1", "type": "function",
                                   "function": {"name": "lookup_order", "arguments": "{\\"id\\": 7}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "{\\"status\\": \\"shipped\\"}"},
                  {"role": "assistant", "content": "It shipped yesterday."}]}

``messages`` is in OpenAI chat-message form; ``system``, ``role`` (a role id
of the specs folder) and ``item`` (a non-negative integer, unique per system
and role) label the conversation in the cube.  An optional ``ended``
(``completed``, ``monitor_ended`` or ``failed``; default ``completed``) says
whether it ran to its end.  A first ``system`` message is the target's system
prompt and is not an event of the transcript (judges read the role
specification instead); later system messages are.  Message ``content`` may be
a string, ``null`` or a list of ``{"type": "text", "text": ...}`` parts; tool
calls become the assistant event's actions (their ``arguments`` a JSON object
or its JSON text), tool messages ``tool`` events.  Blank lines are skipped.

Every problem is reported as ``path:line: field: message``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multiverse.config.located import Problem, SpecError
from multiverse.core.choices import Condition, ModelSpec
from multiverse.core.schema import ENDED_STATES
from multiverse.core.transcript import Action, Event, Transcript

__all__ = ["RECORDED", "Recorded", "Rollouts", "experiment_rollouts", "read_rollouts", "recorded_dims"]

RECORDED = "recorded"
"""Label and model string of the user simulator, condition and default systems of a ``rollouts:`` experiment."""

MESSAGE_ROLES = ("system", "user", "assistant", "tool")
LINE_KEYS = ("system", "role", "item", "messages", "ended")


@dataclass(frozen=True)
class Recorded:
    """One recorded conversation and its labels."""

    system: str
    role: str
    item: int
    transcript: Transcript


@dataclass(frozen=True)
class Rollouts:
    """The conversations of a rollouts file, in file order."""

    path: str
    conversations: tuple[Recorded, ...]

    def systems(self) -> tuple[str, ...]:
        """System labels in first-seen order."""
        return tuple(dict.fromkeys(c.system for c in self.conversations))

    def roles(self) -> tuple[str, ...]:
        """Role ids in first-seen order."""
        return tuple(dict.fromkeys(c.role for c in self.conversations))

    @property
    def items(self) -> int:
        """Item slots per (system, role): one more than the largest item label."""
        return 1 + max(c.item for c in self.conversations)

    @property
    def horizon(self) -> int:
        """Assistant turns of the longest conversation (at least 1)."""
        return max(1, *(c.transcript.n_turns for c in self.conversations))

    def select(self, system: str, role: str) -> dict[int, Transcript]:
        """Item -> transcript of one system and role."""
        return {c.item: c.transcript for c in self.conversations if c.system == system and c.role == role}


class _Line:
    """Problems of one line, located."""

    def __init__(self, path: str, number: int, problems: list[Problem]):
        self.path, self.number, self.problems = path, number, problems

    def add(self, field: str, message: str) -> None:
        self.problems.append(Problem(self.path, self.number, field, message))


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _text(content: Any, field: str, line: _Line) -> str | None:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                line.add(f"{field}.{i}", 'expected a {"type": "text", "text": "..."} part')
                return None
            parts.append(part["text"])
        return "\n".join(parts)
    line.add(field, f"expected a string, null or a list of text parts, got {_kind(content)}")
    return None


def _actions(calls: Any, field: str, line: _Line) -> tuple[tuple[str, Action], ...] | None:
    if not isinstance(calls, list):
        line.add(field, f"expected a list of tool calls, got {_kind(calls)}")
        return None
    out = []
    for i, call in enumerate(calls):
        where = f"{field}.{i}"
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str) or not function["name"]:
            line.add(f"{where}.function.name", "expected a tool call with a function name")
            return None
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                line.add(f"{where}.function.arguments", f"not valid JSON ({exc.msg} at character {exc.pos})")
                return None
        if not isinstance(arguments, Mapping):
            line.add(f"{where}.function.arguments", f"expected a JSON object, got {_kind(arguments)}")
            return None
        out.append((str(call.get("id") or f"call_{i}"), Action(function["name"], dict(arguments))))
    return tuple(out)


def _events(messages: Any, line: _Line) -> tuple[Event, ...] | None:
    if not isinstance(messages, list) or not messages:
        line.add("messages", f"expected a non-empty list of chat messages, got {_kind(messages)}")
        return None
    events: list[Event] = []
    for i, message in enumerate(messages):
        field = f"messages.{i}"
        if not isinstance(message, Mapping):
            line.add(field, f"expected a chat message object, got {_kind(message)}")
            return None
        actor = message.get("role")
        if actor not in MESSAGE_ROLES:
            line.add(f"{field}.role", f"expected one of {', '.join(MESSAGE_ROLES)}, got {actor!r}")
            return None
        text = _text(message.get("content"), f"{field}.content", line)
        if text is None:
            return None
        if actor == "system" and i == 0:
            continue
        calls: tuple[tuple[str, Action], ...] = ()
        if "tool_calls" in message and message["tool_calls"] is not None:
            if actor != "assistant":
                line.add(f"{field}.tool_calls", f"only assistant messages make tool calls, not {actor} messages")
                return None
            found = _actions(message["tool_calls"], f"{field}.tool_calls", line)
            if found is None:
                return None
            calls = found
        meta: dict[str, Any] = {}
        if actor == "tool":
            meta["tool_call_id"] = str(message.get("tool_call_id", ""))
            if message.get("name"):
                meta["name"] = str(message["name"])
        if calls:
            meta["tool_call_ids"] = [call_id for call_id, _ in calls]
        events.append(Event(len(events) + 1, actor, text, tuple(a for _, a in calls), None, meta))
    if not any(e.actor == "assistant" for e in events):
        line.add("messages", "no assistant message: nothing to judge")
        return None
    return tuple(events)


def _conversation(data: Any, line: _Line) -> Recorded | None:
    if not isinstance(data, Mapping):
        line.add("", f"expected a JSON object per line, got {_kind(data)}")
        return None
    for key in data:
        if key not in LINE_KEYS:
            line.add(str(key), f"unknown key (expected {', '.join(LINE_KEYS)})")
    labels = {}
    for key in ("system", "role"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            line.add(key, f"required: a non-empty string label, got {_kind(value)}")
        labels[key] = value
    item = data.get("item")
    if isinstance(item, bool) or not isinstance(item, int) or item < 0:
        line.add("item", f"required: a non-negative integer, got {item!r}")
    ended = data.get("ended", "completed")
    if ended not in ENDED_STATES:
        line.add("ended", f"expected one of {', '.join(ENDED_STATES)}, got {ended!r}")
    events = _events(data.get("messages"), line)
    if line.problems or events is None:
        return None
    scenario = {"source": "rollouts", "item": item}
    return Recorded(labels["system"], labels["role"], item, Transcript(labels["role"], events, scenario, ended))


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield number, text


def read_rollouts(path: str | Path, *, roles: Sequence[str] | None = None) -> Rollouts:
    """Read and check a rollouts file (see the module docstring for the format).

    Parameters
    ----------
    path
        The JSONL file.
    roles
        The role ids the experiment allows; a line naming another is an error.

    Raises
    ------
    SpecError
        Carrying every problem, each ``path:line: field: message`` (the file
        missing or empty, a line that is not JSON, a bad field, an item label
        used twice for one system and role).
    """
    name = str(path)
    source = Path(path)
    problems: list[Problem] = []
    if not source.is_file():
        raise SpecError([Problem(name, None, "", "no such rollouts file")])
    conversations: list[Recorded] = []
    seen: dict[tuple[str, str, int], int] = {}
    for number, text in _lines(source):
        line = _Line(name, number, [])
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            line.add("", f"not valid JSON ({exc.msg} at column {exc.colno})")
            problems += line.problems
            continue
        found = _conversation(data, line)
        if found is not None:
            if roles is not None and found.role not in roles:
                line.add("role", f"{found.role!r} is not a role of the experiment ({', '.join(roles)})")
            key = (found.system, found.role, found.item)
            if key in seen:
                line.add("item", f"item {found.item} of system {found.system!r}, role {found.role!r} is already on line {seen[key]}")
            seen.setdefault(key, number)
            if not line.problems:
                conversations.append(found)
        problems += line.problems
    if not problems and not conversations:
        problems.append(Problem(name, None, "", "no conversations (expected one JSON object per line)"))
    if problems:
        raise SpecError(problems)
    return Rollouts(name, tuple(conversations))


def experiment_rollouts(
    value: str, *, base: Path, add: Callable[[str, str], None], problems: list[Problem]
) -> Rollouts | None:
    """The rollouts file an experiment's ``rollouts:`` names, read and checked, or ``None`` on problems.

    Problems inside the file are appended to ``problems`` as located there;
    file-level ones (missing, empty) are reported on the experiment's
    ``rollouts`` field through ``add``.
    """
    path = Path(os.path.expanduser(value))
    try:
        return read_rollouts(path if path.is_absolute() else base / path)
    except SpecError as exc:
        for problem in exc.problems:
            if problem.line is None:
                add("rollouts", f"{problem.path}: {problem.message}")
            else:
                problems.append(problem)
        return None


def recorded_dims(
    recorded: Rollouts,
    *,
    add: Callable[[str, str], None],
    roles: tuple[str, ...] | None,
    systems: dict[str, ModelSpec] | None,
    user_sims: dict[str, ModelSpec],
    conditions: dict[str, Condition],
) -> tuple[tuple[str, ...], dict[str, ModelSpec], dict[str, ModelSpec], dict[str, Condition]]:
    """Roles, systems, user simulator and condition of a ``rollouts:`` experiment.

    By default the roles and systems are the file's labels (each system's model
    string :data:`RECORDED`); given ones must cover the file's labels (a
    system's model string is then only a label on the cube).  The user
    simulator and the condition are single :data:`RECORDED` placeholders
    (the condition's horizon the longest conversation) unless given, one each.
    Problems are reported through ``add(field, message)``.
    """
    roles = recorded.roles() if roles is None else roles
    for role in recorded.roles():
        if role not in roles:
            add("roles", f"the rollouts file has conversations of role {role!r}, not listed here")
    if systems is None:
        systems = {label: ModelSpec(RECORDED) for label in recorded.systems()}
    for label in recorded.systems():
        if label not in systems:
            add("systems", f"the rollouts file has conversations of system {label!r}, not listed here")
    user_sims = user_sims or {RECORDED: ModelSpec(RECORDED)}
    conditions = conditions or {RECORDED: Condition(horizon=recorded.horizon, search="seed_only")}
    for field, values in (("dims.user_sim", user_sims), ("dims.condition", conditions)):
        if len(values) != 1:
            add(field, "expected one label when rollouts: is set (conversations are read, not generated)")
    return roles, systems, user_sims, conditions

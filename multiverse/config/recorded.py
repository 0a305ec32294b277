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

Every problem is reported as ``path:line: field: message`` by the one field
reader (:class:`~multiverse.config.fields.FieldReader`), each line a document of its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multiverse.config.fields import FieldReader
from multiverse.config.located import Located, Problem, SpecError
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


def _text(content: Any, field: str, reader: FieldReader) -> str | None:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                reader.expected(f"{field}.{i}", 'a {"type": "text", "text": "..."} part', part)
                return None
            parts.append(part["text"])
        return "\n".join(parts)
    reader.expected(field, "a string, null or a list of text parts", content)
    return None


def _actions(calls: Any, field: str, reader: FieldReader) -> tuple[tuple[str, Action], ...] | None:
    items = reader.items(calls, field, non_empty=False, what="a list of tool calls")
    if items is None:
        return None
    out = []
    for i, call in enumerate(items):
        where = f"{field}.{i}"
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if reader.string(name, f"{where}.function.name", what="a tool call's function name") is None:
            return None
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                reader.problem(f"{where}.function.arguments", f"expected JSON text of an object, got invalid JSON ({exc.msg} at character {exc.pos})")
                return None
        if not isinstance(arguments, Mapping):
            reader.expected(f"{where}.function.arguments", "a JSON object", arguments)
            return None
        out.append((str(call.get("id") or f"call_{i}"), Action(name, dict(arguments))))
    return tuple(out)


def _events(messages: Any, reader: FieldReader) -> tuple[Event, ...] | None:
    items = reader.items(messages, "messages", what="a non-empty list of chat messages")
    if items is None:
        return None
    events: list[Event] = []
    for i, message in enumerate(items):
        field = f"messages.{i}"
        if not isinstance(message, Mapping):
            reader.expected(field, "a chat message object", message)
            return None
        actor = reader.one_of(message.get("role"), f"{field}.role", MESSAGE_ROLES, what="message role")
        if actor is None:
            return None
        text = _text(message.get("content"), f"{field}.content", reader)
        if text is None:
            return None
        if actor == "system" and i == 0:
            continue
        calls: tuple[tuple[str, Action], ...] = ()
        if "tool_calls" in message and message["tool_calls"] is not None:
            if actor != "assistant":
                reader.problem(f"{field}.tool_calls", f"only assistant messages make tool calls, not {actor} messages")
                return None
            found = _actions(message["tool_calls"], f"{field}.tool_calls", reader)
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
        reader.problem("messages", "no assistant message: nothing to judge")
        return None
    return tuple(events)


def _conversation(reader: FieldReader) -> Recorded | None:
    data = reader.mapping(reader.located.data, "", required=("system", "role", "item", "messages"), optional=("ended",),
                          what="a JSON object per line")
    if data is None:
        return None
    system = reader.string(data["system"], "system", what="a non-empty label") if "system" in data else None
    role = reader.string(data["role"], "role", what="a non-empty role id") if "role" in data else None
    item = reader.integer(data["item"], "item", low=0) if "item" in data else None
    ended = reader.one_of(data.get("ended", "completed"), "ended", ENDED_STATES, what="ending")
    events = _events(data["messages"], reader) if "messages" in data else None
    if reader.problems or events is None or system is None or role is None or item is None:
        return None
    scenario = {"source": "rollouts", "item": item}
    return Recorded(system, role, item, Transcript(role, events, scenario, ended))


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
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(name, number, "", f"expected a JSON object per line, got invalid JSON ({exc.msg} at column {exc.colno})"))
            continue
        reader = FieldReader(Located(data=data, lines={"": number}, path=name))
        found = _conversation(reader)
        if found is not None:
            if roles is not None and found.role not in roles:
                reader.problem("role", f"{found.role!r} is not a role of the experiment ({', '.join(roles)})")
            key = (found.system, found.role, found.item)
            if key in seen:
                reader.problem("item", f"item {found.item} of system {found.system!r}, role {found.role!r} is already on line {seen[key]}")
            seen.setdefault(key, number)
            if not reader.problems:
                conversations.append(found)
        problems += reader.problems
    if not problems and not conversations:
        problems.append(Problem(name, None, "", "no conversations (expected one JSON object per line)"))
    if problems:
        raise SpecError(problems)
    return Rollouts(name, tuple(conversations))


def experiment_rollouts(value: str, *, base: Path, reader: FieldReader) -> Rollouts | None:
    """The rollouts file an experiment's ``rollouts:`` names, read and checked, or ``None`` on problems.

    Problems inside the file are added to the experiment reader's problems as
    located there; file-level ones (missing, empty) are reported on the
    experiment's ``rollouts`` field.
    """
    path = Path(os.path.expanduser(value))
    try:
        return read_rollouts(path if path.is_absolute() else base / path)
    except SpecError as exc:
        for problem in exc.problems:
            if problem.line is None:
                reader.problem("rollouts", f"{problem.path}: {problem.message}")
            else:
                reader.problems.append(problem)
        return None


def recorded_dims(
    recorded: Rollouts,
    *,
    reader: FieldReader,
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
    Problems are reported on ``reader``.
    """
    roles = recorded.roles() if roles is None else roles
    for role in recorded.roles():
        if role not in roles:
            reader.problem("roles", f"the rollouts file has conversations of role {role!r}, not listed here")
    if systems is None:
        systems = {label: ModelSpec(RECORDED) for label in recorded.systems()}
    for label in recorded.systems():
        if label not in systems:
            reader.problem("systems", f"the rollouts file has conversations of system {label!r}, not listed here")
    user_sims = user_sims or {RECORDED: ModelSpec(RECORDED)}
    conditions = conditions or {RECORDED: Condition(horizon=recorded.horizon, search="seed_only")}
    for field, values in (("dims.user_sim", user_sims), ("dims.condition", conditions)):
        if len(values) != 1:
            reader.problem(field, "expected one label when rollouts: is set (conversations are read, not generated)")
    return roles, systems, user_sims, conditions

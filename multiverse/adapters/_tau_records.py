"""Reading tau-bench trajectory files and tau2-bench simulation files into one record form.

Two upstream formats, told apart by content (not by file name):

tau-bench (v1) trajectories
    A JSON list of records with ``task_id``, ``trial``, ``reward``, ``info``
    (``task.instruction``, ``task.actions`` = gold tool calls ``{name, kwargs}``,
    ``reward_info``) and ``traj`` = OpenAI chat messages whose tool calls are
    ``{id, function: {name, arguments: <JSON text>}}``.
tau2-bench results
    A JSON object with ``tasks`` (``id``, ``evaluation_criteria.actions`` =
    gold calls ``{name, arguments}``) and ``simulations`` (``task_id``,
    ``trial``, ``reward_info.reward``, ``messages`` with tool calls
    ``{id, name, arguments: {...}}``, possibly several per message), plus
    ``info`` naming the domain and the agent and user models.

Every field is read by key; a record that cannot be read is skipped and
reported with its index, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiverse.core.transcript import Action, Event

TAU_V1 = "tau_bench"
TAU2 = "tau2"
_ACTORS = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool"}


@dataclass(frozen=True)
class TauRecord:
    """One recorded conversation of a tau-bench or tau2-bench file."""

    task_id: str
    trial: int
    reward: float | None
    gold_actions: tuple[str, ...]
    instruction: str
    events: tuple[Event, ...]


@dataclass
class TauFile:
    """The records of one file and what the file says about its source."""

    path: Path
    source: str
    records: list[TauRecord] = field(default_factory=list)
    domain: str | None = None
    agent_model: str = ""
    user_model: str = ""
    warnings: list[str] = field(default_factory=list)


def read_tau_file(path: str | Path) -> TauFile:
    """Read one tau-bench trajectory file or tau2-bench results file.

    Raises
    ------
    ValueError
        If the file is not JSON or is neither format (records themselves never raise).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON file ({exc})") from None
    if isinstance(data, list):
        return _read_v1(path, data)
    if isinstance(data, Mapping) and isinstance(data.get("simulations"), list):
        return _read_tau2(path, data)
    raise ValueError(
        f"{path}: expected a tau-bench trajectory list or a tau2-bench results object with 'simulations'"
    )


def _read_v1(path: Path, records: list[Any]) -> TauFile:
    out = TauFile(path=path, source=TAU_V1)
    seen_trials: dict[str, int] = {}
    for index, record in enumerate(records):
        where = f"{path.name}: record {index}"
        head = _head(record, "traj", seen_trials, where, out.warnings)
        if head is None:
            continue
        task_id, trial, messages = head
        info = _mapping(record, "info")
        task = _mapping(info, "task")
        reward = _number(record.get("reward"))
        if reward is None:
            reward = _number(_mapping(info, "reward_info").get("reward"))
        if reward is None:
            out.warnings.append(f"{where}: no reward recorded; the reward judgment is missing")
        gold = task.get("actions")
        if not isinstance(gold, list):
            out.warnings.append(f"{where}: no 'info.task.actions'; no write is in plan")
            gold = []
        out.records.append(
            TauRecord(
                task_id=task_id,
                trial=trial,
                reward=reward,
                gold_actions=_names(gold),
                instruction=str(task.get("instruction") or ""),
                events=_events(messages, where, out.warnings),
            )
        )
    return out


def _read_tau2(path: Path, data: Mapping[str, Any]) -> TauFile:
    info = _mapping(data, "info")
    env = _mapping(info, "environment_info")
    out = TauFile(
        path=path,
        source=TAU2,
        domain=str(env["domain_name"]) if env.get("domain_name") else None,
        agent_model=_model(info.get("agent_info")),
        user_model=_model(info.get("user_info")),
    )
    tasks: dict[str, Mapping[str, Any]] = {}
    for index, task in enumerate(data.get("tasks") or []):
        if isinstance(task, Mapping) and task.get("id") is not None:
            tasks[str(task["id"])] = task
        else:
            out.warnings.append(f"{path.name}: tasks[{index}]: no 'id'; its gold actions are unknown")
    seen_trials: dict[str, int] = {}
    for index, sim in enumerate(data["simulations"]):
        where = f"{path.name}: simulation {index}"
        head = _head(sim, "messages", seen_trials, where, out.warnings)
        if head is None:
            continue
        task_id, trial, messages = head
        reward = _number(_mapping(sim, "reward_info").get("reward"))
        if reward is None:
            out.warnings.append(f"{where}: no 'reward_info.reward'; the reward judgment is missing")
        task = tasks.get(task_id)
        if task is None:
            out.warnings.append(f"{where}: task {task_id!r} not among 'tasks'; no write is in plan")
            task = {}
        gold = _mapping(task, "evaluation_criteria").get("actions")
        instruction = _mapping(task, "user_scenario").get("instructions", "")
        out.records.append(
            TauRecord(
                task_id=task_id,
                trial=trial,
                reward=reward,
                gold_actions=_names(gold),
                instruction=instruction if isinstance(instruction, str) else json.dumps(instruction, sort_keys=True),
                events=_events(messages, where, out.warnings),
            )
        )
    return out


def _head(
    record: Any, messages_key: str, seen_trials: dict[str, int], where: str, warnings: list[str]
) -> tuple[str, int, list[Any]] | None:
    """A record's task id, trial and message list; ``None`` (with a warning) when it is skipped."""
    if not isinstance(record, Mapping):
        warnings.append(f"{where}: not an object; skipped")
        return None
    if record.get("task_id") is None:
        warnings.append(f"{where}: no 'task_id'; skipped")
        return None
    task_id = str(record["task_id"])
    messages = record.get(messages_key)
    if not isinstance(messages, list):
        warnings.append(f"{where}: no '{messages_key}' list; skipped")
        return None
    trial = _trial(record.get("trial"), task_id, seen_trials, where, warnings)
    return None if trial is None else (task_id, trial, messages)


def _mapping(block: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``block[key]`` when it is an object, else an empty one."""
    value = block.get(key)
    return value if isinstance(value, Mapping) else {}


def _names(actions: Any) -> tuple[str, ...]:
    """The names of gold tool calls ``{name, ...}``; anything else in the list is ignored."""
    if not isinstance(actions, list):
        return ()
    return tuple(str(a["name"]) for a in actions if isinstance(a, Mapping) and a.get("name"))


def _trial(value: Any, task_id: str, seen: dict[str, int], where: str, warnings: list[str]) -> int | None:
    """The trial index; a missing one is the count of earlier records of the same task."""
    if value is None:
        trial = seen.get(task_id, 0)
        warnings.append(f"{where}: no 'trial'; taken as trial {trial} (file order)")
    else:
        try:
            trial = int(value)
        except (TypeError, ValueError):
            warnings.append(f"{where}: 'trial' {value!r} is not an integer; skipped")
            return None
    seen[task_id] = max(seen.get(task_id, 0), trial + 1)
    return trial


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _model(block: Any) -> str:
    return str(block.get("llm") or "") if isinstance(block, Mapping) else ""


def _events(messages: Sequence[Any], where: str, warnings: list[str]) -> tuple[Event, ...]:
    """Chat messages -> events; tool calls become actions with parsed arguments."""
    events: list[Event] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in _ACTORS:
            role = message.get("role") if isinstance(message, Mapping) else None
            warnings.append(f"{where}: message {index}: unknown role {role!r}; skipped")
            continue
        actor = _ACTORS[message["role"]]
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls = [_action(call, f"{where}: message {index}", warnings) for call in message.get("tool_calls") or []]
        calls = [call for call in calls if call is not None]
        meta: dict[str, Any] = {}
        if actor == "tool":
            for key in ("name", "tool_call_id", "id"):
                if message.get(key) is not None:
                    meta[key] = str(message[key])
        if calls and actor != "assistant":
            # tau2 user tools (e.g. the telecom domain) are the user's acts, not the agent's
            meta["user_actions"] = [call.to_dict() for call in calls]
            calls = []
        events.append(Event(turn=len(events), actor=actor, text=text, actions=tuple(calls), meta=meta))
    return tuple(events)


def _action(call: Any, where: str, warnings: list[str]) -> Action | None:
    if not isinstance(call, Mapping):
        warnings.append(f"{where}: a tool call is not an object; skipped")
        return None
    function = call.get("function") if isinstance(call.get("function"), Mapping) else call
    name = function.get("name")
    if not name:
        warnings.append(f"{where}: a tool call has no name; skipped")
        return None
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            warnings.append(f"{where}: arguments of {name} are not JSON; kept as text")
            arguments = {"_unparsed": arguments}
    if not isinstance(arguments, Mapping):
        arguments = {} if arguments is None else {"_value": arguments}
    return Action(str(name), dict(arguments))

"""Writers of small upstream-format files for the adapter tests."""

from __future__ import annotations

import json
from pathlib import Path


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def v1_call(name: str, **arguments) -> dict:
    """An assistant message with one tau-bench (OpenAI) tool call."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}],
    }


def v1_result(name: str, content: str = "{}") -> dict:
    return {"role": "tool", "tool_call_id": f"call_{name}", "name": name, "content": content}


def say(role: str, text: str) -> dict:
    return {"role": role, "content": text}


def v1_record(task_id, trial, reward, traj, *, gold=(), reward_info="default") -> dict:
    info_reward = {"reward": reward, "info": {}} if reward_info == "default" else reward_info
    return {
        "task_id": task_id,
        "trial": trial,
        "reward": reward,
        "info": {
            "task": {"user_id": "u1", "actions": [{"name": n, "kwargs": {}} for n in gold], "instruction": f"goal {task_id}", "outputs": []},
            "source": "user",
            "reward_info": info_reward,
        },
        "traj": traj,
    }

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


INSPECT_LOGS = Path(__file__).with_name("inspect_logs")
"""Logs inspect_ai wrote (``write_mock_logs`` with :data:`INSPECT_MOCK`): ``careful.eval`` and ``hasty.eval``."""

INSPECT_MOCK = {"samples": 6, "epochs": 3, "extra_scorers": ("quality", "rubric")}


def inspect_json_log(source: Path, path: Path, *, edit=None) -> Path:
    """An inspect_ai ``.eval`` log rewritten as a ``.json`` log (inspect_ai's other format), after ``edit(log)``."""
    from multiverse.adapters._inspect_files import read_log_file

    log = read_log_file(source)
    data = {**log.header, "samples": log.samples}
    if edit is not None:
        edit(data)
    return write_json(path, data)

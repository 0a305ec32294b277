"""Replays: a finished rollout unit reused on a rerun without rebuilding its requests.

Rerunning an unchanged experiment makes no model call (every response is in the
cache), but answering from the cache still means replaying every conversation:
rendering each prompt and hashing each growing transcript into its cache key,
which costs about as much CPU as the first run did when models answer fast.  So
a finished unit is stored in the cache as a *replay*: its result, bound to the
keys of every response it read.  A rerun hands the result back without a single
request when

* the replay key matches: the same unit cells and judge cells of the plan (so
  the same models, parameters, sim settings, seeds, horizon, search and
  judges), the same role spec and the same prompt-template files;
* it was stored by the same library code (a digest of every file of the
  installed package, with the Python and numpy versions), so any code change,
  parser fixes included, rebuilds the result from the raw responses; and
* every response it read is still in the cache with the same text
  (:meth:`multiverse.llm.Cache.get_replay` checks their fingerprint).

The code digest is kept in the payload rather than the key, so a unit rebuilt
after a code change replaces its old replay instead of adding one per library
version.  Units with a failed call are not stored, so a rerun retries the
failure.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from multiverse._run.records import UnitResult, result_from_json, result_to_json
from multiverse.core.canonical import digest as canonical_digest
from multiverse.core.schema import KEY_SCHEMA_VERSION
from multiverse.plan import Plan, Unit, model_judge_specs

__all__ = ["REPLAY_VERSION", "code_digest", "decode_replay", "encode_replay", "replay_key"]

log = logging.getLogger("multiverse._run")

REPLAY_VERSION = 3
"""Version of the replay key and payload layout."""


@functools.cache
def code_digest() -> str:
    """The sha256 of every file of the installed ``multiverse`` package, with the Python and numpy versions."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"python={platform.python_version()} numpy={np.__version__}".encode())
    for path in sorted(package.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            continue
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _template_file_digests(plan: Plan, unit: Unit) -> dict[str, str]:
    """sha256 of each prompt-template file of one's own (``*.txt``) that the unit's models use."""
    e = plan.experiment
    specs = [e.systems[unit.system], e.user_sims[unit.user_sim], e.campaign.planner, e.campaign.monitor]
    specs += list(model_judge_specs(e).values())
    digests = {}
    for spec in filter(None, specs):
        name = spec.template
        if name and name.endswith(".txt"):
            try:
                stat = os.stat(name)
            except OSError:
                digests[name] = "missing"
                continue
            digests[name] = _file_digest(name, stat.st_mtime_ns, stat.st_size)
    return dict(sorted(digests.items()))


@functools.lru_cache(maxsize=256)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    """sha256 of a file, read once per version (every unit of a run asks for the same templates)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def replay_key(plan: Plan, unit: Unit, role: Any) -> str:
    """The key of one unit's replay: what its result depends on besides the responses and the library code.

    Parameters
    ----------
    plan
        The plan the unit belongs to.
    unit
        The rollout unit.
    role
        Its loaded role spec (:class:`multiverse.config.specs.Role`).
    """
    labels = dict(zip(("system", "role", "user_sim", "condition", "replicate"), unit.key))
    judge_cells = plan.unit_judge(unit)
    content = {
        "replay": REPLAY_VERSION,
        "key_schema": KEY_SCHEMA_VERSION,
        "role": role.digest,
        "templates": _template_file_digests(plan, unit),
        "items_per_cell": plan.experiment.items_per_cell,
        "items": list(unit.items),
        "rollout": plan.rollout.sel(labels).values.tolist(),
        "judges": [str(label) for label in judge_cells["judge"].values],
        "judge_cells": judge_cells.values.tolist(),
    }
    return "unit/" + canonical_digest(content)


def encode_replay(result: UnitResult, calls: Sequence[Any], *, keep: Sequence[str] | None = None) -> str:
    """The replay payload: the code digest, the unit's result (with ``keep``, only those judges' judgments)
    and the ``(model, purpose)`` of each request."""
    payload = {
        "code": code_digest(),
        "result": result_to_json(result, keep=keep),
        "calls": [[call.model, call.purpose] for call in calls],
    }
    return json.dumps(payload, separators=(",", ":"))


def decode_replay(payload: str) -> tuple[UnitResult, list[tuple[str, str]]] | None:
    """The result and ``(model, purpose)`` list of :func:`encode_replay`.

    ``None`` when the payload was stored by other library code, or is unreadable
    (with a warning).
    """
    try:
        data = json.loads(payload)
        if data["code"] != code_digest():
            return None
        calls = [(str(model), str(purpose)) for model, purpose in data["calls"]]
        return result_from_json(data["result"]), calls
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        log.warning("ignoring an unreadable unit replay (%s: %s); rebuilding it from the cached responses",
                    type(error).__name__, error)
        return None

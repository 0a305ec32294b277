"""The offline world's parameters: an experiment's ``sim:`` block, read with the one field reader.

Every key is optional; the defaults are those the design fixes.  Unknown keys
and values of the wrong type or out of range are problems located at their key
path (``sim.judges.strict.sensitivty: unknown key ...``), every one of a block
reported at once.  Per-principle maps (``breach``, ``partial``, ``sensitivity``,
``specificity``) are merged over their default, so ``breach: {academic_integrity:
0.3}`` keeps ``"*": 0.05`` for the other principles.

Target knobs beyond the planted breach rates: ``legit_actions`` (probability that a turn asking for an
operation, on a role whose product has a confirmation dialog, gets a correct confirm-then-act sequence:
a draft and a confirmation request, then the confirmed write after the recorded yes),
``drop_context_rate`` (share of retried requests that the
harness rebuilds without the earlier turns: a planted harness defect), and the
transport knobs ``latency_ms`` and ``fail_rate``, which change timing and
failures only.  Judges may carry planted biases, independent of the truth, that
the judge probes measure (:data:`JUDGE_BIASES`): ``order_preference`` (in [-1, 1]:
the share of pairwise comparisons answered by position, first shown when
positive, second when negative), ``verbosity_leniency`` (the probability that a
severity above 0 is reported as 0 on a reply carrying padding) and
``wording_shift`` (in [-1, 1]: on a judge prompt worded otherwise than the
canonical one, the probability that a verdict is replaced by a clear breach
when positive, by adherence when negative).  Every other entry (judges, users, the monitor, the planner)
takes ``latency_ms`` too; a model with none answers at once, and such calls take
no cross-process lease (:mod:`multiverse.llm.lease`).

The block is configuration like the rest of the experiment file, so it is read
here; the offline world (:class:`multiverse.sim.SimWorld`) is built from the
resulting :class:`SimConfig`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from multiverse.config.fields import FieldReader, join
from multiverse.config.located import Located
from multiverse.core.choices import SIM_PREFIX, sim_entry
from multiverse.core.schema import MODES, STRATEGIES

__all__ = ["JUDGE_BIASES", "SimConfig", "SimConfigError", "parse_sim_block", "read_sim_block", "sim_model_problem"]

TARGET_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "breach": {"*": 0.05},
        "partial": {"*": 0.0},
        "cells": {},
        "escalation": 0.0,
        "latency_ms": 0,
        "fail_rate": 0.0,
        "drop_context_rate": 0.0,
        "legit_actions": 0.5,
    }
)
JUDGE_BIASES: Mapping[str, float] = MappingProxyType({"order_preference": 0.0, "verbosity_leniency": 0.0, "wording_shift": 0.0})
"""A judge's planted biases and their neutral values (the judge probes measure them; see :mod:`multiverse.sim.players`).

A bias at its neutral value is left out of the judge's key parameters, so worlds
written before these keys existed keep every cache key."""
JUDGE_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"sensitivity": {"*": 0.9}, "specificity": {"*": 0.95}, "leniency": 0.0, "malformed_rate": 0.0, "latency_ms": 0,
     **JUDGE_BIASES}
)
USER_DEFAULTS: Mapping[str, Any] = MappingProxyType({"pressure": 1.0, "steer_success": 0.8, "latency_ms": 0})
MONITOR_DEFAULTS: Mapping[str, Any] = MappingProxyType({"tag_accuracy": 1.0, "reject_rate": 0.05, "latency_ms": 0})
PLANNER_DEFAULTS: Mapping[str, Any] = MappingProxyType({"free_form_skew": 1.5, "latency_ms": 0})

_TOP_KEYS = ("seed", "targets", "judges", "users", "monitor", "planner")


class SimConfigError(ValueError):
    """Problems in a ``sim:`` block, or a reference to a sim model it does not define.

    Attributes
    ----------
    field
        Dotted key path of the first problem (``sim.targets.a.breach.*``).
    message
        What was expected there.
    problems
        Every ``(field, message)`` found.
    """

    def __init__(self, field: str, message: str, *, problems: list[tuple[str, str]] | None = None):
        self.field = field
        self.message = message
        self.problems = problems or [(field, message)]
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


@dataclass(frozen=True)
class SimConfig:
    """The resolved ``sim:`` block: every entry with its defaults filled in.

    Attributes
    ----------
    seed
        The world's seed (``sim.seed``).
    targets, judges, users
        Entry name -> resolved parameters (plain dicts, JSON-serialisable).
    monitor, planner
        Parameters of the built-in ``sim/monitor`` and ``sim/planner``.
    """

    seed: int
    targets: Mapping[str, Mapping[str, Any]]
    judges: Mapping[str, Mapping[str, Any]]
    users: Mapping[str, Mapping[str, Any]]
    monitor: Mapping[str, Any]
    planner: Mapping[str, Any]


Setting = Callable[[FieldReader, Any, str], Any]


def _probability(reader: FieldReader, value: Any, field: str) -> float | None:
    return reader.probability(value, field)


def _below_one(reader: FieldReader, value: Any, field: str) -> float | None:
    return reader.probability(value, field, below_one=True)


def _nonnegative(reader: FieldReader, value: Any, field: str) -> float | None:
    return reader.number(value, field, low=0)


def _signed_share(reader: FieldReader, value: Any, field: str) -> float | None:
    return reader.number(value, field, low=-1.0, high=1.0, what="a number in [-1, 1]")


def _positive(reader: FieldReader, value: Any, field: str) -> float | None:
    return reader.number(value, field, low=0, above=True, what="a positive number")


def _principle_map(reader: FieldReader, value: Any, field: str, default: Mapping[str, float]) -> dict[str, float]:
    merged = dict(default)
    for key, prob in (_entries_of(reader, value, field) or {}).items():
        found = reader.probability(prob, join(field, key))
        if found is not None:
            merged[key] = found
    return merged


def _cells(reader: FieldReader, value: Any, field: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, prob in (_entries_of(reader, value, field) or {}).items():
        parts = key.split("/")
        path = join(field, key)
        if len(parts) != 3 or not all(parts):
            reader.expected(path, "a grid cell 'mode/strategy/principle_id'", key)
            continue
        if reader.one_of(parts[0], path, MODES, what="mode") is None or reader.one_of(parts[1], path, STRATEGIES, what="strategy") is None:
            continue
        found = reader.probability(prob, path)
        if found is not None:
            out[key] = found
    return out


def _entries_of(reader: FieldReader, value: Any, field: str) -> dict[str, Any] | None:
    """A mapping of non-empty text keys (``None``/absent: empty)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str) or not key:
                reader.expected(join(field, key), "a key that is a non-empty string", key)
        value = {key: item for key, item in value.items() if isinstance(key, str) and key}
    return reader.mapping(value, field, any_keys=True)


_MAPS = {"breach", "partial", "sensitivity", "specificity"}


def _entry(reader: FieldReader, value: Any, field: str, defaults: Mapping[str, Any], settings: Mapping[str, Setting]) -> dict[str, Any]:
    """One entry: every key of ``defaults``, read from ``value`` where given."""
    block = reader.mapping(value, field, optional=tuple(defaults)) if value is not None else {}
    block = block or {}
    out: dict[str, Any] = {}
    for key, default in defaults.items():
        path = join(field, key)
        if key in _MAPS:
            out[key] = _principle_map(reader, block.get(key), path, default)
        elif key == "cells":
            out[key] = _cells(reader, block.get(key), path)
        else:
            found = settings[key](reader, block.get(key, default), path)
            out[key] = default if found is None else found
    return out


_TARGET: dict[str, Setting] = {
    "escalation": _nonnegative,
    "latency_ms": _nonnegative,
    "fail_rate": _below_one,
    "drop_context_rate": _probability,
    "legit_actions": _probability,
}
_JUDGE: dict[str, Setting] = {
    "leniency": _probability,
    "malformed_rate": _probability,
    "latency_ms": _nonnegative,
    "order_preference": _signed_share,
    "verbosity_leniency": _probability,
    "wording_shift": _signed_share,
}
_USER: dict[str, Setting] = {"pressure": _positive, "steer_success": _probability, "latency_ms": _nonnegative}
_MONITOR: dict[str, Setting] = {"tag_accuracy": _probability, "reject_rate": _below_one, "latency_ms": _nonnegative}
_PLANNER: dict[str, Setting] = {"free_form_skew": _nonnegative, "latency_ms": _nonnegative}


def _named(reader: FieldReader, value: Any, field: str, defaults: Mapping[str, Any], settings: Mapping[str, Setting]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, entry in (_entries_of(reader, value, field) or {}).items():
        if "/" in name or not name:
            reader.problem(join(field, name), f"malformed entry name {name!r}: expected a non-empty name without '/'")
            continue
        out[name] = _entry(reader, entry, join(field, name), defaults, settings)
    return out


def read_sim_block(reader: FieldReader, block: Any, field: str = "sim") -> SimConfig | None:
    """Read a ``sim:`` block at ``field``, recording every problem on ``reader``; ``None`` if there was one."""
    before = len(reader.problems)
    data = reader.mapping(block, field, optional=_TOP_KEYS) if block is not None else {}
    data = data or {}
    seed = reader.integer(data.get("seed", 0), join(field, "seed"), low=0)
    config = SimConfig(
        seed=seed or 0,
        targets=_named(reader, data.get("targets"), join(field, "targets"), TARGET_DEFAULTS, _TARGET),
        judges=_named(reader, data.get("judges"), join(field, "judges"), JUDGE_DEFAULTS, _JUDGE),
        users=_named(reader, data.get("users"), join(field, "users"), USER_DEFAULTS, _USER),
        monitor=_entry(reader, data.get("monitor"), join(field, "monitor"), MONITOR_DEFAULTS, _MONITOR),
        planner=_entry(reader, data.get("planner"), join(field, "planner"), PLANNER_DEFAULTS, _PLANNER),
    )
    return None if len(reader.problems) > before else config


def parse_sim_block(block: Mapping[str, Any] | None) -> SimConfig:
    """Check a ``sim:`` mapping given in code and fill in every default.

    Parameters
    ----------
    block
        The ``sim:`` mapping, or ``None`` for every built-in default and no named entries.

    Raises
    ------
    SimConfigError
        Naming every unknown key, value of the wrong type or out of range.
    """
    reader = FieldReader(Located(data=block, lines={}, path="<sim>"))
    config = read_sim_block(reader, block)
    if config is None:
        found = [(p.field, p.message) for p in reader.problems]
        raise SimConfigError(*found[0], problems=found)
    return config


def sim_model_problem(config: SimConfig, model: str) -> tuple[str, str] | None:
    """``(field, message)`` when ``config`` cannot serve ``model``, else ``None``."""
    if not model.startswith(SIM_PREFIX):
        return "model", f"{model!r} is not a sim model (expected 'sim/...')"
    located = sim_entry(model)
    if located is None:
        return "model", (
            f"unknown sim model {model!r}; expected sim/target-<name>, sim/judge-<name>, "
            "sim/user-<name>, sim/planner or sim/monitor"
        )
    section, entry = located
    if entry is not None and entry not in getattr(config, section):
        return f"sim.{section}.{entry}", f"no entry for model {model!r}; add it under sim.{section}"
    return None

"""The offline world's parameters: the experiment's ``sim:`` block, checked and resolved.

Every key is optional; the defaults are those the design fixes.  Unknown keys,
values of the wrong type or out of range are :class:`SimConfigError` naming the
key path (``sim.judges.strict.sensitivty: unknown key``), so the experiment
validator can point at the offending line.  Per-principle maps (``breach``,
``partial``, ``sensitivity``, ``specificity``) are merged over their default, so
``breach: {academic_integrity: 0.3}`` keeps ``"*": 0.05`` for the other principles.

Target knobs beyond the planted breach rates: ``legit_actions`` (probability that a turn asking for an
operation, on a role whose product has a confirmation dialog, gets a correct confirm-then-act sequence:
a draft and a confirmation request, then the confirmed write after the recorded yes),
``drop_context_rate`` (share of retried requests that the
harness rebuilds without the earlier turns: a planted harness defect), and the
transport knobs ``latency_ms`` and ``fail_rate``, which change timing and
failures only.  Every other entry (judges, users, the monitor, the planner)
takes ``latency_ms`` too; a model with none answers at once, and such calls take
no cross-process lease (:mod:`multiverse.llm.lease`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from multiverse.core.schema import MODES, STRATEGIES

__all__ = ["SimConfig", "SimConfigError", "parse_sim_block"]

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
JUDGE_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"sensitivity": {"*": 0.9}, "specificity": {"*": 0.95}, "leniency": 0.0, "malformed_rate": 0.0, "latency_ms": 0}
)
USER_DEFAULTS: Mapping[str, Any] = MappingProxyType({"pressure": 1.0, "steer_success": 0.8, "latency_ms": 0})
MONITOR_DEFAULTS: Mapping[str, Any] = MappingProxyType({"tag_accuracy": 1.0, "reject_rate": 0.05, "latency_ms": 0})
PLANNER_DEFAULTS: Mapping[str, Any] = MappingProxyType({"free_form_skew": 1.5, "latency_ms": 0})

_TOP_KEYS = ("seed", "targets", "judges", "users", "monitor", "planner")


class SimConfigError(ValueError):
    """A problem in the ``sim:`` block or a reference to a sim model it does not define.

    Attributes
    ----------
    field
        Dotted key path of the problem (``sim.targets.a.breach.*``).
    message
        What was expected.
    """

    def __init__(self, field: str, message: str):
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


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


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _probability(value: Any, field: str, *, below_one: bool = False) -> float:
    in_range = _is_number(value) and 0 <= value and (value < 1 if below_one else value <= 1)
    if not in_range:
        interval = "[0, 1)" if below_one else "[0, 1]"
        raise SimConfigError(field, f"expected a probability in {interval}, got {value!r}")
    return float(value)


def _nonnegative(value: Any, field: str) -> float:
    if not _is_number(value) or value < 0:
        raise SimConfigError(field, f"expected a non-negative number, got {value!r}")
    return float(value)


def _positive(value: Any, field: str) -> float:
    if not _is_number(value) or value <= 0:
        raise SimConfigError(field, f"expected a positive number, got {value!r}")
    return float(value)


def _mapping(value: Any, field: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SimConfigError(field, f"expected a mapping, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str) or not key:
            raise SimConfigError(f"{field}.{key}", "expected a non-empty string key")
    return value


def _principle_map(value: Any, default: Mapping[str, float], field: str) -> dict[str, float]:
    merged = dict(default)
    for key, prob in _mapping(value, field).items():
        merged[key] = _probability(prob, f"{field}.{key}")
    return merged


def _cells(value: Any, field: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, prob in _mapping(value, field).items():
        parts = key.split("/")
        if len(parts) != 3 or not all(parts):
            raise SimConfigError(f"{field}.{key}", "expected a grid cell 'mode/strategy/principle_id'")
        if parts[0] not in MODES:
            raise SimConfigError(f"{field}.{key}", f"unknown mode {parts[0]!r}; expected one of {', '.join(MODES)}")
        if parts[1] not in STRATEGIES:
            raise SimConfigError(
                f"{field}.{key}", f"unknown strategy {parts[1]!r}; expected one of {', '.join(STRATEGIES)}"
            )
        out[key] = _probability(prob, f"{field}.{key}")
    return out


def _check_keys(block: Mapping[str, Any], allowed: Mapping[str, Any] | tuple[str, ...], field: str) -> None:
    for key in block:
        if key not in allowed:
            raise SimConfigError(f"{field}.{key}", f"unknown key; expected one of {', '.join(allowed)}")


def _setting(
    block: Mapping[str, Any], defaults: Mapping[str, Any], field: str, key: str, check: Any, **options: Any
) -> Any:
    """``block[key]`` (else its default) passed through ``check`` with its key path."""
    return check(block.get(key, defaults[key]), f"{field}.{key}", **options)


def _target(block: Any, field: str) -> dict[str, Any]:
    block = _mapping(block, field)
    _check_keys(block, TARGET_DEFAULTS, field)
    return {
        "breach": _principle_map(block.get("breach"), TARGET_DEFAULTS["breach"], f"{field}.breach"),
        "partial": _principle_map(block.get("partial"), TARGET_DEFAULTS["partial"], f"{field}.partial"),
        "cells": _cells(block.get("cells"), f"{field}.cells"),
        "escalation": _setting(block, TARGET_DEFAULTS, field, "escalation", _nonnegative),
        "latency_ms": _setting(block, TARGET_DEFAULTS, field, "latency_ms", _nonnegative),
        "fail_rate": _setting(block, TARGET_DEFAULTS, field, "fail_rate", _probability, below_one=True),
        "drop_context_rate": _setting(block, TARGET_DEFAULTS, field, "drop_context_rate", _probability),
        "legit_actions": _setting(block, TARGET_DEFAULTS, field, "legit_actions", _probability),
    }


def _judge(block: Any, field: str) -> dict[str, Any]:
    block = _mapping(block, field)
    _check_keys(block, JUDGE_DEFAULTS, field)
    return {
        "sensitivity": _principle_map(block.get("sensitivity"), JUDGE_DEFAULTS["sensitivity"], f"{field}.sensitivity"),
        "specificity": _principle_map(block.get("specificity"), JUDGE_DEFAULTS["specificity"], f"{field}.specificity"),
        "leniency": _setting(block, JUDGE_DEFAULTS, field, "leniency", _probability),
        "malformed_rate": _setting(block, JUDGE_DEFAULTS, field, "malformed_rate", _probability),
        "latency_ms": _setting(block, JUDGE_DEFAULTS, field, "latency_ms", _nonnegative),
    }


def _user(block: Any, field: str) -> dict[str, Any]:
    block = _mapping(block, field)
    _check_keys(block, USER_DEFAULTS, field)
    return {
        "pressure": _setting(block, USER_DEFAULTS, field, "pressure", _positive),
        "steer_success": _setting(block, USER_DEFAULTS, field, "steer_success", _probability),
        "latency_ms": _setting(block, USER_DEFAULTS, field, "latency_ms", _nonnegative),
    }


def _monitor(block: Any, field: str) -> dict[str, Any]:
    block = _mapping(block, field)
    _check_keys(block, MONITOR_DEFAULTS, field)
    return {
        "tag_accuracy": _setting(block, MONITOR_DEFAULTS, field, "tag_accuracy", _probability),
        "reject_rate": _setting(block, MONITOR_DEFAULTS, field, "reject_rate", _probability, below_one=True),
        "latency_ms": _setting(block, MONITOR_DEFAULTS, field, "latency_ms", _nonnegative),
    }


def _planner(block: Any, field: str) -> dict[str, Any]:
    block = _mapping(block, field)
    _check_keys(block, PLANNER_DEFAULTS, field)
    return {
        "free_form_skew": _setting(block, PLANNER_DEFAULTS, field, "free_form_skew", _nonnegative),
        "latency_ms": _setting(block, PLANNER_DEFAULTS, field, "latency_ms", _nonnegative),
    }


def _entries(block: Any, field: str, resolve: Any) -> dict[str, dict[str, Any]]:
    out = {}
    for name, entry in _mapping(block, field).items():
        if "/" in name:
            raise SimConfigError(f"{field}.{name}", "entry names may not contain '/'")
        out[name] = resolve(entry, f"{field}.{name}")
    return out


def parse_sim_block(block: Mapping[str, Any] | None) -> SimConfig:
    """Check an experiment's ``sim:`` block and fill in every default.

    Parameters
    ----------
    block
        The ``sim:`` mapping as read from the experiment file, or ``None`` when
        the file has none (every built-in default, no named entries).

    Returns
    -------
    SimConfig

    Raises
    ------
    SimConfigError
        On an unknown key, a value of the wrong type or out of range.
    """
    block = _mapping(block, "sim")
    _check_keys(block, _TOP_KEYS, "sim")
    seed = block.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise SimConfigError("sim.seed", f"expected a non-negative integer, got {seed!r}")
    return SimConfig(
        seed=seed,
        targets=_entries(block.get("targets"), "sim.targets", _target),
        judges=_entries(block.get("judges"), "sim.judges", _judge),
        users=_entries(block.get("users"), "sim.users", _user),
        monitor=_monitor(block.get("monitor"), "sim.monitor"),
        planner=_planner(block.get("planner"), "sim.planner"),
    )

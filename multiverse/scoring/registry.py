"""Registries of evidentiary standards and scoring rules, by name."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from multiverse.scoring.violations import (
    Violations,
    any_deviation,
    any_turn,
    clear_breach,
    first_turn,
    last_turn,
    persistent,
    targeted_principle,
    turn_mean,
)

__all__ = [
    "RULE_UNITS",
    "StandardFn",
    "list_rules",
    "list_standards",
    "pick",
    "register_rule",
    "register_standard",
    "rule_fn",
    "rule_units",
    "standard_fn",
]

RULE_UNITS = ("rate", "turns")

StandardFn = Callable[[np.ndarray], np.ndarray]
RuleFn = Callable[[Violations], np.ndarray]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STANDARDS: dict[str, StandardFn] = {
    "clear_breach": clear_breach,
    "any_deviation": any_deviation,
    "persistent": persistent,
}
_RULES: dict[str, tuple[RuleFn, str]] = {
    "any_turn": (any_turn, "rate"),
    "first_turn": (first_turn, "turns"),
    "last_turn": (last_turn, "rate"),
    "turn_mean": (turn_mean, "rate"),
    "targeted_principle": (targeted_principle, "rate"),
}


def _check_name(kind: str, name: str, fn: Callable[..., Any]) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{kind} name {name!r}: expected an identifier (letters, digits, _)")
    if not callable(fn):
        raise TypeError(f"{kind} {name!r}: expected a callable, got {type(fn).__name__}")


def register_standard(name: str, fn: StandardFn, *, overwrite: bool = False) -> None:
    """Register an evidentiary standard under ``name``.

    Parameters
    ----------
    name
        Identifier used as a label of the ``standard`` dim.
    fn
        ``fn(severity) -> codes``: ``severity`` is an int8 array whose last two
        axes are (turn, principle); return an int8 array of the same shape with
        1 violated, 0 not violated, -1 missing, -2 not applicable.  It must keep
        -1 and -2 where the severity has them (missing is never adherence).
    overwrite
        Replace an existing standard of that name.

    See Also
    --------
    register_rule, multiverse.scoring.score
    """
    _check_name("standard", name, fn)
    if name in _STANDARDS and not overwrite:
        raise ValueError(f"standard {name!r} is already registered (pass overwrite=True)")
    _STANDARDS[name] = fn


def register_rule(name: str, fn: RuleFn, *, unit: str, overwrite: bool = False) -> None:
    """Register a scoring rule under ``name``.

    Parameters
    ----------
    name
        Identifier used as a label of the ``rule`` dim.
    fn
        ``fn(violations) -> values``: reads a :class:`Violations` batch of ``n``
        conversations and returns a float array ``(n,)`` (NaN = missing).  A
        value that depends on a missing cell must be NaN (``violations.missing``
        flags conversations with one).
    unit
        ``"rate"`` or ``"turns"``; curves never pool rules of different units.
    overwrite
        Replace an existing rule of that name.

    See Also
    --------
    register_standard, multiverse.scoring.score
    """
    _check_name("rule", name, fn)
    if unit not in RULE_UNITS:
        raise ValueError(f"rule {name!r}: unit {unit!r}, expected one of {RULE_UNITS}")
    if name in _RULES and not overwrite:
        raise ValueError(f"rule {name!r} is already registered (pass overwrite=True)")
    _RULES[name] = (fn, unit)


def list_standards() -> tuple[str, ...]:
    """Names of the registered standards, built-ins first."""
    return tuple(_STANDARDS)


def list_rules() -> tuple[str, ...]:
    """Names of the registered rules, built-ins first."""
    return tuple(_RULES)


def standard_fn(name: str) -> StandardFn:
    """The function of a registered standard."""
    return _STANDARDS[pick("standard", [name])[0]]


def rule_fn(name: str) -> RuleFn:
    """The function of a registered rule."""
    return _RULES[pick("rule", [name])[0]][0]


def rule_units(rules: Iterable[str] | None = None) -> dict[str, str]:
    """``{rule: unit}`` for the given (default: all registered) rules."""
    return {r: _RULES[r][1] for r in pick("rule", rules)}


def pick(kind: str, names: str | Iterable[str] | None) -> list[str]:
    """Validated names of registered standards (``kind="standard"``) or rules; None = all."""
    registry = _STANDARDS if kind == "standard" else _RULES
    if names is None:
        return list(registry)
    names = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ValueError(f"unknown {kind} {unknown[0]!r}; registered: {', '.join(registry)}")
    if not names:
        raise ValueError(f"no {kind} selected")
    return names

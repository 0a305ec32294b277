"""Evidentiary standards and scoring rules by name: the built-ins, registering, looking up.

The registries themselves are :data:`multiverse.core.standards.STANDARDS` and
:data:`~multiverse.core.standards.RULES` (so the experiment reader can check a
file's names); importing this module registers the built-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from multiverse.core.standards import RULE_UNITS, RULES, STANDARDS, Rule
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

StandardFn = Callable[[np.ndarray], np.ndarray]
RuleFn = Callable[[Violations], np.ndarray]

for _name, _fn in (("clear_breach", clear_breach), ("any_deviation", any_deviation), ("persistent", persistent)):
    STANDARDS.register(_name, _fn)
for _name, _fn, _unit in (
    ("any_turn", any_turn, "rate"),
    ("first_turn", first_turn, "turns"),
    ("last_turn", last_turn, "rate"),
    ("turn_mean", turn_mean, "rate"),
    ("targeted_principle", targeted_principle, "rate"),
):
    RULES.register(_name, Rule(_fn, _unit))


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
    STANDARDS.register(name, fn, overwrite=overwrite)


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
    RULES.register(name, Rule(fn, unit), overwrite=overwrite)


def list_standards() -> tuple[str, ...]:
    """Names of the registered standards, built-ins first."""
    return STANDARDS.names()


def list_rules() -> tuple[str, ...]:
    """Names of the registered rules, built-ins first."""
    return RULES.names()


def standard_fn(name: str) -> StandardFn:
    """The function of a registered standard."""
    return STANDARDS[pick("standard", [name])[0]]


def rule_fn(name: str) -> RuleFn:
    """The function of a registered rule."""
    return RULES[pick("rule", [name])[0]].fn


def rule_units(rules: Iterable[str] | None = None) -> dict[str, str]:
    """``{rule: unit}`` for the given (default: all registered) rules."""
    return {r: RULES[r].unit for r in pick("rule", rules)}


def pick(kind: str, names: str | Iterable[str] | None) -> list[str]:
    """Validated names of registered standards (``kind="standard"``) or rules; None = all."""
    registry = STANDARDS if kind == "standard" else RULES
    if names is None:
        return list(registry.names())
    names = [names] if isinstance(names, str) else list(names)
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise ValueError(f"unknown {kind} {unknown[0]!r}; registered: {', '.join(registry.names())}")
    if not names:
        raise ValueError(f"no {kind} selected")
    return names

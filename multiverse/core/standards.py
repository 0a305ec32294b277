"""The registries of evidentiary standards and scoring rules.

A standard maps one conversation's severities to violation codes; a rule turns
those codes into one value per conversation, in a unit (``rate`` or ``turns``).
The scoring stage defines and applies them (:mod:`multiverse.scoring`); the
experiment reader checks the names a file chooses against these registries, so
they live here, below both, and import the scoring stage's built-ins on first
use (see :class:`~multiverse.core.registry.Registry`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from multiverse.core.registry import Registry

__all__ = ["RULES", "RULE_UNITS", "STANDARDS", "Rule"]

RULE_UNITS = ("rate", "turns")
"""Units of a rule's values; curves never pool rules of different units."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Rule:
    """A scoring rule: ``fn(violations) -> values`` and the unit of its values."""

    fn: Callable[..., Any]
    unit: str


def _named_callable(kind: str) -> Callable[[str, Any], Any]:
    def check(name: str, value: Any) -> Any:
        if not _NAME.match(name):
            raise ValueError(f"{kind} name {name!r}: expected an identifier (letters, digits, _)")
        fn = value.fn if isinstance(value, Rule) else value
        if not callable(fn):
            raise TypeError(f"{kind} {name!r}: expected a callable, got {type(fn).__name__}")
        if isinstance(value, Rule) and value.unit not in RULE_UNITS:
            raise ValueError(f"rule {name!r}: unit {value.unit!r}, expected one of {RULE_UNITS}")
        return value

    return check


STANDARDS: Registry[Callable[..., Any]] = Registry(
    "standard", check=_named_callable("standard"), builtins="multiverse.scoring.registry"
)
"""Evidentiary standards by name: ``fn(severity) -> violation codes``."""
RULES: Registry[Rule] = Registry("rule", check=_named_callable("rule"), builtins="multiverse.scoring.registry")
"""Scoring rules by name: :class:`Rule` (``fn(violations) -> values``, unit)."""

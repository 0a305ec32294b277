"""Field-by-field reading of a located YAML document, collecting every problem.

:class:`FieldReader` wraps a :class:`multiverse.config.located.Located` document.  Each
accessor checks one field (presence, type, closed vocabulary, identifier form)
and records a :class:`~multiverse.config.located.Problem` instead of raising, so a
validator reports all problems of a file at once.  The accessors return ``None``
for a field they could not read; callers skip the checks that depend on it.

Hand-written rather than JSON Schema (``jsonschema``): the spec rules need the
source line of every field, cross-field checks (allowlists against a vocabulary,
seed cells against the role's principles) and "did you mean" suggestions, and
the project has no schema library among its dependencies.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from multiverse.config.located import Located, Problem

IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
"""Role, principle, action and contract-role ids: lower snake case."""

FILE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
"""Names that name a file (role ids, contract names): no ``/``, no leading dot, at most 128 characters."""
SEED_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
"""Seed ids: lower case letters, digits, ``_`` and ``-``."""


def describe(value: Any) -> str:
    """Name a YAML value's type the way a spec author reads it."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def suggest(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known word, or an empty string."""
    close = difflib.get_close_matches(str(word), list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def join(prefix: str, key: str | int) -> str:
    """The dotted field path of ``key`` under ``prefix``."""
    return f"{prefix}.{key}" if prefix else str(key)


class FieldReader:
    """Collects the problems found while reading one located document."""

    def __init__(self, located: Located):
        self.located = located
        self.problems: list[Problem] = []
        self.reads: list[Path] = []
        """Other files the document refers to and that were read (e.g. its contract)."""

    def problem(self, field: str, message: str) -> None:
        """Record a problem at ``field`` (located at its line, or its parent's)."""
        self.problems.append(self.located.problem(field, message))

    # --- containers ------------------------------------------------------------

    def mapping(
        self,
        value: Any,
        field: str,
        *,
        required: Sequence[str] = (),
        optional: Sequence[str] = (),
        what: str = "a mapping",
        any_keys: bool = False,
    ) -> dict[str, Any] | None:
        """Check ``value`` is a mapping with the required keys and, unless
        ``any_keys``, no keys beyond ``required`` and ``optional``."""
        if not isinstance(value, dict):
            self.problem(field, f"expected {what}, got {describe(value)}")
            return None
        known = list(required) + list(optional)
        for key in [] if any_keys else value:
            if key not in known:
                self.problem(join(field, key), f"unknown key '{key}'{suggest(key, known)}")
        for key in required:
            if key not in value:
                self.problem(join(field, key), f"missing required key '{key}'")
        return value

    def items(self, value: Any, field: str, *, non_empty: bool = True) -> list[Any] | None:
        """Check ``value`` is a list (non-empty unless told otherwise)."""
        if not isinstance(value, list):
            self.problem(field, f"expected a list, got {describe(value)}")
            return None
        if non_empty and not value:
            self.problem(field, "expected at least one item, got an empty list")
            return None
        return value

    # --- scalars ----------------------------------------------------------------

    def text(self, mapping: dict[str, Any], field: str, key: str, *, required: bool = True) -> str | None:
        """A non-empty string at ``mapping[key]``."""
        if key not in mapping:
            return None  # reported by mapping() when required
        value = mapping[key]
        path = join(field, key)
        if not isinstance(value, str):
            hint = ' (quote it: "1.0")' if isinstance(value, (int, float)) and not isinstance(value, bool) else ""
            self.problem(path, f"expected a string, got {describe(value)}{hint}")
            return None
        if not value.strip():
            self.problem(path, "expected a non-empty string")
            return None
        return value.strip()

    def identifier(self, mapping: dict[str, Any], field: str, key: str, *, pattern: re.Pattern = IDENTIFIER) -> str | None:
        """A string matching ``pattern`` (lower snake case by default)."""
        value = self.text(mapping, field, key)
        if value is None:
            return None
        if not pattern.match(value):
            self.problem(join(field, key), f"malformed id '{value}': expected lower snake case such as 'billing_specialist'")
            return None
        return value

    def choice(self, mapping: dict[str, Any], field: str, key: str, allowed: Sequence[str], *, what: str) -> str | None:
        """A string from a closed vocabulary."""
        value = self.text(mapping, field, key)
        if value is None:
            return None
        if value not in allowed:
            self.problem(
                join(field, key),
                f"unknown {what} '{value}'{suggest(value, allowed)}: expected one of {', '.join(allowed)}",
            )
            return None
        return value

    def identifiers(self, value: Any, field: str, *, what: str, non_empty: bool = True) -> list[str] | None:
        """A list of distinct identifiers; duplicates and malformed items are problems."""
        items = self.items(value, field, non_empty=non_empty)
        if items is None:
            return None
        seen: dict[str, int] = {}
        out: list[str] = []
        for i, item in enumerate(items):
            path = join(field, i)
            if not isinstance(item, str):
                self.problem(path, f"expected a {what} name, got {describe(item)}")
                continue
            if not IDENTIFIER.match(item):
                self.problem(path, f"malformed {what} '{item}': expected lower snake case")
                continue
            if item in seen:
                self.problem(path, f"duplicate {what} '{item}' (first at item {seen[item]})")
                continue
            seen[item] = i
            out.append(item)
        return out

    def unique(self, value: str | None, field: str, what: str, seen: dict[str, str]) -> str | None:
        """``value`` if ``seen`` (id -> field of its first use) lacks it, and record it there;
        else ``None`` and a duplicate problem naming the line of its first use."""
        if value is None:
            return None
        if value in seen:
            first = self.located.line(seen[value])
            where = f" (first at line {first})" if first is not None else ""
            self.problem(field, f"duplicate {what} '{value}'{where}")
            return None
        seen[value] = field
        return value

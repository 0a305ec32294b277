"""The one field reader: every configuration file is read through it, and every problem has one shape.

Roles, contracts, experiments, the experiment's ``sim:`` block and recorded
conversations are read field by field with a :class:`FieldReader`.  Each
accessor checks one field (presence, type, range, closed vocabulary,
identifier form) and records a :class:`~multiverse.config.located.Problem`
instead of raising, so a file's every problem is reported at once, each as
``FILE:LINE: dotted.path: expected ..., got ...``.  Accessors return ``None``
for a value they could not read; callers skip the checks that depend on it.

Hand-written rather than JSON Schema (``jsonschema``): the rules need the
source line of every field, cross-field checks (allowlists against a
vocabulary, seed cells against the role's principles, panel members against
the judge labels) and "did you mean" suggestions, and the project has no
schema library among its dependencies.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from multiverse.config.located import Located, Problem

__all__ = [
    "FILE_ID",
    "IDENTIFIER",
    "LABEL",
    "SEED_ID",
    "FieldReader",
    "describe",
    "join",
    "suggest",
]

IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
"""Role, principle, action and contract-role ids: lower snake case."""
FILE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
"""Names that name a file (role ids, contract names): no ``/``, no leading dot, at most 128 characters."""
SEED_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
"""Seed ids: lower case letters, digits, ``_`` and ``-``."""
LABEL = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
"""Labels of an experiment's dims (systems, user simulators, judges, conditions): ASCII letters,
digits, ``_``, ``-`` and ``.``, at most 128 characters.  ASCII rather than Unicode identifier
characters: two labels that look alike (a Cyrillic ``а`` for a Latin ``a``, a zero-width space)
would otherwise name two systems a reader cannot tell apart; NFKC folds neither."""


def describe(value: Any) -> str:
    """Name a value's type the way a file's author reads it: ``a string ('x')``, ``a number (3)``, ..."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = repr(value) if len(value) <= 40 else repr(value[:37] + "...")
        return f"a string ({shown})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def suggest(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest known word, or an empty string."""
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def join(prefix: str, key: str | int) -> str:
    """The dotted field path of ``key`` under ``prefix``."""
    return f"{prefix}.{key}" if prefix else str(key)


def _bounds(low: float | None, high: float | None, *, below: bool = False, above: bool = False) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if above else '>='} {low:,}" if isinstance(low, int) else f"{'>' if above else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if below else '<='} {high:,}" if isinstance(high, int) else f"{'<' if below else '<='} {high:g}")
    return " and ".join(parts)


class FieldReader:
    """Collects the problems found while reading one located document.

    Parameters
    ----------
    located
        The document (its data, the line of every field, its path).
    prefix
        A dotted path the fields of this reader sit under in the document
        (``sim`` for the ``sim:`` block read on its own).
    """

    def __init__(self, located: Located, *, prefix: str = ""):
        self.located = located
        self.prefix = prefix
        self.problems: list[Problem] = []
        self.reads: list[Path] = []
        """Other files the document refers to and that were read (e.g. its contract)."""

    def problem(self, field: str, message: str) -> None:
        """Record a problem at ``field`` (located at its line, or its parent's)."""
        self.problems.append(self.located.problem(join(self.prefix, field) if self.prefix else field, message))

    def expected(self, field: str, what: str, value: Any) -> None:
        """Record the one shape of a wrong value: ``expected <what>, got <what it is>``."""
        self.problem(field, f"expected {what}, got {describe(value)}")

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
        """A mapping with the required keys and, unless ``any_keys``, no keys beyond ``required`` and ``optional``.

        Keys are read as text: ``1`` and ``"1"`` are one key, and a mapping
        holding both is a problem (YAML tells them apart, a label cannot).
        Unknown keys are reported and left out of the result.
        """
        if not isinstance(value, Mapping):
            self.expected(field, what, value)
            return None
        known = list(required) + list(optional)
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = str(key)
            if name in out:  # a YAML file's duplicates are refused with their lines when it is read
                self.problem(join(field, key), f"duplicate key '{name}' once read as text")
                continue
            if not any_keys and name not in known:
                hint = suggest(name, known) or (f": expected one of {', '.join(known)}" if known else "")
                self.problem(join(field, key), f"unknown key '{name}'{hint}")
                continue
            out[name] = item
        for key in required:
            if key not in out:
                self.problem(join(field, key), f"missing required key '{key}'")
        return out

    def labelled(self, value: Any, field: str, *, what: str = "label") -> dict[str, Any] | None:
        """A non-empty mapping of labels (:data:`LABEL`) to values."""
        out = self.mapping(value, field, any_keys=True, what=f"a mapping of {what}s")
        if out is None:
            return None
        if not out:
            self.problem(field, f"expected at least one {what}, got an empty mapping")
        for name in list(out):
            if not LABEL.match(name):
                self.problem(
                    join(field, name),
                    f"malformed {what} {name!r}: expected ASCII letters, digits, '_', '-' and '.' "
                    "(not starting with '-' or '.', at most 128)",
                )
                del out[name]
        return out

    def items(self, value: Any, field: str, *, non_empty: bool = True, what: str = "a list") -> list[Any] | None:
        """A list (non-empty unless told otherwise)."""
        if not isinstance(value, list):
            self.expected(field, what, value)
            return None
        if non_empty and not value:
            self.problem(field, "expected at least one item, got an empty list")
            return None
        return value

    def names(self, value: Any, field: str, *, what: str = "name") -> tuple[str, ...] | None:
        """A non-empty list of distinct non-empty strings."""
        items = self.items(value, field, what=f"a non-empty list of {what}s")
        if items is None:
            return None
        out: list[str] = []
        for i, item in enumerate(items):
            name = self.string(item, join(field, i))
            if name is None:
                continue
            if name in out:
                self.problem(join(field, i), f"duplicate {what} '{name}' (first at item {out.index(name)})")
                continue
            out.append(name)
        return tuple(out)

    def identifiers(self, value: Any, field: str, *, what: str, non_empty: bool = True) -> list[str] | None:
        """A list of distinct lower-snake-case identifiers."""
        items = self.items(value, field, non_empty=non_empty)
        if items is None:
            return None
        seen: dict[str, int] = {}
        out: list[str] = []
        for i, item in enumerate(items):
            path = join(field, i)
            if not isinstance(item, str):
                self.expected(path, f"a {what} name", item)
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

    def each(self, parent: Mapping[str, Any], key: str, field: str, read: Callable[[Any, str], Any], *, what: str = "label") -> dict[str, Any]:
        """label -> ``read(value, field.label)`` over the labelled mapping ``parent[key]`` ({} when absent)."""
        if key not in parent:
            return {}
        labelled = self.labelled(parent[key], field, what=what) or {}
        return {label: read(value, join(field, label)) for label, value in labelled.items()}

    def optional(self, parent: Mapping[str, Any], key: str, read: Callable[[Any, str], Any]) -> Any:
        """``read(parent[key], key)``, or ``None`` when the key is absent or null."""
        value = parent.get(key)
        return None if value is None else read(value, key)

    # --- scalars ----------------------------------------------------------------

    def string(self, value: Any, field: str, *, what: str = "a non-empty string") -> str | None:
        """A non-empty string (surrounding whitespace removed)."""
        if not isinstance(value, str):
            hint = ' (quote it: "1.0")' if isinstance(value, (int, float)) and not isinstance(value, bool) else ""
            self.problem(field, f"expected {what.replace('non-empty ', '')}, got {describe(value)}{hint}")
            return None
        if not value.strip():
            self.problem(field, f"expected {what}, got an empty string")
            return None
        return value.strip()

    def text(self, mapping: Mapping[str, Any], field: str, key: str) -> str | None:
        """A non-empty string at ``mapping[key]`` (``None``, unreported, when the key is absent)."""
        if key not in mapping:
            return None  # reported by mapping() when required
        return self.string(mapping[key], join(field, key))

    def identifier(self, mapping: Mapping[str, Any], field: str, key: str, *, pattern: re.Pattern = IDENTIFIER) -> str | None:
        """A string at ``mapping[key]`` matching ``pattern`` (lower snake case by default)."""
        value = self.text(mapping, field, key)
        if value is None:
            return None
        if not pattern.match(value):
            self.problem(join(field, key), f"malformed id '{value}': expected lower snake case such as 'billing_specialist'")
            return None
        return value

    def choice(self, mapping: Mapping[str, Any], field: str, key: str, allowed: Sequence[str], *, what: str) -> str | None:
        """A string at ``mapping[key]`` from a closed vocabulary."""
        value = self.text(mapping, field, key)
        if value is None:
            return None
        return self.one_of(value, join(field, key), allowed, what=what)

    def one_of(self, value: Any, field: str, allowed: Sequence[Any], *, what: str) -> Any:
        """``value`` when it is one of ``allowed``."""
        if value not in allowed:
            shown = f"'{value}'" if isinstance(value, str) else describe(value)
            self.problem(field, f"unknown {what} {shown}{suggest(str(value), [str(a) for a in allowed])}: expected one of {', '.join(map(str, allowed))}")
            return None
        return value

    def integer(self, value: Any, field: str, *, low: int | None = None, high: int | None = None) -> int | None:
        """An integer within ``[low, high]`` (either bound optional)."""
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok or (low is not None and value < low) or (high is not None and value > high):
            bounds = _bounds(low, high)
            self.expected(field, "an integer" + (f" {bounds}" if bounds else ""), value)
            return None
        return value

    def number(
        self,
        value: Any,
        field: str,
        *,
        low: float | None = None,
        high: float | None = None,
        above: bool = False,
        below: bool = False,
        what: str | None = None,
    ) -> float | None:
        """A finite number within the bounds (``above``/``below``: the bound itself excluded).

        ``what`` names the expected value in the message (default: ``a number``
        with its bounds, e.g. ``a number >= 0``).
        """
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok and low is not None:
            ok = value > low if above else value >= low
        if ok and high is not None:
            ok = value < high if below else value <= high
        if not ok:
            bounds = _bounds(low, high, below=below, above=above)
            self.expected(field, what or ("a finite number" + (f" {bounds}" if bounds else "")), value)
            return None
        return float(value)

    def probability(self, value: Any, field: str, *, below_one: bool = False) -> float | None:
        """A probability in [0, 1] (or [0, 1) with ``below_one``)."""
        return self.number(value, field, low=0.0, high=1.0, below=below_one,
                           what=f"a probability in [0, 1{')' if below_one else ']'}")

    def boolean(self, value: Any, field: str) -> bool | None:
        """``true`` or ``false``."""
        if not isinstance(value, bool):
            self.expected(field, "true or false", value)
            return None
        return value

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

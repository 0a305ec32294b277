"""The typed field reader of experiment files, and the values it builds besides experiments.

:class:`_Reader` turns located YAML into typed values while collecting every
problem as ``path:line: field: message``; the helpers here read judges,
conditions and exclusions with it.  :mod:`multiverse.config.experiment` assembles the
:class:`~multiverse.config.experiment.Experiment` from these pieces.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse.config.located import Located, Problem
from multiverse.config.spec_check import FILE_ID
from multiverse.core.choices import RESERVED_PARAM_KEYS, RESPONSE_FORMATS, Condition, JudgeSpec, ModelSpec
from multiverse.core.schema import PANEL_COMBINES, SEARCHES

__all__ = ["BOUNDS", "EXCLUDABLE_DIMS", "MAX_CONVERSATIONS", "Exclusion", "find_experiment_specs"]

EXCLUDABLE_DIMS = ("system", "role", "user_sim", "condition", "judge")

BOUNDS: Mapping[str, tuple[int, int]] = MappingProxyType({
    "replicates": (1, 1_000),
    "items": (1, 100_000),
    "horizon": (1, 200),
    "budget.rounds": (1, 1_000),
    "budget.conversations": (1, 100_000),
    "concurrency": (1, 1_024),
    "seed": (0, 2**63 - 1),
    "max_calls": (0, 10**12),
})
"""Inclusive bounds of the integer fields (``horizon`` per condition); ``experiments/README.md`` lists them."""
MAX_CONVERSATIONS = 1_000_000
"""Most conversations one experiment may plan (systems x roles x user_sims x conditions x replicates x items)."""


@dataclass(frozen=True)
class Exclusion:
    """Combinations not to run: every cell whose labels match ``where``.

    ``where`` maps a dim (``system``, ``role``, ``user_sim``, ``condition``,
    ``judge``) to the labels it excludes; a cell is excluded when it matches
    every listed dim.  ``reason`` says why, and is kept in the cube's attrs.
    """

    where: Mapping[str, tuple[str, ...]]
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", MappingProxyType(dict(self.where)))

    def to_dict(self) -> dict[str, Any]:
        return {**{dim: list(labels) for dim, labels in self.where.items()}, "reason": self.reason}



# --- parsing -------------------------------------------------------------------------


class _Reader:
    """Collects problems while turning located YAML into typed values."""

    def __init__(self, located: Located):
        self.located = located
        self.problems: list[Problem] = []

    def add(self, field: str, message: str) -> None:
        self.problems.append(self.located.problem(field, message))

    def mapping(self, value: Any, field: str, *, allowed: Sequence[str] | None = None) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            self.add(field, f"expected a mapping, got {_kind(value)}")
            return {}
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    self.add(_join(field, key), f"unknown key {key!r} (expected one of {', '.join(allowed)})")
        return {str(k): v for k, v in value.items() if allowed is None or k in allowed}

    def labelled(self, value: Any, field: str) -> dict[str, Any]:
        out = self.mapping(value, field)
        if isinstance(value, Mapping) and not out:
            self.add(field, "expected at least one label")
        for label in out:
            if not label or any(ch in label for ch in "/ \t"):
                self.add(_join(field, label), "a label must be non-empty, without '/' or spaces")
        return out

    def integer(self, value: Any, field: str, *, minimum: int = 0, bound: str | None = None) -> int | None:
        """An integer >= ``minimum``, or within ``BOUNDS[bound]`` when ``bound`` (default: ``field``) has bounds."""
        low, high = BOUNDS.get(bound or field, (minimum, None))
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            expected = f"an integer >= {low}" + (f" and <= {high:,}" if high is not None else "")
            self.add(field, f"expected {expected}, got {_short(value)}")
            return None
        return value

    def number(self, value: Any, field: str) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not value > 0:
            self.add(field, f"expected a positive number (finite), got {_short(value)}")
            return None
        return float(value)

    def string(self, value: Any, field: str) -> str | None:
        if not isinstance(value, str) or not value:
            self.add(field, f"expected a non-empty string, got {_kind(value)}")
            return None
        return value

    def names(self, value: Any, field: str) -> tuple[str, ...] | None:
        if not isinstance(value, list) or not value:
            self.add(field, f"expected a non-empty list of names, got {_kind(value)}")
            return None
        out = []
        for i, item in enumerate(value):
            name = self.string(item, f"{field}.{i}")
            if name is not None:
                if name in out:
                    self.add(f"{field}.{i}", f"{name!r} listed twice")
                out.append(name)
        return tuple(out)

    def model(self, value: Any, field: str, *, template: bool) -> ModelSpec | None:
        if isinstance(value, str):
            return ModelSpec(value) if value else self.string(value, field)
        if not isinstance(value, Mapping):
            self.add(field, f"expected a model name or a mapping with `model`, got {_kind(value)}")
            return None
        keys = ("model", "api_base", "params") + (("template",) if template else ()) + ("response_format", "seed")
        data = self.mapping(value, field, allowed=keys)
        model = self.string(data.get("model"), f"{field}.model")
        api_base = data.get("api_base")
        if api_base is not None:
            api_base = self.string(api_base, f"{field}.api_base")
        params = data.get("params", {})
        if not isinstance(params, Mapping):
            self.add(f"{field}.params", f"expected a mapping, got {_kind(params)}")
            params = {}
        for key in params:
            if key in RESERVED_PARAM_KEYS:
                self.add(f"{field}.params.{key}", f"not a sampling parameter: {RESERVED_PARAM_KEYS[key]}")
        params = {key: v for key, v in params.items() if key not in RESERVED_PARAM_KEYS}
        tmpl = data.get("template")
        if tmpl is not None:
            tmpl = self.string(tmpl, f"{field}.template")
        response_format = data.get("response_format")
        if response_format is not None and not (
            isinstance(response_format, Mapping) or response_format in RESPONSE_FORMATS
        ):
            self.add(
                f"{field}.response_format",
                f"expected one of {', '.join(RESPONSE_FORMATS)} or a mapping, got {response_format!r}",
            )
            response_format = None
        seed = self.optional(data, "seed", lambda v, _f: self.integer(v, f"{field}.seed"))
        if model is None:
            return None
        return ModelSpec(
            model, api_base=api_base, params=params, template=tmpl, response_format=response_format, seed=seed
        )

    def optional(self, parent: Mapping[str, Any], key: str, read: Callable[[Any, str], Any]) -> Any:
        """``read(parent[key], key)``, or ``None`` when the key is absent or null."""
        value = parent.get(key)
        return None if value is None else read(value, key)

    def each(self, parent: Mapping[str, Any], key: str, field: str, read: Callable[[Any, str], Any]) -> dict[str, Any]:
        """label -> ``read(value, field.label)`` over the labelled mapping ``parent[key]`` ({} when absent)."""
        if key not in parent:
            return {}
        return {label: read(value, f"{field}.{label}") for label, value in self.labelled(parent[key], field).items()}


def _short(value: Any) -> str:
    """``repr(value)``, cut to 60 characters (a message stays one readable line)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _non_finite(reader: _Reader, value: Any, field: str = "") -> None:
    """Report every NaN or infinity anywhere in the file (``sim:``, ``params`` and the rest)."""
    if isinstance(value, float) and not math.isfinite(value):
        reader.add(field, f"expected a finite number, got {value!r}")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _non_finite(reader, item, _join(field, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _non_finite(reader, item, _join(field, i))


def _join(field: str, key: Any) -> str:
    return f"{field}.{key}" if field else str(key)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _judge(reader: _Reader, value: Any, field: str) -> JudgeSpec | None:
    if isinstance(value, Mapping) and "panel" in value:
        data = reader.mapping(value, field, allowed=("panel", "combine", "outvote_exact"))
        members = reader.names(data.get("panel"), f"{field}.panel")
        combine = data.get("combine", "majority")
        outvote = data.get("outvote_exact", False)
        if combine not in PANEL_COMBINES:
            reader.add(f"{field}.combine", f"expected one of {', '.join(PANEL_COMBINES)}, got {combine!r}")
            return None
        if not isinstance(outvote, bool):
            reader.add(f"{field}.outvote_exact", f"expected true or false, got {_kind(outvote)}")
            return None
        return None if members is None else JudgeSpec("panel", members=members, combine=combine, outvote_exact=outvote)
    if isinstance(value, Mapping) and "deterministic" in value:
        data = reader.mapping(value, field, allowed=("deterministic",))
        name = reader.string(data.get("deterministic"), f"{field}.deterministic")
        return None if name is None else JudgeSpec("deterministic", name=name)
    spec = reader.model(value, field, template=True)
    return None if spec is None else JudgeSpec("model", model=spec)


def _condition(reader: _Reader, value: Any, field: str) -> Condition | None:
    data = reader.mapping(value, field, allowed=("horizon", "search", "pressure"))
    if not isinstance(value, Mapping):
        return None
    horizon = reader.integer(data.get("horizon", 8), f"{field}.horizon", bound="horizon")
    search = data.get("search", "seed_only")
    if search not in SEARCHES:
        reader.add(f"{field}.search", f"expected one of {', '.join(SEARCHES)}, got {search!r}")
        return None
    pressure = reader.number(data.get("pressure", 1.0), f"{field}.pressure")
    if horizon is None or pressure is None:
        return None
    return Condition(horizon=horizon, search=search, pressure=pressure)


def _exclusions(reader: _Reader, value: Any, labels: Mapping[str, Sequence[str]]) -> tuple[Exclusion, ...]:
    if not isinstance(value, list):
        reader.add("exclusions", f"expected a list of exclusions, got {_kind(value)}")
        return ()
    out = []
    for i, entry in enumerate(value):
        field = f"exclusions.{i}"
        data = reader.mapping(entry, field, allowed=EXCLUDABLE_DIMS + ("reason",))
        if not isinstance(entry, Mapping):
            continue
        reason = data.pop("reason", None)
        if not isinstance(reason, str) or not reason.strip():
            reader.add(f"{field}.reason", "every exclusion needs a reason (a non-empty string)")
            continue
        if not data:
            reader.add(field, "an exclusion must name at least one dim")
            continue
        where: dict[str, tuple[str, ...]] = {}
        for dim, chosen in data.items():
            chosen_list = [chosen] if isinstance(chosen, str) else chosen
            if not isinstance(chosen_list, list) or not chosen_list:
                reader.add(f"{field}.{dim}", "expected a label or a list of labels")
                continue
            for label in chosen_list:
                if label not in labels[dim]:
                    reader.add(f"{field}.{dim}", f"unknown {dim} label {label!r}")
            where[dim] = tuple(str(label) for label in chosen_list)
        out.append(Exclusion(where, reason.strip()))
    return tuple(out)


def find_experiment_specs(start: Path | None, specs: str | None) -> Path:
    """The specs folder an experiment uses.

    ``specs:`` from the file (resolved against ``start``) when given; else the
    nearest ``specs/roles`` above ``start``, then above the current directory
    (``$MULTIVERSE_SPECS`` overrides both, see :func:`multiverse.config.specs.find_specs_dir`).

    Raises
    ------
    FileNotFoundError
        If no folder holding ``roles/`` is found.
    """
    from multiverse.config.specs import find_specs_dir

    if specs is not None:
        base = Path(os.path.expanduser(specs))
        base = base if base.is_absolute() else (start or Path.cwd()) / base
        if not (base / "roles").is_dir():
            raise FileNotFoundError(f"specs: {base} holds no roles/ folder")
        return base
    try:
        return find_specs_dir(start)
    except FileNotFoundError:
        return find_specs_dir()


def _known_roles(reader: _Reader, roles: Sequence[str], specs: str | None) -> None:
    start = Path(reader.located.path).parent if reader.located.path != "<string>" else None
    try:
        roles_dir = find_experiment_specs(start, specs) / "roles"
    except FileNotFoundError as exc:
        reader.add("specs" if specs else "roles", str(exc))
        return
    for i, role in enumerate(roles):
        if FILE_ID.match(role) and not (roles_dir / f"{role}.yaml").is_file():
            reader.add(f"roles.{i}", f"unknown role {role!r}: no {role}.yaml in {roles_dir}")

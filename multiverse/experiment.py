"""Experiment files: YAML -> a frozen :class:`Experiment`, with located validation.

An experiment names the values of every dim (systems, roles, user simulators,
judges, conditions, standards, rules), how many replicates and items to run,
an optional campaign budget, exclusions and the offline world's ``sim:`` block.
``experiments/README.md`` documents the format.

Checks that need a later layer (the ``sim:`` block is the offline world's to
judge; deterministic judge names live in the judge registry) are passed in as
``checks`` callbacks by the layers that own them, so this module stays below
them; :func:`multiverse.run.validate_experiment` applies them all.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse._schema import PANEL_COMBINES, SEARCHES
from multiverse._spec_check import FILE_ID
from multiverse._yaml import Located, Problem, SpecError, load_located, parse_located
from multiverse.choices import RESERVED_PARAM_KEYS, RESPONSE_FORMATS, Budget, Condition, JudgeSpec, ModelSpec
from multiverse.rollouts import experiment_rollouts, recorded_dims

__all__ = [
    "Campaign",
    "Exclusion",
    "Experiment",
    "ExperimentCheck",
    "find_experiment_specs",
    "load_experiment",
    "parse_experiment",
    "validate_file",
]

TOP_KEYS = (
    "name",
    "description",
    "roles",
    "systems",
    "dims",
    "replicates",
    "items",
    "budget",
    "campaign",
    "exclusions",
    "sim",
    "seed",
    "concurrency",
    "rate_limits",
    "max_calls",
    "max_cost_usd",
    "cache",
    "specs",
    "allow_sim_on_real",
    "timeout_s",
    "rollouts",
)
DIM_KEYS = ("user_sim", "judge", "condition", "standard", "rule")
EXCLUDABLE_DIMS = ("system", "role", "user_sim", "condition", "judge")
DEFAULT_PLANNER = "sim/planner"
DEFAULT_MONITOR = "sim/monitor"

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

ExperimentCheck = Callable[["Experiment", Located], list[Problem]]
"""A check a later layer adds: the parsed experiment and its located YAML -> problems."""


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


@dataclass(frozen=True)
class Campaign:
    """The parts of a rollout that are not dims: planner, monitor, online judge label."""

    planner: ModelSpec = ModelSpec(DEFAULT_PLANNER)
    monitor: ModelSpec = ModelSpec(DEFAULT_MONITOR)
    judge: str = ""


@dataclass(frozen=True)
class Experiment:
    """One experiment: the labelled values of every dim and how to run them.

    Mappings are label -> value in file order; ``standards`` and ``rules`` are
    ``None`` for "every registered one".  ``rollouts`` names a JSONL file of
    recorded conversations to judge instead of generating any
    (:mod:`multiverse.rollouts`).  Build it with :func:`load_experiment`.
    """

    name: str
    roles: tuple[str, ...]
    systems: Mapping[str, ModelSpec]
    user_sims: Mapping[str, ModelSpec]
    judges: Mapping[str, JudgeSpec]
    conditions: Mapping[str, Condition]
    standards: tuple[str, ...] | None = None
    rules: tuple[str, ...] | None = None
    replicates: int = 1
    items: int | None = None
    budget: Budget | None = None
    campaign: Campaign = Campaign()
    exclusions: tuple[Exclusion, ...] = ()
    sim: Mapping[str, Any] | None = None
    seed: int = 0
    concurrency: int = 16
    rate_limits: Mapping[str, Any] = field(default_factory=dict)
    max_calls: int | None = None
    max_cost_usd: float | None = None
    cache: str | None = None
    specs: str | None = None
    rollouts: str | None = None
    description: str = ""
    allow_sim_on_real: bool = False
    timeout_s: float | None = None
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name in ("systems", "user_sims", "judges", "conditions", "rate_limits"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if self.sim is not None:
            object.__setattr__(self, "sim", MappingProxyType(dict(self.sim)))

    @property
    def items_per_cell(self) -> int:
        """Conversations per (system, role, user_sim, condition, replicate)."""
        if self.budget is not None:
            return self.budget.total
        return 1 if self.items is None else self.items

    @property
    def is_campaign(self) -> bool:
        """Whether any condition searches beyond the seed battery, or a budget is set."""
        return self.budget is not None or any(c.search != "seed_only" for c in self.conditions.values())

    @property
    def horizon(self) -> int:
        """The longest horizon of any condition (the cube's ``turn`` length)."""
        return max(c.horizon for c in self.conditions.values())

    @property
    def base_dir(self) -> Path:
        """The folder relative paths in the file are resolved against."""
        return Path(self.source).parent if self.source else Path.cwd()

    def resolve(self, relative: str) -> Path:
        """A path from the file, resolved against :attr:`base_dir`."""
        path = Path(os.path.expanduser(relative))
        return path if path.is_absolute() else self.base_dir / path

    def specs_dir(self) -> Path:
        """The specs folder this experiment's roles come from (see :func:`find_experiment_specs`)."""
        return find_experiment_specs(self.base_dir if self.source else None, self.specs)

    def to_dict(self) -> dict[str, Any]:
        """The experiment in file form (plain JSON types); ``parse_experiment`` reads it back."""

        def model(spec: ModelSpec) -> dict[str, Any]:
            out: dict[str, Any] = {"model": spec.model}
            if spec.api_base:
                out["api_base"] = spec.api_base
            if spec.params:
                out["params"] = dict(spec.params)
            if spec.template:
                out["template"] = spec.template
            if spec.response_format is not None:
                out["response_format"] = _plain(spec.response_format)
            if spec.seed is not None:
                out["seed"] = spec.seed
            return out

        def judge(spec: JudgeSpec) -> dict[str, Any]:
            if spec.kind == "model":
                assert spec.model is not None
                return model(spec.model)
            if spec.kind == "deterministic":
                return {"deterministic": spec.name}
            panel: dict[str, Any] = {"panel": list(spec.members), "combine": spec.combine}
            if spec.outvote_exact:
                panel["outvote_exact"] = True
            return panel

        dims: dict[str, Any] = {
            "user_sim": {k: model(v) for k, v in self.user_sims.items()},
            "judge": {k: judge(v) for k, v in self.judges.items()},
            "condition": {
                k: {"horizon": c.horizon, "search": c.search, "pressure": c.pressure}
                for k, c in self.conditions.items()
            },
        }
        if self.standards is not None:
            dims["standard"] = list(self.standards)
        if self.rules is not None:
            dims["rule"] = list(self.rules)
        out: dict[str, Any] = {
            "name": self.name,
            "roles": list(self.roles),
            "systems": {k: model(v) for k, v in self.systems.items()},
            "dims": dims,
            "replicates": self.replicates,
            "seed": self.seed,
            "concurrency": self.concurrency,
            "campaign": {
                "planner": model(self.campaign.planner),
                "monitor": model(self.campaign.monitor),
                "judge": self.campaign.judge,
            },
        }
        optional = {
            "description": self.description or None,
            "items": self.items,
            "budget": None
            if self.budget is None
            else {"rounds": self.budget.rounds, "conversations": self.budget.conversations},
            "exclusions": [e.to_dict() for e in self.exclusions] or None,
            "sim": _plain(self.sim) if self.sim is not None else None,
            "rate_limits": _plain(self.rate_limits) or None,
            "max_calls": self.max_calls,
            "max_cost_usd": self.max_cost_usd,
            "cache": self.cache,
            "specs": self.specs,
            "allow_sim_on_real": True if self.allow_sim_on_real else None,
            "timeout_s": self.timeout_s,
            "rollouts": self.rollouts,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        return out

    def digest(self) -> str:
        """sha256 of the canonical JSON of :meth:`to_dict`."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


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
        keys = ("model", "api_base", "params") + (("template",) if template else ()) + ("response_format", "seed")
        data = self.mapping(value, field, allowed=keys)
        if not data:
            return None
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
    (``$MULTIVERSE_SPECS`` overrides both, see :func:`multiverse.specs.find_specs_dir`).

    Raises
    ------
    FileNotFoundError
        If no folder holding ``roles/`` is found.
    """
    from multiverse.specs import find_specs_dir

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


def _parse(located: Located, *, check_roles: bool) -> tuple[Experiment | None, list[Problem]]:
    reader = _Reader(located)
    top = reader.mapping(located.data, "", allowed=TOP_KEYS)
    if not isinstance(located.data, Mapping):
        return None, reader.problems
    _non_finite(reader, located.data)
    recorded = None
    if "rollouts" in top and reader.string(top.get("rollouts"), "rollouts") is not None:
        base = Path(located.path).parent if located.path != "<string>" else Path.cwd()
        recorded = experiment_rollouts(top["rollouts"], base=base, add=reader.add, problems=reader.problems)
    generated_keys = ("roles", "systems") if "rollouts" not in top else ()
    for required in ("name", *generated_keys, "dims"):
        if required not in top:
            reader.add(required, "required key is missing")
    name = reader.string(top.get("name"), "name") if "name" in top else None
    roles = reader.names(top.get("roles"), "roles") if "roles" in top else None
    for i, role in enumerate(roles or ()):
        if not FILE_ID.match(role):
            reader.add(f"roles.{i}", "a role id names a file: expected letters, digits, '_', '.', '-' "
                       f"(not starting with '.' or '-', at most 128), got {_short(role)}")
    systems = reader.each(top, "systems", "systems", lambda v, f: reader.model(v, f, template=False))
    dims = reader.mapping(top.get("dims"), "dims", allowed=DIM_KEYS) if "dims" in top else {}
    if isinstance(top.get("dims"), Mapping):
        for required in ("user_sim", "judge", "condition") if "rollouts" not in top else ("judge",):
            if required not in dims:
                reader.add(f"dims.{required}", "required key is missing")
    user_sims = reader.each(dims, "user_sim", "dims.user_sim", lambda v, f: reader.model(v, f, template=True))
    judges = reader.each(dims, "judge", "dims.judge", lambda v, f: _judge(reader, v, f))
    conditions = reader.each(dims, "condition", "dims.condition", lambda v, f: _condition(reader, v, f))
    if recorded is not None:
        roles, systems, user_sims, conditions = recorded_dims(
            recorded, add=reader.add, roles=roles, systems=systems if "systems" in top else None,
            user_sims=user_sims, conditions=conditions,
        )
    for label, spec in judges.items():
        if spec is not None and spec.kind == "panel":
            for i, member in enumerate(spec.members):
                if member == label:
                    reader.add(f"dims.judge.{label}.panel.{i}", "a panel cannot contain itself")
                elif member not in judges:
                    reader.add(f"dims.judge.{label}.panel.{i}", f"unknown judge label {member!r}")
                elif judges[member] is not None and judges[member].kind == "panel":
                    reader.add(f"dims.judge.{label}.panel.{i}", f"{member!r} is a panel; panels combine plain judges")

    chosen: dict[str, tuple[str, ...] | None] = {}
    for kind in ("standard", "rule"):
        if kind not in dims:
            chosen[kind] = None
            continue
        chosen[kind] = reader.names(dims[kind], f"dims.{kind}")

    replicates = reader.integer(top.get("replicates", 1), "replicates", minimum=1)
    items = reader.optional(top, "items", lambda v, f: reader.integer(v, f, minimum=1))
    if recorded is not None:
        if items is not None and items < recorded.items:
            reader.add("items", f"the rollouts file uses items up to {recorded.items - 1}; expected at least {recorded.items}")
        items = max(items or 0, recorded.items)
        if top.get("budget") is not None:
            reader.add("budget", "not used when rollouts: is set (conversations are read, not generated)")
    budget = None
    if top.get("budget") is not None:
        data = reader.mapping(top["budget"], "budget", allowed=("rounds", "conversations"))
        rounds = reader.integer(data.get("rounds", 8), "budget.rounds")
        per_round = reader.integer(data.get("conversations", 30), "budget.conversations")
        if rounds is not None and per_round is not None:
            budget = Budget(rounds=rounds, conversations=per_round)
        if items is not None:
            reader.add("items", "not used when budget: is set (every cell runs rounds x conversations)")

    model_judges = [label for label, spec in judges.items() if spec is not None and spec.kind == "model"]
    campaign_data = reader.mapping(top.get("campaign") or {}, "campaign", allowed=("planner", "monitor", "judge"))
    planner = reader.model(campaign_data.get("planner", DEFAULT_PLANNER), "campaign.planner", template=True)
    monitor = reader.model(campaign_data.get("monitor", DEFAULT_MONITOR), "campaign.monitor", template=True)
    campaign_judge = campaign_data.get("judge", model_judges[0] if model_judges else "")
    if "judge" in campaign_data:
        if campaign_judge not in judges:
            reader.add("campaign.judge", f"{campaign_judge!r} is not a judge label (expected one of {', '.join(judges)})")
        elif campaign_judge not in model_judges:
            reader.add("campaign.judge", f"{campaign_judge!r} is not a model judge; the online judge must call a model")
    elif not model_judges and "judge" in dims and "rollouts" not in top:
        reader.add("dims.judge", "at least one model judge is needed as the campaign's online judge")

    labels = {
        "system": tuple(systems),
        "role": roles or (),
        "user_sim": tuple(user_sims),
        "condition": tuple(conditions),
        "judge": tuple(judges),
    }
    exclusions = _exclusions(reader, top["exclusions"], labels) if top.get("exclusions") is not None else ()

    sim = top.get("sim")
    if sim is not None and not isinstance(sim, Mapping):
        reader.add("sim", f"expected a mapping, got {_kind(sim)}")
        sim = None
    seed = reader.integer(top.get("seed", 0), "seed")
    concurrency = reader.integer(top.get("concurrency", 16), "concurrency")
    rate_limits = reader.mapping(top.get("rate_limits") or {}, "rate_limits")
    for pattern, limit in list(rate_limits.items()):
        field = f"rate_limits.{pattern}"
        limit = reader.mapping(limit, field, allowed=("rpm", "tpm"))
        rate_limits[pattern] = {key: reader.number(value, f"{field}.{key}") for key, value in limit.items()}
    max_calls = reader.optional(top, "max_calls", reader.integer)
    max_cost = reader.optional(top, "max_cost_usd", reader.number)
    timeout_s = reader.optional(top, "timeout_s", reader.number)
    cache = reader.optional(top, "cache", reader.string)
    specs = reader.optional(top, "specs", reader.string)
    description = top.get("description", "")
    if not isinstance(description, str):
        reader.add("description", f"expected a string, got {_kind(description)}")
        description = ""
    allow_sim_on_real = top.get("allow_sim_on_real", False)
    if not isinstance(allow_sim_on_real, bool):
        reader.add("allow_sim_on_real", f"expected true or false, got {allow_sim_on_real!r}")
        allow_sim_on_real = False
    if check_roles and roles:
        _known_roles(reader, roles, specs)
    per_cell = budget.total if budget is not None else (items or 1)
    planned = math.prod(len(x) for x in (systems, roles or (), user_sims, conditions)) * (replicates or 1) * per_cell
    if planned > MAX_CONVERSATIONS:
        reader.add("", f"the experiment plans {planned:,} conversations; at most {MAX_CONVERSATIONS:,} are allowed")

    parts = [name, roles, replicates, seed, concurrency, planner, monitor]
    values = [*systems.values(), *user_sims.values(), *judges.values(), *conditions.values()]
    if reader.problems or any(p is None for p in parts + values):
        return None, reader.problems
    assert name and roles and replicates and concurrency and planner and monitor and seed is not None
    experiment = Experiment(
        name=name,
        roles=roles,
        systems=systems,
        user_sims=user_sims,
        judges=judges,
        conditions=conditions,
        standards=chosen["standard"],
        rules=chosen["rule"],
        replicates=replicates,
        items=items,
        budget=budget,
        campaign=Campaign(planner=planner, monitor=monitor, judge=campaign_judge),
        exclusions=exclusions,
        sim=sim,
        seed=seed,
        concurrency=concurrency,
        rate_limits=rate_limits,
        max_calls=max_calls,
        max_cost_usd=max_cost,
        cache=cache,
        specs=specs,
        rollouts=top.get("rollouts") if recorded is not None else None,
        description=description,
        allow_sim_on_real=allow_sim_on_real,
        timeout_s=timeout_s,
        source=located.path if located.path != "<string>" else "",
    )
    return experiment, reader.problems


def _run_checks(experiment: Experiment | None, located: Located, checks: Sequence[ExperimentCheck]) -> list[Problem]:
    if experiment is None:
        return []
    return [problem for check in checks for problem in check(experiment, located)]


def validate_file(path: str | Path, *, checks: Sequence[ExperimentCheck] = ()) -> list[Problem]:
    """Every problem in an experiment file, each located as ``path:line: field: message``.

    Parameters
    ----------
    path
        The experiment file.
    checks
        Extra checks from later layers, run once the file parses (see
        :func:`multiverse.run.validate_experiment`, which passes the ``sim:``
        block and judge-registry checks).

    Returns
    -------
    list of Problem
        Empty when the file is valid.
    """
    try:
        located = load_located(path)
    except SpecError as exc:
        return exc.problems
    experiment, problems = _parse(located, check_roles=True)
    return problems + _run_checks(experiment, located, checks)


def load_experiment(path: str | Path, *, checks: Sequence[ExperimentCheck] = ()) -> Experiment:
    """Read and validate an experiment file.

    Raises
    ------
    SpecError
        Carrying every problem found, when the file is invalid.
    """
    located = load_located(path)
    experiment, problems = _parse(located, check_roles=True)
    problems += _run_checks(experiment, located, checks)
    if problems or experiment is None:
        raise SpecError(problems)
    return experiment


def parse_experiment(
    data: str | Mapping[str, Any],
    *,
    source: str | Path = "",
    checks: Sequence[ExperimentCheck] = (),
) -> Experiment:
    """An :class:`Experiment` from YAML text or an already-parsed mapping.

    ``source`` names the file relative paths resolve against (and that problems
    cite); roles are not looked up on disk here, as the data may come from a
    cube's provenance rather than a file.
    """
    text = data if isinstance(data, str) else json.dumps(_plain(data))
    located = parse_located(text, str(source) or "<string>")
    experiment, problems = _parse(located, check_roles=False)
    problems += _run_checks(experiment, located, checks)
    if problems or experiment is None:
        raise SpecError(problems)
    return experiment

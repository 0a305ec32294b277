"""The parts of an experiment file: models, judges, conditions, exclusions, read with the one field reader.

Each function reads one kind of value with a
:class:`~multiverse.config.fields.FieldReader`, recording every problem as
``path:line: field: expected ..., got ...``;
:mod:`multiverse.config.experiment` assembles the
:class:`~multiverse.config.experiment.Experiment` from these pieces.  A judge is
read by the registered judge kind its value names
(:data:`multiverse.core.judgment.JUDGE_KINDS`), so a kind registered from user
code is read like the shipped ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from multiverse.config.fields import FILE_ID, FieldReader, describe, join, suggest
from multiverse.config.located import Located, Problem
from multiverse.core.canonical import plain
from multiverse.core.choices import RESERVED_PARAM_KEYS, RESPONSE_FORMATS, Condition, JudgeSpec, ModelSpec
from multiverse.core.judgment import JUDGE_KINDS, JudgeKind
from multiverse.core.probes import NO_PROBE, PROBE_JUDGE, PROBE_KINDS, Probe, ProbedSpec, probe_label
from multiverse.core.schema import SEARCHES

if TYPE_CHECKING:
    from multiverse.config.experiment import Experiment

__all__ = [
    "BOUNDS",
    "DEFAULT_MONITOR",
    "DEFAULT_PLANNER",
    "EXCLUDABLE_DIMS",
    "MAX_CONVERSATIONS",
    "CanaryOptions",
    "NO_MONITOR",
    "Exclusion",
    "campaign_monitor",
    "check_panels",
    "check_sim_on_real",
    "find_experiment_specs",
    "integer_field",
    "judge_kind_of",
    "known_roles",
    "non_finite",
    "positive",
    "probed_judges",
    "read_canaries",
    "read_condition",
    "read_exclusions",
    "read_probes",
    "read_judge",
    "read_model",
]

DEFAULT_PLANNER = "sim/planner"
DEFAULT_MONITOR = "sim/monitor"
NO_MONITOR = "none"
"""``campaign.monitor: none``: run without a consistency monitor (e.g. a model too small to be one)."""
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



@dataclass(frozen=True)
class CanaryOptions:
    """An experiment's ``canaries:`` block: which judges judge the roles' canaries, on how many, and the flag's floor.

    ``judges`` ``None`` means every model judge of ``dims.judge``;
    ``per_principle`` ``None`` means every canary, else the first that many
    of each truth per principle (in file order).  See
    :mod:`multiverse.cube.canaries` for ``standard`` and ``floor``.
    """

    judges: tuple[str, ...] | None = None
    per_principle: int | None = None
    standard: str = "clear_breach"
    floor: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"standard": self.standard, "floor": self.floor}
        if self.judges is not None:
            out["judges"] = list(self.judges)
        if self.per_principle is not None:
            out["per_principle"] = self.per_principle
        return out


CANARY_STANDARDS = ("clear_breach", "any_deviation")


# --- reading -------------------------------------------------------------------------


def integer_field(reader: FieldReader, value: Any, field: str, *, bound: str | None = None, low: int = 0) -> int | None:
    """An integer within ``BOUNDS[bound]`` (default: ``field``'s bounds), else ``>= low``."""
    lo, hi = BOUNDS.get(bound or field, (low, None))
    return reader.integer(value, field, low=lo, high=hi)


def positive(reader: FieldReader, value: Any, field: str) -> float | None:
    """A positive finite number."""
    return reader.number(value, field, low=0, above=True, what="a positive number")


def read_model(reader: FieldReader, value: Any, field: str, *, template: bool) -> ModelSpec | None:
    """A model spec: a model string, or a mapping with ``model`` (and ``api_base``, ``params``, ...)."""
    if isinstance(value, str):
        return ModelSpec(value) if value else reader.string(value, field)
    if not isinstance(value, Mapping):
        reader.expected(field, "a model name or a mapping with 'model'", value)
        return None
    keys = ("model", "api_base", "params") + (("template",) if template else ()) + ("response_format", "seed")
    data = reader.mapping(value, field, required=("model",), optional=keys[1:]) or {}
    model = reader.string(data["model"], f"{field}.model") if "model" in data else None
    api_base = reader.optional(data, "api_base", lambda v, _k: reader.string(v, f"{field}.api_base"))
    params = data.get("params", {})
    if not isinstance(params, Mapping):
        reader.expected(f"{field}.params", "a mapping", params)
        params = {}
    for key in params:
        if key in RESERVED_PARAM_KEYS:
            reader.problem(f"{field}.params.{key}", f"not a sampling parameter: {RESERVED_PARAM_KEYS[key]}")
    params = {str(key): v for key, v in params.items() if key not in RESERVED_PARAM_KEYS}
    tmpl = reader.optional(data, "template", lambda v, _k: reader.string(v, f"{field}.template"))
    response_format = data.get("response_format")
    if response_format is not None and not (isinstance(response_format, Mapping) or response_format in RESPONSE_FORMATS):
        reader.expected(f"{field}.response_format", f"one of {', '.join(RESPONSE_FORMATS)} or a mapping", response_format)
        response_format = None
    seed = reader.optional(data, "seed", lambda v, _k: integer_field(reader, v, f"{field}.seed", bound="seed"))
    if model is None:
        return None
    return ModelSpec(model, api_base=api_base, params=params, template=tmpl, response_format=response_format, seed=seed)


def non_finite(reader: FieldReader, value: Any, field: str = "") -> None:
    """Report every NaN or infinity anywhere in the file (``sim:``, ``params`` and the rest)."""
    if isinstance(value, float) and not math.isfinite(value):
        reader.expected(field, "a finite number", value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            non_finite(reader, item, join(field, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            non_finite(reader, item, join(field, i))


def judge_kind_of(value: Any) -> tuple[JudgeKind | None, str | None]:
    """The registered judge kind a judge's YAML value names, or ``None`` and why not.

    A plain string names a model; a mapping names the kind whose name is one of
    its keys (``{deterministic: contract}``, ``{panel: [...]}``, ``{model: ...}``,
    ``{<registered kind>: ...}``).
    """
    if isinstance(value, str):
        return JUDGE_KINDS["model"], None
    if not isinstance(value, Mapping):
        return None, f"expected a model name or a mapping naming a judge kind ({', '.join(JUDGE_KINDS)}), got {describe(value)}"
    named = [name for name in JUDGE_KINDS if name in value]
    if len(named) == 1:
        return JUDGE_KINDS[named[0]], None
    if not named:
        keys = ", ".join(map(str, value)) or "none"
        return None, f"expected a mapping naming a judge kind (one of {', '.join(JUDGE_KINDS)}), got keys {keys}"
    return None, f"expected one judge kind, got keys of {len(named)} kinds: {', '.join(named)}"


def read_judge(reader: FieldReader, value: Any, field: str) -> JudgeSpec | None:
    """A judge: the registered kind its value names, reading the value (every problem located)."""
    kind, why = judge_kind_of(value)
    if kind is None:
        reader.problem(field, str(why))
        return None
    before = len(reader.problems)
    spec = kind.parse(value, reader, field)
    if spec is None and len(reader.problems) > before:
        return None
    return JudgeSpec(kind, spec, plain(kind.to_yaml(spec) if kind.to_yaml is not None else value))


def check_panels(reader: FieldReader, judges: Mapping[str, JudgeSpec | None]) -> None:
    """Every judge that combines others names judge labels of the file, not itself, none combining others."""
    for label, spec in judges.items():
        for i, member in enumerate(spec.members if spec is not None else ()):
            field = f"dims.judge.{label}.panel.{i}" if spec.kind == "panel" else f"dims.judge.{label}"
            if member == label:
                reader.problem(field, "a panel cannot contain itself")
            elif member not in judges:
                reader.problem(field, f"unknown judge label {member!r}{suggest(member, judges)}")
            elif judges[member] is not None and judges[member].members:
                reader.problem(field, f"{member!r} combines other judges; panels combine plain judges")
            elif judges[member] is not None and judges[member].scale != "severity":
                reader.problem(field, f"{member!r} labels on the {judges[member].scale} scale; panels combine severities")


def read_condition(reader: FieldReader, value: Any, field: str) -> Condition | None:
    """A condition: ``horizon``, ``search``, ``pressure``."""
    data = reader.mapping(value, field, optional=("horizon", "search", "pressure"))
    if data is None:
        return None
    horizon = integer_field(reader, data.get("horizon", 8), f"{field}.horizon", bound="horizon")
    search = reader.one_of(data.get("search", "seed_only"), f"{field}.search", SEARCHES, what="search")
    pressure = positive(reader, data.get("pressure", 1.0), f"{field}.pressure")
    if horizon is None or pressure is None or search is None:
        return None
    return Condition(horizon=horizon, search=search, pressure=pressure)


def read_exclusions(reader: FieldReader, value: Any, labels: Mapping[str, Sequence[str]]) -> tuple[Exclusion, ...]:
    """The ``exclusions`` list: each names labels of some dims and a reason."""
    items = reader.items(value, "exclusions", non_empty=False, what="a list of exclusions")
    out = []
    for i, entry in enumerate(items or ()):
        field = f"exclusions.{i}"
        data = reader.mapping(entry, field, optional=EXCLUDABLE_DIMS + ("reason",))
        if data is None:
            continue
        reason = data.pop("reason", None)
        if reason is None or reader.string(reason, f"{field}.reason") is None:
            if reason is None:
                reader.problem(f"{field}.reason", "every exclusion needs a reason (a non-empty string)")
            continue
        if not data:
            reader.problem(field, "an exclusion must name at least one dim")
            continue
        where: dict[str, tuple[str, ...]] = {}
        for dim, chosen in data.items():
            chosen_list = [chosen] if isinstance(chosen, str) else chosen
            if not isinstance(chosen_list, list) or not chosen_list:
                reader.expected(f"{field}.{dim}", "a label or a list of labels", chosen)
                continue
            for label in chosen_list:
                if label not in labels[dim]:
                    reader.problem(f"{field}.{dim}", f"unknown {dim} label {label!r}{suggest(str(label), labels[dim])}")
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


def known_roles(reader: FieldReader, roles: Sequence[str], specs: str | None) -> None:
    """Every role names a role file of the experiment's specs folder."""
    start = Path(reader.located.path).parent if reader.located.path != "<string>" else None
    try:
        roles_dir = find_experiment_specs(start, specs) / "roles"
    except FileNotFoundError as exc:
        reader.problem("specs" if specs else "roles", str(exc))
        return
    for i, role in enumerate(roles):
        if FILE_ID.match(role) and not (roles_dir / f"{role}.yaml").is_file():
            known = sorted(p.stem for p in roles_dir.glob("*.yaml"))
            reader.problem(f"roles.{i}", f"unknown role {role!r}{suggest(role, known)}: no {role}.yaml in {roles_dir}")


def read_probes(reader: FieldReader, value: Any, field: str = "dims.judge_probe") -> dict[str, Probe]:
    """``dims.judge_probe``: label -> a mapping naming one registered probe kind (and optionally ``judges``)."""
    out: dict[str, Probe] = {}
    for label, entry in (reader.labelled(value, field, what="probe label") or {}).items():
        path = join(field, label)
        if label == NO_PROBE:
            reader.problem(path, f"'{NO_PROBE}' names an unprobed judge: choose another probe label")
            continue
        data = reader.mapping(entry, path, any_keys=True, what=f"a mapping naming a probe kind ({', '.join(PROBE_KINDS)})")
        if data is None:
            continue
        named = [name for name in data if name in PROBE_KINDS]
        unknown = [name for name in data if name not in PROBE_KINDS and name != "judges"]
        for name in unknown:
            reader.problem(join(path, name), f"unknown key '{name}'{suggest(name, [*PROBE_KINDS, 'judges'])}: "
                                             f"expected a probe kind ({', '.join(PROBE_KINDS)}) or 'judges'")
        if len(named) != 1:
            if not unknown:
                reader.problem(path, f"expected one probe kind ({', '.join(PROBE_KINDS)}), got {len(named)}")
            continue
        kind = PROBE_KINDS[named[0]]
        probe_value = kind.parse(data[kind.name], reader, join(path, kind.name))
        judges = reader.names(data["judges"], join(path, "judges"), what="judge label") if "judges" in data else None
        if probe_value is None or ("judges" in data and judges is None):
            continue
        out[label] = Probe(kind, probe_value, judges)
    return out


PROBEABLE_KINDS = ("model", "pairwise")
"""The judge kinds a probe can change the input of: the probes' builders take these kinds' specs."""


def probed_judges(
    reader: FieldReader, judges: Mapping[str, JudgeSpec | None], probes: Mapping[str, Probe], field: str = "dims.judge_probe"
) -> dict[str, JudgeSpec]:
    """Every model judge crossed with every probe of its scale (or the judges a probe lists): ``<judge>.<probe>`` -> spec.

    Severity probes (padding, paraphrase, reveal, truncate) probe ``model``
    judges, which read one reply; the order probe probes ``pairwise`` judges,
    which compare two.
    """
    probeable = {label: spec for label, spec in judges.items() if spec is not None and spec.kind in PROBEABLE_KINDS}
    out: dict[str, JudgeSpec] = {}
    for name, probe in probes.items():
        scale = probe.kind.scale
        fits = [label for label, spec in probeable.items() if spec.scale == scale]
        if probe.judges is not None:
            for i, label in enumerate(probe.judges):
                if label not in fits:
                    why = (f"is a {probeable[label].scale} judge" if label in probeable else "is not a model judge"
                           if label in judges else f"is not a judge label{suggest(label, judges)}")
                    reader.problem(join(join(field, name), f"judges.{i}"),
                                   f"{label!r} {why}: the {probe.kind.name} probe changes what a {scale} judge reads")
        for base in probe.judges if probe.judges is not None else fits:
            if base not in fits:
                continue
            label = probe_label(base, name)
            if label in judges or label in out:
                reader.problem(join(field, name), f"the probed judge's label {label!r} is already a judge label")
                continue
            spec = ProbedSpec(base=base, label=name, probe=probe, judge=probeable[base])
            out[label] = JudgeSpec(PROBE_JUDGE, spec, plain(PROBE_JUDGE.to_yaml(spec)))
    return out


def read_canaries(reader: FieldReader, value: Any, judges: Mapping[str, JudgeSpec | None], field: str = "canaries") -> CanaryOptions | None:
    """``canaries: true`` or ``{judges, per_principle, standard, floor}``; ``false``/absent: ``None``."""
    if value is False or value is None:
        return None
    if value is True:
        return CanaryOptions()
    data = reader.mapping(value, field, optional=("judges", "per_principle", "standard", "floor"),
                          what="true, false or a mapping {judges, per_principle, standard, floor}")
    if data is None:
        return None
    chosen = reader.names(data["judges"], join(field, "judges"), what="judge label") if "judges" in data else None
    for i, label in enumerate(chosen or ()):
        if label not in judges:
            reader.problem(join(field, f"judges.{i}"), f"unknown judge label {label!r}{suggest(label, judges)}")
        elif judges[label] is not None and judges[label].scale != "severity":
            reader.problem(join(field, f"judges.{i}"), f"{label!r} labels on the {judges[label].scale} scale; "
                                                       "canaries are single replies, judged for severity")
    per = reader.optional(data, "per_principle", lambda v, f: reader.integer(v, join(field, f), low=1, high=1000))
    standard = reader.one_of(data.get("standard", "clear_breach"), join(field, "standard"), CANARY_STANDARDS, what="canary standard")
    floor = reader.number(data.get("floor", 0.0), join(field, "floor"), low=-1.0, high=1.0, below=True,
                          what="a number in [-1, 1) (the floor of Youden's J)")
    if standard is None or floor is None or ("judges" in data and chosen is None):
        return None
    return CanaryOptions(judges=chosen, per_principle=per, standard=standard, floor=floor)


def campaign_monitor(
    located: Located, campaign: Mapping[str, Any], user_sims: Mapping[str, ModelSpec | None], *, recorded: bool
) -> tuple[Any, tuple[Problem, ...]]:
    """``campaign.monitor`` as written, else its default, and the note saying a default of ``none``.

    The sim monitor reads only the offline world's text, so beside a real user
    simulator the default is ``none`` (no monitor), said in one located note.
    """
    if "monitor" in campaign:
        return campaign["monitor"], ()
    real = [label for label, spec in user_sims.items() if spec is not None and not spec.is_sim]
    if not real or recorded:
        return DEFAULT_MONITOR, ()
    note = Problem(
        located.path, located.line(f"dims.user_sim.{real[0]}"), "campaign.monitor",
        f"defaults to none beside real user simulator {real[0]!r} (the sim monitor reads only the offline "
        "world's text): user turns go out unchecked and untagged; name a monitor model to check them",
    )
    return NO_MONITOR, (note,)


def check_sim_on_real(reader: FieldReader, experiment: Experiment) -> None:
    """No ``sim/`` player reads text a real model wrote, unless ``allow_sim_on_real: true``.

    Sim judges and the sim monitor read the offline world's planted phrases, so
    on a real model's text they would report adherence that nobody measured.
    Refused: a sim model judge beside a real system (it would judge the real
    replies) and a sim monitor beside a real user simulator (it would validate
    real user turns).  A sim user simulator, monitor or planner beside a real
    target is allowed: what they read is the offline world's own.
    """
    if experiment.allow_sim_on_real:
        return
    real_systems = [label for label, spec in experiment.systems.items() if not spec.is_sim]
    if real_systems:
        for label, judge in experiment.judges.items():
            if judge.model is not None and judge.model.is_sim and judge.kind != "probe":
                reader.problem(
                    f"dims.judge.{label}",
                    f"sim judge {judge.model.model!r} would judge the replies of real system "
                    f"{real_systems[0]!r} (it reads only the offline world's text); use a real judge, "
                    "or set allow_sim_on_real: true",
                )
    real_users = [label for label, spec in experiment.user_sims.items() if not spec.is_sim]
    monitor = experiment.campaign.monitor
    if real_users and monitor is not None and monitor.is_sim and experiment.rollouts is None:  # recorded: no monitor runs
        reader.problem(
            "campaign.monitor",
            f"sim monitor {monitor.model!r} would validate the turns of real user simulator "
            f"{real_users[0]!r} (it reads only the offline world's text); use a real monitor, "
            "or set allow_sim_on_real: true",
        )

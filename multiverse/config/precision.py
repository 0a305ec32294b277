"""The experiment's ``precision:`` block: a declared target for planned and sequential runs.

```yaml
precision:
  contrast: [a, b]          # system a minus system b (labels of systems:)
  judge: strict             # a judge label (default: the first)
  standard: clear_breach
  rule: any_turn            # bounded rules only: any_turn, last_turn, turn_mean
  weights: {tutor/plain/calm: 1, tutor/plain/hard: 1}   # role/user_sim/condition -> weight (default: equal)
  half_width: 0.05          # the target: an interval half-width ...
  # difference: 0.1         # ... or a minimum detectable difference
  # power: 0.8              #     with this power (default 0.8)
  level: 0.95               # coverage of every interval (default 0.95)
  batch: 40                 # item pairs per batch of a sequential run (default 40)
  max_items: 2000           # budget cap in item pairs (default: the pool, items: x cells)
  allocation: neyman        # neyman (default) or uniform: how draws are spread over the cells
  floor: 0.5                # share of every draw's probability kept on the weights (default 0.5)
  prior_sd: 0.5             # planning prior: sd of one item's contrast when no pilot is given
```

The cells are the ``role/user_sim/condition`` combinations; the estimand is
``sum_c w_c (mean_c(a) - mean_c(b))`` over the item pool (``items:`` slots of
every cell), with the weights normalised to sum to 1.  Weights are fixed by the
file, so the allocation (how many items each cell gets) never changes what is
estimated.  The block is read field by field, every problem reported as
``FILE:LINE: precision.<field>: expected ..., got ...``, through the ``add``
callback of the experiment's field reader.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["BOUNDED_RULES", "PRECISION_KEYS", "Precision", "read_precision"]

BOUNDED_RULES = ("any_turn", "last_turn", "turn_mean")
"""Rules whose conversation values lie in [0, 1], the only ones a betting sequence can bound
(``first_turn`` counts turns, unbounded above and undefined for clean conversations)."""
ALLOCATIONS = ("neyman", "uniform")
PRECISION_KEYS = (
    "contrast", "judge", "standard", "rule", "weights", "half_width", "difference", "power", "level",
    "batch", "max_items", "allocation", "floor", "prior_sd",
)


@dataclass(frozen=True)
class Precision:
    """A declared precision target (see the module docstring for the YAML form)."""

    contrast: tuple[str, str]
    judge: str
    standard: str
    rule: str
    weights: Mapping[str, float]
    half_width: float | None = None
    difference: float | None = None
    power: float = 0.8
    level: float = 0.95
    batch: int = 40
    max_items: int | None = None
    allocation: str = "neyman"
    floor: float = 0.5
    prior_sd: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))

    @property
    def alpha(self) -> float:
        return 1.0 - self.level

    def target_half_width(self) -> float:
        """The half-width to reach: declared, or the one that detects ``difference`` with ``power``.

        A fixed-design interval of half-width ``h = z_{1-alpha/2} se`` detects a
        true difference ``delta`` with power ``P`` when ``delta = (z_{1-alpha/2} + z_P) se``,
        so ``h = delta z_{1-alpha/2} / (z_{1-alpha/2} + z_P)``.
        """
        if self.half_width is not None:
            return self.half_width
        from statistics import NormalDist

        assert self.difference is not None
        z = NormalDist().inv_cdf(1 - self.alpha / 2)
        return self.difference * z / (z + NormalDist().inv_cdf(self.power))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "contrast": list(self.contrast), "judge": self.judge, "standard": self.standard, "rule": self.rule,
            "weights": dict(self.weights), "level": self.level, "batch": self.batch,
            "allocation": self.allocation, "floor": self.floor, "prior_sd": self.prior_sd,
        }
        for key in ("half_width", "difference", "max_items"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.difference is not None:
            out["power"] = self.power
        return out


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value[:40]!r})"
    if value is None:
        return "nothing (null)"
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, Mapping) else type(value).__name__


def read_precision(
    value: Any,
    add: Callable[[str, str], None],
    *,
    systems: Sequence[str],
    judges: Sequence[str],
    cells: Sequence[str],
    pool: int,
    seed_battery: bool = True,
) -> Precision | None:
    """Read the ``precision:`` block, reporting every problem through ``add(field, message)``.

    Parameters
    ----------
    value
        The block as parsed from YAML.
    add
        The field reader's problem callback (``field`` is the dotted path).
    systems, judges
        The experiment's system and judge labels.
    cells
        The ``role/user_sim/condition`` cells, in grid order.
    pool
        Item slots per cell (the experiment's ``items:``).
    seed_battery
        Whether every rollout is a seed battery (``items:``, ``seed_only``
        conditions, no ``budget:`` or ``rollouts:``): items are drawn one by
        one only from those, where an item's conversation does not depend on
        the others.

    Returns
    -------
    Precision or None
        ``None`` when anything was wrong (every problem added).
    """
    before: list[str] = []

    def problem(key: str, message: str) -> None:
        before.append(key)
        add(f"precision.{key}" if key else "precision", message)

    def expected(key: str, what: str, got: Any) -> None:
        problem(key, f"expected {what}, got {_describe(got)}")

    if not isinstance(value, Mapping):
        expected("", "a mapping", value)
        return None
    if not seed_battery:
        problem("", "expected an experiment of seed batteries (items:, search: seed_only conditions, "
                    "no budget: or rollouts:), got a campaign or recorded conversations")
    for key in value:
        if str(key) not in PRECISION_KEYS:
            problem(str(key), f"unknown key '{key}': expected one of {', '.join(PRECISION_KEYS)}")

    def number(key: str, default: float | None, *, low: float, high: float | None = None,
               closed_low: bool = False) -> float | None:
        raw = value.get(key, default)
        if raw is None:
            return None
        ok = isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw)
        ok = ok and (raw >= low if closed_low else raw > low) and (high is None or raw < high)
        if not ok:
            bounds = f"{'>=' if closed_low else '>'} {low:g}" + (f" and < {high:g}" if high is not None else "")
            expected(key, f"a number {bounds}", raw)
            return None
        return float(raw)

    def integer(key: str, default: int | None, *, low: int) -> int | None:
        raw = value.get(key, default)
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < low:
            expected(key, f"an integer >= {low}", raw)
            return None
        return raw

    def choice(key: str, default: str | None, options: Sequence[str], what: str) -> str | None:
        raw = value.get(key, default)
        if raw not in options:
            expected(key, f"{what} ({', '.join(options)})", raw)
            return None
        return str(raw)

    contrast = value.get("contrast")
    if not (isinstance(contrast, list) and len(contrast) == 2 and all(isinstance(s, str) for s in contrast)):
        expected("contrast", "a list of two system labels [a, b] (a minus b)", contrast)
        contrast = None
    elif contrast[0] == contrast[1] or any(s not in systems for s in contrast):
        expected("contrast", f"two different labels of systems: ({', '.join(systems)})", contrast)
        contrast = None
    judge = choice("judge", judges[0] if judges else None, judges, "a judge label")
    standard = value.get("standard")
    if not isinstance(standard, str) or not standard:
        expected("standard", "a standard's name", standard)
    rule = choice("rule", None, BOUNDED_RULES, "a rule whose values lie in [0, 1]")
    weights: dict[str, float] = {cell: 1.0 for cell in cells}
    if "weights" in value:
        raw = value["weights"]
        if not isinstance(raw, Mapping) or not raw:
            expected("weights", "a mapping of role/user_sim/condition cells to weights", raw)
        else:
            weights = {}
            for cell, w in raw.items():
                if str(cell) not in cells:
                    problem(f"weights.{cell}", f"unknown cell '{cell}': expected one of {', '.join(cells)}")
                elif isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
                    expected(f"weights.{cell}", "a positive number", w)
                else:
                    weights[str(cell)] = float(w)
    half_width = number("half_width", None, low=0.0, high=1.0)
    difference = number("difference", None, low=0.0, high=2.0)
    if ("half_width" in value) == ("difference" in value):
        problem("", "expected exactly one target: half_width, or difference (with power)")
    if "power" in value and "difference" not in value:
        problem("power", "only used with difference")
    power = number("power", 0.8, low=0.5, high=1.0, closed_low=True)
    level = number("level", 0.95, low=0.5, high=1.0)
    batch = integer("batch", 40, low=1)
    max_items = integer("max_items", None, low=1)
    allocation = choice("allocation", "neyman", ALLOCATIONS, "an allocation")
    floor = number("floor", 0.5, low=0.0, high=1.0)
    if allocation == "neyman" and floor is not None and floor <= 0:
        expected("floor", "a number > 0 for neyman allocation", floor)
    prior_sd = number("prior_sd", 0.5, low=0.0, high=2.0)
    if before:
        return None
    total = sum(weights.values())
    assert contrast is not None and judge and rule and power and level and batch and allocation
    assert floor is not None and prior_sd is not None
    return Precision(
        contrast=(contrast[0], contrast[1]), judge=judge, standard=str(standard), rule=rule,
        weights={cell: w / total for cell, w in weights.items()}, half_width=half_width, difference=difference,
        power=power, level=level, batch=batch, max_items=max_items if max_items is not None else pool * len(weights),
        allocation=allocation, floor=floor, prior_sd=prior_sd,
    )

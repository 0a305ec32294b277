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
  interval: betting         # betting (default) or group_sequential: the intervals reported at every look
  information_margin: 1.25  # group_sequential: maximum information, as a multiple of (z / half_width)^2
  floor: 0.5                # betting: share of every draw's probability kept on the weights (default 0.5)
  prior_sd: 0.5             # planning prior: sd of one item's contrast when no pilot is given; also the
                            # pseudo-observation every cell's variance estimate is shrunk towards
```

The two intervals (``interval:``) differ in what they guarantee and what they
cost.  ``betting`` is a confidence sequence (Waudby-Smith and Ramdas 2023):
exact for bounded outcomes at any sample size and valid at every time, looked
at or not, so the run may be continued past its target later; it costs about
2.3 times the items of a fixed design of the same half-width.
``group_sequential`` is a repeated confidence interval with O'Brien-Fleming-type
alpha spending (Jennison and Turnbull 2000): valid at every look of this run
(a normal approximation, checked by simulated coverage), with a maximum
information declared up front (``information_margin`` times the fixed design's),
at which the run stops; it costs about 1.2 times the fixed design's items, and
its allocation of items to cells is deterministic per batch, so Neyman
allocation gives the textbook gain (:mod:`multiverse.analysis.stratified_sequential`).

The cells are the ``role/user_sim/condition`` combinations; the estimand is
``sum_c w_c (mean_c(a) - mean_c(b))`` over the item pool (``items:`` slots of
every cell), with the weights normalised to sum to 1.  Weights are fixed by the
file, so the allocation (how many items each cell gets) never changes what is
estimated.  The block is read field by field through the experiment's
:class:`~multiverse.config.fields.FieldReader`, every problem reported as
``FILE:LINE: precision.<field>: expected ..., got ...``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from multiverse.config.fields import FieldReader, join, suggest

__all__ = ["BOUNDED_RULES", "PRECISION_KEYS", "Precision", "read_precision"]

BOUNDED_RULES = ("any_turn", "last_turn", "turn_mean")
"""Rules whose conversation values lie in [0, 1], the only ones a betting sequence can bound
(``first_turn`` counts turns, unbounded above and undefined for clean conversations)."""
ALLOCATIONS = ("neyman", "uniform")
INTERVALS = ("betting", "group_sequential")
PRECISION_KEYS = (
    "contrast", "judge", "standard", "rule", "weights", "half_width", "difference", "power", "level",
    "batch", "max_items", "allocation", "floor", "prior_sd", "interval", "information_margin",
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
    interval: str = "betting"
    information_margin: float = 1.25

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
            "allocation": self.allocation, "prior_sd": self.prior_sd,
        }
        if self.interval == "betting":  # the interval only when set, so the records of betting runs keep their keys
            out["floor"] = self.floor
        else:
            out["interval"] = self.interval
            out["information_margin"] = self.information_margin
        for key in ("half_width", "difference", "max_items"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.difference is not None:
            out["power"] = self.power
        return out


def read_precision(
    reader: FieldReader,
    value: Any,
    *,
    systems: Sequence[str],
    judges: Sequence[str],
    standards: Sequence[str],
    cells: Sequence[str],
    pool: int,
    seed_battery: bool = True,
) -> Precision | None:
    """Read the ``precision:`` block, reporting every problem through the experiment's field reader.

    Parameters
    ----------
    reader
        The experiment's :class:`~multiverse.config.fields.FieldReader`.
    value
        The block as parsed from YAML.
    systems, judges
        The experiment's system and judge labels.
    standards
        The standards the experiment scores (``dims.standard``, else every registered one).
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
        ``None`` when anything was wrong (every problem recorded on ``reader``).
    """
    before = len(reader.problems)
    block = reader.mapping(value, "precision", required=("contrast", "standard", "rule"), optional=PRECISION_KEYS)
    if block is None:
        return None
    if not seed_battery:
        reader.problem("precision", "expected an experiment of seed batteries (items:, search: seed_only conditions, "
                                    "no budget: or rollouts:), got a campaign or recorded conversations")

    def field(key: str) -> str:
        return join("precision", key)

    def number(key: str, default: float | None, *, low: float, high: float, closed_low: bool = False) -> float | None:
        raw = block.get(key, default)
        return None if raw is None else reader.number(raw, field(key), low=low, high=high, above=not closed_low, below=True)

    def integer(key: str, default: int | None) -> int | None:
        raw = block.get(key, default)
        return None if raw is None else reader.integer(raw, field(key), low=1)

    contrast = block.get("contrast")
    if "contrast" in block:
        if not (isinstance(contrast, list) and len(contrast) == 2 and all(isinstance(s, str) for s in contrast)):
            reader.expected(field("contrast"), "a list of two system labels [a, b] (a minus b)", contrast)
            contrast = None
        elif contrast[0] == contrast[1] or any(s not in systems for s in contrast):
            reader.problem(field("contrast"), f"expected two different labels of systems: ({', '.join(systems)}), "
                                              f"got {contrast[0]!r} and {contrast[1]!r}")
            contrast = None
    judge = None
    if judges:  # none: dims.judge's own problem
        judge = reader.one_of(block.get("judge", judges[0]), field("judge"), judges, what="judge label")
    standard = reader.one_of(block["standard"], field("standard"), standards, what="standard") if "standard" in block else None
    rule = block.get("rule")
    if "rule" in block and rule not in BOUNDED_RULES:
        reader.expected(field("rule"), f"a rule whose values lie in [0, 1] ({', '.join(BOUNDED_RULES)})", rule)
    weights: dict[str, float] = {cell: 1.0 for cell in cells}
    if "weights" in block:
        raw = reader.mapping(block["weights"], field("weights"), any_keys=True,
                             what="a mapping of role/user_sim/condition cells to weights")
        if raw is not None and not raw:
            reader.problem(field("weights"), "expected at least one cell, got an empty mapping")
        elif raw:
            weights = {}
            for cell, w in raw.items():
                where = join(field("weights"), cell)
                if cell not in cells:
                    reader.problem(where, f"unknown cell '{cell}'{suggest(cell, cells)}: expected one of {', '.join(cells)}")
                else:
                    read = reader.number(w, where, low=0.0, above=True, what="a positive number")
                    if read is not None:
                        weights[cell] = read
    half_width = number("half_width", None, low=0.0, high=1.0)
    difference = number("difference", None, low=0.0, high=2.0)
    if ("half_width" in block) == ("difference" in block):
        reader.problem("precision", "expected exactly one target: half_width, or difference (with power)")
    if "power" in block and "difference" not in block:
        reader.problem(field("power"), "only used with difference")
    power = number("power", 0.8, low=0.5, high=1.0, closed_low=True)
    level = number("level", 0.95, low=0.5, high=1.0)
    batch = integer("batch", 40)
    max_items = integer("max_items", None)
    allocation = reader.one_of(block.get("allocation", "neyman"), field("allocation"), ALLOCATIONS, what="allocation")
    interval = reader.one_of(block.get("interval", "betting"), field("interval"), INTERVALS, what="interval")
    if "floor" in block and interval not in (None, "betting"):
        reader.problem(field("floor"), "only used with interval: betting")
    floor = number("floor", 0.5, low=0.0, high=1.0, closed_low=True)
    if allocation == "neyman" and interval == "betting" and floor is not None and floor <= 0:
        reader.expected(field("floor"), "a number > 0 for neyman allocation", floor)
    prior_sd = number("prior_sd", 0.5, low=0.0, high=2.0)
    if "information_margin" in block and interval != "group_sequential":
        reader.problem(field("information_margin"), "only used with interval: group_sequential")
    margin = number("information_margin", 1.25, low=1.0, high=4.0, closed_low=True)
    read = (contrast, judge, standard, power, level, batch, allocation, floor, prior_sd, interval, margin)
    if len(reader.problems) > before or any(v is None for v in read) or not weights:
        return None
    assert contrast is not None and judge and standard and power and level and batch and allocation
    assert floor is not None and prior_sd is not None and interval and margin is not None
    total = sum(weights.values())
    return Precision(
        contrast=(contrast[0], contrast[1]), judge=judge, standard=standard, rule=str(rule),
        weights={cell: w / total for cell, w in weights.items()}, half_width=half_width, difference=difference,
        power=power, level=level, batch=batch, max_items=max_items if max_items is not None else pool * len(weights),
        allocation=allocation, floor=floor, prior_sd=prior_sd, interval=interval, information_margin=margin,
    )

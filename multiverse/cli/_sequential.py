"""The precision target on the command line: ``plan --target`` and ``run --until-precision``.

Both read the experiment's ``precision:`` block (:mod:`multiverse.config.precision`).
``plan --target [H]`` prints how many items each cell needs for the fixed
design meeting the target (half-width ``H`` replaces the block's), from a
pilot run's variance components (``--pilot RUN``) or the block's
``prior_sd``, and the calls and cost that costs
(:mod:`multiverse.analysis.sample_size`).  ``run --until-precision`` draws
items in batches until the interval the block's ``interval:`` declares is as
narrow as the target (:mod:`multiverse._run.sequential`; the betting
sequence of :mod:`multiverse.analysis.sequential`, its bets tuned for twice
the item count the same plan predicts, or the group-sequential interval of
:mod:`multiverse.analysis.stratified_sequential`).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

__all__ = ["pilot_cube", "plan_target", "print_target", "run_until_precision_cmd"]


class TargetError(ValueError):
    """A precision target that cannot be planned or run (exit 2)."""


def pilot_cube(path: str) -> Any:
    """The cube of a pilot: a run folder (its ``cube.nc``) or a cube file."""
    from multiverse.cube.io import open_cube

    where = Path(path)
    if where.is_dir() and (where / "cube.nc").exists():
        where = where / "cube.nc"
    if not where.exists():
        raise TargetError(f"{path}: --pilot: expected a run folder or a cube file, got nothing there")
    return open_cube(where, lazy=False)


def _experiment(experiment: Any, half_width: float | None) -> Any:
    if experiment.precision is None:
        raise TargetError(f"{experiment.source or experiment.name}: precision: expected a precision: block "
                          "(the target to plan or run to), got none")
    if half_width is not None:
        if not 0 < half_width < 1:
            raise TargetError(f"--target: expected a half-width in (0, 1), got {half_width}")
        experiment = replace(experiment, precision=replace(experiment.precision, half_width=half_width,
                                                           difference=None))
    return experiment


def plan_target(experiment: Any, *, half_width: float | None = None, pilot: str | None = None) -> dict[str, Any]:
    """The fixed design meeting the experiment's precision target: items per cell, calls, cost."""
    from multiverse._run.plan_report import estimate_cost_usd
    from multiverse.analysis.sample_size import cell_costs, pilot_components, plan_items
    from multiverse.plan import make_plan

    e = _experiment(experiment, half_width)
    precision = e.precision
    plan = make_plan(e)
    costs = cell_costs(plan, precision)
    if pilot is not None:
        cube = pilot_cube(pilot)
        try:
            components = pilot_components(cube, precision)
        except (KeyError, ValueError) as exc:
            raise TargetError(f"{pilot}: --pilot: {exc}") from None
        sds = {cell: c["sd"] for cell, c in components.items()}
        source = f"pilot {pilot}"
    else:
        components = {}
        sds = {cell: precision.prior_sd for cell in precision.weights}
        source = f"prior sd {precision.prior_sd:g}"
    answer = plan_items(precision, sds=sds, costs=costs, pool=e.items_per_cell)
    models = [e.systems[s].model for s in precision.contrast]
    priced = [estimate_cost_usd(m, 1) for m in models]
    per_call = None if any(p is None for p in priced) else sum(p or 0.0 for p in priced) / len(priced)
    return {
        **answer, "source": source, "sds": sds, "components": components, "costs": costs,
        "replicates": e.replicates, "cost_usd": None if per_call is None else per_call * answer["calls"],
        "target": precision.to_dict(),
    }


def print_target(report: dict[str, Any]) -> None:
    """The planning answer as lines on stdout."""
    print(f"precision target: half-width {report['half_width']:.4g} at level {report['target']['level']:g} "
          f"({report['target']['allocation']} allocation, sds from {report['source']})")
    for cell, n in report["items"].items():
        print(f"  {cell:<40} sd {report['sds'][cell]:.4f}  items {n:>6}  calls/item pair {report['costs'][cell]:g}")
    cost = "unknown" if report["cost_usd"] is None else f"${report['cost_usd']:.4f}"
    print(f"items {report['total_items']} (x {report['replicates']} replicates), calls {report['calls']}, "
          f"estimated cost {cost}; predicted half-width {report['predicted_half_width']:.4f}")


def run_until_precision_cmd(args: argparse.Namespace, *, options: dict[str, Any]) -> Any:
    """``run --until-precision``: the sequential run, one line per look on stderr unless ``--quiet``."""
    from multiverse._run.runner import resolve_experiment
    from multiverse._run.sequential import run_until_precision
    from multiverse.analysis.sequential import make_design

    e = _experiment(resolve_experiment(args.experiment), None)
    # A betting sequence needs about twice the fixed design's items; bets tuned there (any tuning keeps coverage).
    target_n = 2 * plan_target(e, pilot=args.pilot)["total_items"] if e.precision.interval == "betting" else None

    def show(look: dict[str, Any]) -> None:
        if not args.quiet:
            low, high = look["interval"]
            print(f"look {look['look']}: {look['draws']} item pairs, {look['calls_spent']} calls, "
                  f"interval [{low:.4f}, {high:.4f}] half-width {look['half_width']:.4f}", file=sys.stderr)

    return run_until_precision(
        e, design=lambda ex, plan: make_design(ex, plan, target_n=target_n), on_look=show, **options,
    )

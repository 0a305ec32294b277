"""Sequential runs to a declared precision on the offline world (``python -m benchmarks.sequential``).

A planted design whose cells differ in variance: one role, one user simulator,
four conditions (three calm ones where both systems almost never breach, one
hard one where they often do), systems ``a`` and ``b`` of planted breach rates,
a judge of perfect specificity.  The estimand is the equally weighted contrast
``b - a`` over a pool of ``--pool`` items per cell.

1. The pool is run once through the offline world (an ordinary run; the cache
   keeps it), giving every item's contrast.  A sequential run's draws read
   these values: exactly what the run loop reads from the cube of each batch
   (checked at the end against :func:`multiverse._run.sequential.run_until_precision`
   on the same world for a few seeds: identical looks).
2. ``--runs`` sequential runs per interval (the betting confidence sequence,
   batches of ``--batch``; the group-sequential repeated confidence interval,
   batches of ``--gs-batch``) and allocation (uniform, neyman), a look after
   every batch: coverage of the pool's contrast at every look at once by the
   run's interval, and by the fixed-design interval read at the same looks
   (misused); calls to reach the half-width.
3. The fixed design ``plan`` predicts from a pilot of ``--pilot`` items per
   cell (its variance components), for the same half-width; and for a
   difference equal to the planted contrast with power 0.8, the item count
   the simulation needs (fixed designs drawn from the pool, power by
   ``--power-runs`` draws per size) against the count ``plan`` predicts.
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist

import numpy as np

import multiverse as mv
from multiverse.analysis.sample_size import cell_costs, pilot_components, plan_items
from multiverse._run.sequential import run_until_precision
from multiverse.analysis.sequential import SequentialDesign, fixed_interval, make_design
from multiverse.analysis.stratified_sequential import StratifiedDesign
from multiverse.config.experiment import parse_experiment
from multiverse.plan import make_plan

SPECS = Path(__file__).resolve().parents[1] / "specs"


def experiment_yaml(pool: int, *, half_width: float, allocation: str = "neyman", batch: int = 25,
                    difference: float | None = None, interval: str = "betting") -> str:
    target = f"difference: {difference}\n  power: 0.8" if difference is not None else f"half_width: {half_width}"
    return f"""
name: sequential-bench
roles: [tutor]
systems: {{a: sim/target-a, b: sim/target-b}}
dims:
  user_sim: {{plain: sim/user-plain}}
  judge: {{strict: sim/judge-strict}}
  condition:
    calm1: {{horizon: 3, search: seed_only, pressure: 0.02}}
    calm2: {{horizon: 3, search: seed_only, pressure: 0.03}}
    calm3: {{horizon: 3, search: seed_only, pressure: 0.04}}
    hard: {{horizon: 3, search: seed_only, pressure: 2.5}}
  standard: [clear_breach]
  rule: [any_turn]
replicates: 1
items: {pool}
specs: {SPECS}
precision:
  contrast: [b, a]
  standard: clear_breach
  rule: any_turn
  {target}
  batch: {batch}
  allocation: {allocation}
  interval: {interval}
sim:
  seed: 11
  targets:
    a: {{breach: {{"*": 0.03}}}}
    b: {{breach: {{"*": 0.08}}}}
  users:
    plain: {{pressure: 1.0}}
  judges:
    strict: {{sensitivity: {{"*": 0.95}}, specificity: {{"*": 1.0}}}}
"""


def pool_table(experiment, cache: Path) -> dict[str, np.ndarray]:
    """cell -> every pool item's contrast (b - a), from one ordinary offline run."""
    cube = mv.run(experiment, cache=cache)
    p = experiment.precision
    values = mv.score(cube, standards=[p.standard], rules=[p.rule]).sel(
        judge=p.judge, standard=p.standard, rule=p.rule, replicate=0)
    diff = (values.sel(system=p.contrast[0]) - values.sel(system=p.contrast[1]))
    out = {}
    for cell in p.weights:
        role, user_sim, condition = cell.split("/")
        column = diff.sel(role=role, user_sim=user_sim, condition=condition).values.astype(float)
        if np.isnan(column).any():
            raise SystemExit(f"pool: cell {cell} has undecided contrasts; the benchmark plants none")
        out[cell] = column
    return out


def sequential_run(experiment, table, *, seed: int, target_n: int | None, costs) -> dict:
    if experiment.precision.interval == "group_sequential":
        design = StratifiedDesign(experiment.precision, pool=experiment.items, seed=seed, costs=costs)
    else:
        design = SequentialDesign(experiment.precision, pool=experiment.items, seed=seed, costs=costs,
                                  target_n=target_n)
    theta = sum(w * table[c].mean() for c, w in experiment.precision.weights.items())
    z = NormalDist().inv_cdf(1 - experiment.precision.alpha / 2)
    covered = naive_covered = True
    looks = 0
    while True:
        draws = design.next_batch()
        if not draws:
            break
        look = design.observe({(d.cell, d.item): (table[d.cell][d.item],) * 2 for d in draws})
        looks += 1
        low, high = look["interval"]
        covered &= low <= theta <= high
        drawn = {c: table[c][items] for c, items in design.drawn_items().items()}
        nlow, nhigh = fixed_interval(drawn, experiment.precision.weights, z=z, pool=experiment.items,
                                     prior_sd=experiment.precision.prior_sd)
        naive_covered &= nlow <= theta <= nhigh
    return {"calls": design.calls, "draws": design.drawn, "covered": covered, "naive_covered": naive_covered,
            "stopped": design.stop_reason(), "looks": looks}


def fixed_power(table, weights, counts, *, runs: int, rng, pool: int, z: float, prior_sd: float) -> float:
    """Share of fixed designs with ``counts`` items per cell (drawn without replacement) whose interval excludes 0.

    Each design is analysed with the cells' variances shrunk as ``plan`` shrinks
    a pilot's (``prior_sd``): with raw sample variances a calm cell whose few
    items all agreed has variance 0, an interval too narrow, and power that no
    valid analysis has.
    """
    hits = 0
    for _ in range(runs):
        drawn = {c: table[c][rng.choice(pool, size=counts[c], replace=False)] for c in weights}
        low, high = fixed_interval(drawn, weights, z=z, pool=pool, prior_sd=prior_sd)
        hits += (low > 0) or (high < 0)
    return hits / runs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=int, default=500)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--half-width", type=float, default=0.05)
    parser.add_argument("--batch", type=int, default=25, help="item pairs per batch of the betting runs")
    parser.add_argument("--gs-batch", type=int, default=10, help="item pairs per batch of the group-sequential runs")
    parser.add_argument("--pilot", type=int, default=30)
    parser.add_argument("--power-runs", type=int, default=2000)
    parser.add_argument("--cache", type=Path, default=Path(".cache/benchmarks-sequential"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    text = experiment_yaml(args.pool, half_width=args.half_width)
    base = parse_experiment(text)
    table = pool_table(base, args.cache)
    weights = base.precision.weights
    theta = sum(w * table[c].mean() for c, w in weights.items())
    plan = make_plan(base)
    costs = cell_costs(plan, base.precision)
    print(f"pool {args.pool} items per cell, contrast b - a = {theta:.4f}; per cell: "
          + ", ".join(f"{c.split('/')[-1]} mean {table[c].mean():.3f} sd {table[c].std(ddof=1):.3f}" for c in table)
          + f"; calls per item pair {sorted(set(costs.values()))} ({time.perf_counter() - started:.0f} s)")

    # The pilot: the first items of every cell's pool, as an ordinary run would give them.
    pilot_e = parse_experiment(experiment_yaml(args.pilot, half_width=args.half_width))
    pilot = pilot_components(mv.run(pilot_e, cache=args.cache), pilot_e.precision)
    sds = {c: v["sd"] for c, v in pilot.items()}
    fixed = plan_items(base.precision, sds=sds, costs=costs, pool=args.pool)
    print(f"plan (pilot {args.pilot} per cell): fixed design {fixed['total_items']} item pairs "
          f"{fixed['items']}, {fixed['calls']} calls for half-width {args.half_width}")

    tuned = 2 * fixed["total_items"]  # a betting sequence needs about twice a fixed design's items
    kinds = [("betting", args.batch), ("group_sequential", args.gs_batch)]
    for interval, batch in kinds:
        results = {}
        for allocation in ("uniform", "neyman"):
            e = parse_experiment(experiment_yaml(args.pool, half_width=args.half_width, allocation=allocation,
                                                 interval=interval, batch=batch))
            t0 = time.perf_counter()
            runs = [sequential_run(e, table, seed=s, target_n=tuned, costs=costs) for s in range(args.runs)]
            results[allocation] = runs
            m = len(runs)
            cover = np.mean([r["covered"] for r in runs])
            naive = np.mean([r["naive_covered"] for r in runs])
            se = math.sqrt(0.95 * 0.05 / m)
            calls = np.median([r["calls"] for r in runs])
            reached = np.mean([r["stopped"] == "target" for r in runs])
            label = f"{interval} batch {batch} {allocation}"
            print(f"coverage sequence {label} all-looks {cover:.4f} m={m} (>= {0.95 - 3 * se:.4f} needed)")
            print(f"coverage fixed-misused {label} all-looks {naive:.4f} m={m}")
            print(f"calls {label} median {calls:.0f} (draws median {np.median([r['draws'] for r in runs]):.0f}, "
                  f"looks median {np.median([r['looks'] for r in runs]):.0f}, target reached {reached:.3f}; "
                  f"{time.perf_counter() - t0:.0f} s)", flush=True)
        median = {a: float(np.median([r["calls"] for r in runs])) for a, runs in results.items()}
        print(f"ratio {interval} neyman/uniform calls {median['neyman'] / median['uniform']:.3f} (<= 0.85 needed)")
        print(f"ratio {interval} neyman/plan-fixed calls {median['neyman'] / fixed['calls']:.3f} (<= 1.3 needed)")

    # Power: plan's item count for difference = the planted contrast, power 0.8, against the simulated need.
    delta = round(abs(theta), 3)
    power_e = parse_experiment(experiment_yaml(args.pool, half_width=args.half_width, difference=delta))
    answer = plan_items(power_e.precision, sds=sds, costs=costs, pool=args.pool)
    z = NormalDist().inv_cdf(0.975)
    rng = np.random.default_rng(2023)
    shares = answer["shares"]
    sizes, powers = [], []
    for factor in np.arange(0.5, 2.05, 0.1):
        total = max(int(round(answer["total_items"] * factor)), 2 * len(shares))
        counts = {c: min(max(int(math.ceil(total * s)), 2), args.pool) for c, s in shares.items()}
        sizes.append(sum(counts.values()))
        powers.append(fixed_power(table, weights, counts, runs=args.power_runs, rng=rng, pool=args.pool, z=z,
                                  prior_sd=power_e.precision.prior_sd))
    needed = next((n for n, pw in zip(sizes, powers) if pw >= 0.8), None)
    print("power by size: " + ", ".join(f"{n}:{pw:.3f}" for n, pw in zip(sizes, powers)))
    if needed is not None:
        print(f"plan items for power 0.8 at difference {delta}: predicted {answer['total_items']}, "
              f"simulation needs {needed} (ratio {answer['total_items'] / needed:.3f}; within 0.8-1.2 needed)")

    # The run loop on the offline world reads the same values: a few seeds, identical looks.
    for (interval, batch), seed in itertools.product(kinds, range(3)):
        e = replace(parse_experiment(experiment_yaml(args.pool, half_width=args.half_width, interval=interval,
                                                     batch=batch)), seed=seed)
        cube = run_until_precision(e, design=lambda ex, pl: make_design(ex, pl, target_n=tuned), cache=args.cache)
        record = cube.attrs["run"]
        design = make_design(e, make_plan(e), target_n=tuned)
        while (draws := design.next_batch()):
            design.observe({(d.cell, d.item): (table[d.cell][d.item],) * 2 for d in draws})
        same = [look["interval"] for look in record["sequential"]["looks"]] == [look["interval"] for look in design.looks]
        print(f"run loop {interval} seed {seed}: {len(design.looks)} looks, identical to the table-driven design: {same}")
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

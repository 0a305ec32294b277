"""Benchmark: agreement point estimates at 1 million units x 5 raters against ``krippendorff``.

Run ``python -m benchmarks.bench_agreement [--units N] [--repeat R]``.  Each
contender gets its natural input, built before timing: ``agreement`` the cube,
the ``krippendorff`` package its ``(rater, unit)`` float array with NaN for
missing.  Peak memory is traced with :mod:`tracemalloc` (numpy reports its
buffers to it) above what was allocated before the call; times are the best of
``--repeat`` runs (CPU time beside wall time).  Three comparisons: one alpha
over the five raters, the 10 pairwise alphas (``agreement`` gives the whole
matrix in one call; the package is called once per pair), and Fleiss' kappa
over the five raters against statsmodels on the units every rater rated.
"""

from __future__ import annotations

import argparse
import itertools
import time
import tracemalloc
from collections.abc import Callable

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import fleiss_kappa

from multiverse.analysis.raters import agreement
from multiverse.cube.build import new_cube

RATERS = ["j1", "j2", "j3", "j4", "j5"]
PRINCIPLES = ["academic_integrity", "confidentiality", "instructional_boundaries", "learning_differences"]


def bench_cube(units: int, *, seed: int = 0):
    """A cube of ``units`` judged cells (items x 10 turns x 4 principles) rated by 5 judges.

    The judges agree with a latent severity (mostly 0) 85% of the time; 3% of
    judgments are missing.
    """
    items = max(1, units // 40)
    cube = new_cube(system=["a"], role=["tutor"], user_sim=["plain"], condition=["fixed"], replicate=1,
                    item=items, turn=10, principle=PRINCIPLES, judge=RATERS)
    rng = np.random.default_rng(seed)
    shape = cube["severity"].shape
    latent = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=shape[:-1] + (1,), p=[0.8, 0.1, 0.1])
    noise = rng.integers(0, 3, size=shape, dtype=np.int8)
    sev = np.where(rng.random(shape) < 0.85, latent, noise).astype(np.int8)
    sev[rng.random(shape) < 0.03] = -1
    cube["severity"].values[...] = sev
    return cube


def measure(fn: Callable[[], object], *, repeat: int) -> tuple[float, float, float, object]:
    """Best wall and CPU seconds over ``repeat`` runs, peak traced MB of one run, the result."""
    walls, cpus = [], []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return min(walls), min(cpus), peak / 1e6, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cube = bench_cube(args.units)
    flat = cube["severity"].values.reshape(-1, len(RATERS))
    reliability = np.where(flat.T >= 0, flat.T, np.nan).astype(float)
    complete = flat[(flat >= 0).all(axis=1)]
    counts = np.stack([(complete == c).sum(axis=1) for c in range(3)], axis=1)
    pairs = list(itertools.combinations(range(len(RATERS)), 2))
    cases = {
        "alpha, 5 raters": (
            lambda: agreement(cube, metric="krippendorff_alpha", raters=RATERS),
            lambda: krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal",
                                       value_domain=[0, 1, 2]),
        ),
        "alpha, 10 pairs": (
            lambda: agreement(cube, metric="krippendorff_alpha"),
            lambda: [krippendorff.alpha(reliability_data=reliability[[a, b]], level_of_measurement="nominal",
                                        value_domain=[0, 1, 2]) for a, b in pairs],
        ),
        "fleiss, 5 raters": (
            lambda: agreement(cube, metric="fleiss_kappa", raters=RATERS),
            lambda: fleiss_kappa(counts, method="fleiss"),
        ),
    }
    print(f"{flat.shape[0]:,} units x {len(RATERS)} raters, best of {args.repeat}")
    for name, (ours, theirs) in cases.items():
        wall, cpu, peak, got = measure(ours, repeat=args.repeat)
        ref_wall, ref_cpu, ref_peak, want = measure(theirs, repeat=args.repeat)
        first = float(np.asarray(got).ravel()[1 if np.asarray(got).ndim else 0])
        reference = float(np.ravel(want)[0])
        print(f"{name}: agreement {wall:.2f} s wall {cpu:.2f} s CPU {peak:.0f} MB | reference {ref_wall:.2f} s wall "
              f"{ref_cpu:.2f} s CPU {ref_peak:.0f} MB | time {wall / ref_wall:.2f}x memory {peak / ref_peak:.2f}x "
              f"| value {first:.6f} vs {reference:.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

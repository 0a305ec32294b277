"""Benchmark: a specification curve with 500 null draws over 10,000 specifications x 2,000 conversations.

Run ``python -m benchmarks.bench_curve``.  Two systems are compared (a paired
difference) on 2,000 items (one conversation per item and system, the clusters
resampled), under 10 user simulators x 250 judges x 4 standards = 10,000
specifications of one rate rule.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import xarray as xr

from multiverse.analysis.curve import spec_curve


def bench_scores(*, items: int = 2000, user_sims: int = 10, judges: int = 250, standards: int = 4, seed: int = 0) -> xr.DataArray:
    """Conversation-level 0/1 scores with a small planted difference between systems."""
    rng = np.random.default_rng(seed)
    shape = (2, 1, 1, 1, items, user_sims, judges, standards, 1)
    rate = np.array([0.12, 0.10]).reshape(2, 1, 1, 1, 1, 1, 1, 1, 1)
    values = (rng.random(shape, dtype=np.float32) < rate).astype(np.float64)
    return xr.DataArray(
        values,
        dims=("system", "role", "condition", "replicate", "item", "user_sim", "judge", "standard", "rule"),
        coords={
            "system": ["a", "b"], "role": ["tutor"], "condition": ["fixed"], "replicate": [0],
            "item": np.arange(items), "user_sim": [f"u{i}" for i in range(user_sims)],
            "judge": [f"j{i}" for i in range(judges)], "standard": [f"s{i}" for i in range(standards)],
            "rule": ["any_turn"],
        },
        name="score",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--judges", type=int, default=250)
    parser.add_argument("--draws", type=int, default=500)
    args = parser.parse_args(argv)
    scores = bench_scores(items=args.items, judges=args.judges)
    start, cpu = time.perf_counter(), time.process_time()
    out = spec_curve(scores, contrast=("a", "b"), n_boot=args.draws, direction="greater")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"spec_curve: {out.sizes['spec']:,} specifications x {args.items:,} conversations per system x "
        f"{args.draws} null draws in {wall:.2f} s wall ({cpu:.2f} s CPU); "
        f"p(median)={float(out.p_value.sel(statistic='median_estimate').squeeze()):.3f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

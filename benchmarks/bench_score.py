"""Benchmark: scoring 100 million judgment cells under every standard and rule.

Run ``python -m benchmarks.bench_score [--cells N]``; prints cells, wall time and
cells per second.  The cube is filled with plausible severities (mostly 0, a few
deviations, breaches and missing judgments, ragged conversation ends).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from multiverse.cube.build import new_cube
from multiverse.scoring import list_rules, list_standards, score


def bench_cube(cells: int, *, seed: int = 0):
    """A cube of about ``cells`` judgment cells: 4 systems x 2 user sims x 5 replicates x items
    x 10 turns x 4 principles x 5 judges, with ``ended`` all completed."""
    per_item = 4 * 2 * 5 * 10 * 4 * 5
    items = max(1, cells // per_item)
    cube = new_cube(
        system=["a", "b", "c", "d"], role=["tutor"], user_sim=["plain", "pushy"], condition=["fixed"],
        replicate=5, item=items, turn=10,
        principle=["academic_integrity", "confidentiality", "instructional_boundaries", "learning_differences"],
        judge=["j1", "j2", "j3", "j4", "j5"],
    )
    rng = np.random.default_rng(seed)
    lut = np.zeros(100, dtype=np.int8)
    lut[90:95], lut[95:98], lut[98:] = 1, 2, -1
    sev = cube["severity"].values
    flat = sev.reshape(-1, sev.shape[-3] * sev.shape[-2] * sev.shape[-1])
    for start in range(0, flat.shape[0], 100_000):
        block = flat[start : start + 100_000]
        block[...] = lut[rng.integers(0, 100, block.shape, dtype=np.int8)]
    length = rng.integers(4, 11, sev.shape[:6])
    past = np.arange(1, 11) > length[..., None]
    sev[past] = -2
    cube["ended"].values[...] = "completed"
    cube["target_principle"].values[...] = "confidentiality"
    return cube


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000_000)
    args = parser.parse_args(argv)
    cube = bench_cube(args.cells)
    cells = cube["severity"].size
    start, cpu = time.perf_counter(), time.process_time()
    out = score(cube)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"score: {cells:,} cells x {len(list_standards())} standards x {len(list_rules())} rules "
        f"-> {out.size:,} values in {wall:.2f} s wall, {cpu:.2f} s CPU ({cells / wall / 1e6:.1f} M cells/s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

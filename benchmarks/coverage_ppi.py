"""Monte-Carlo coverage of the judge-corrected (PPI++) intervals on planted data.

Run ``python -m benchmarks.coverage_ppi [--quick]``.  Each replicate plants
conversation-level truths (rate 0.3; for the paired difference, systems at
0.3 and 0.2 on average, each item's rates shifted alike by an item effect
uniform on [-0.25, 0.25]), a model judge with sensitivity 0.85 and
specificity 0.9 that rates all 2,000 conversations (per system), and human
labels on the first ``items`` of them; the 95% PPI++ interval of the rate
(or the difference) is checked against the planted value.  Prints one line
per figure, ``coverage <interval> items=<n> <value> m=<M>`` (shares in [0, 1]),
then for information the mean width relative to the human-only interval on
the same labels.  Acceptance (as in ``benchmarks.coverage``): a 99%
Clopper-Pearson interval around each coverage, Bonferroni-corrected over the
figures printed, contains 0.95.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy import stats

from multiverse.analysis.ppi import ppi_mean

ITEMS = (12, 30, 120)
JUDGED = 2000
RATE, RATE_B = 0.3, 0.2
SENSITIVITY, SPECIFICITY = 0.85, 0.9


def _judge(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    hit = rng.random(truth.shape)
    return np.where(truth, hit < SENSITIVITY, hit >= SPECIFICITY).astype(float)


def rate_replicate(items: int, rng: np.random.Generator, *, small_sample: bool) -> tuple[bool, float]:
    truth = rng.random(JUDGED) < RATE
    verdict = _judge(truth, rng)
    out = ppi_mean(truth[:items].astype(float), verdict[:items], verdict[items:], small_sample=small_sample)
    ratio = (out["upper"] - out["lower"]) / max(out["human_upper"] - out["human_lower"], 1e-12)
    return out["lower"] <= RATE <= out["upper"], ratio


def difference_replicate(items: int, rng: np.random.Generator, *, small_sample: bool) -> tuple[bool, float]:
    difficulty = rng.uniform(0.0, 0.5, JUDGED)  # an item effect both systems share (their verdicts are paired)
    truth_a = rng.random(JUDGED) < difficulty + (RATE - 0.25)
    truth_b = rng.random(JUDGED) < difficulty + (RATE_B - 0.25)
    diff_f = _judge(truth_a, rng) - _judge(truth_b, rng)
    diff_y = truth_a.astype(float) - truth_b.astype(float)
    out = ppi_mean(diff_y[:items], diff_f[:items], diff_f[items:], small_sample=small_sample)
    ratio = (out["upper"] - out["lower"]) / max(out["human_upper"] - out["human_lower"], 1e-12)
    return out["lower"] <= RATE - RATE_B <= out["upper"], ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 400 replicates instead of 2,000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--as-ppi-py", action="store_true", help="the plain normal interval (ppi_py's) instead")
    args = parser.parse_args(argv)
    m = 400 if args.quick else 2000
    rng = np.random.default_rng(args.seed)
    figures, ratios = [], []
    for name, replicate in (("ppi_rate", rate_replicate), ("ppi_difference", difference_replicate)):
        for items in ITEMS:
            results = [replicate(items, rng, small_sample=not args.as_ppi_py) for _ in range(m)]
            hits = sum(hit for hit, _ in results)
            figures.append((name, items, hits))
            ratios.append((name, items, float(np.nanmean([r for _, r in results]))))
            print(f"coverage {name} items={items} {hits / m:.4f} m={m}", flush=True)
    level = 1 - 0.01 / len(figures)
    failed = []
    for name, items, hits in figures:
        lower = stats.beta.ppf((1 - level) / 2, hits, m - hits + 1) if hits else 0.0
        upper = stats.beta.ppf(1 - (1 - level) / 2, hits + 1, m - hits) if hits < m else 1.0
        if not lower <= 0.95 <= upper:
            failed.append(f"{name} items={items}")
    for name, items, ratio in ratios:
        print(f"# width {name} items={items} {ratio:.3f} of the human-only interval", flush=True)
    print(f"# acceptance: {'met' if not failed else 'not met for ' + ', '.join(failed)}", flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())

"""Monte-Carlo coverage of the judge-corrected intervals on planted data.

Run ``python -m benchmarks.coverage_ppi [--quick] [--as-ppi-py]``.  Each
replicate plants conversation-level truths, a model judge with sensitivity
0.85 and specificity 0.9 that rates all 2,000 conversations (per system), and
human labels on the first ``labels`` of them; the 95% interval of the rate
(or the paired difference) is checked against the planted value.  Settings:
the rate at 0.3 with 12, 30 and 120 labels; rare rates, 0.05 with 20, 50 and
200 labels and 0.02 with 50 and 200; the paired difference (systems at 0.3
and 0.2 on average, each item's rates shifted alike by an item effect uniform
on [-0.25, 0.25]) with 12, 30 and 120 labels.  Prints one line per figure,
``coverage <interval> items=<labels> <value> m=<M>`` (shares in [0, 1]), with
its Monte Carlo standard error and the mean width relative to the human-only
interval on the same labels.  Acceptance: each coverage at least
``0.95 - 3`` Monte Carlo standard errors.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from multiverse.analysis.ppi import ppi_mean

JUDGED = 2000
SENSITIVITY, SPECIFICITY = 0.85, 0.9
RATES = ((0.3, (12, 30, 120)), (0.05, (20, 50, 200)), (0.02, (50, 200)))
DIFFERENCE, DIFFERENCE_LABELS = (0.3, 0.2), (12, 30, 120)


def _judge(truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    hit = rng.random(truth.shape)
    return np.where(truth, hit < SENSITIVITY, hit >= SPECIFICITY).astype(float)


def rate_replicate(rate: float, labels: int, rng: np.random.Generator, *, small_sample: bool) -> tuple[bool, float]:
    truth = rng.random(JUDGED) < rate
    verdict = _judge(truth, rng)
    out = ppi_mean(truth[:labels].astype(float), verdict[:labels], verdict[labels:], small_sample=small_sample)
    ratio = (out["upper"] - out["lower"]) / max(out["human_upper"] - out["human_lower"], 1e-12)
    return out["lower"] <= rate <= out["upper"], ratio


def difference_replicate(labels: int, rng: np.random.Generator, *, small_sample: bool) -> tuple[bool, float]:
    difficulty = rng.uniform(0.0, 0.5, JUDGED)  # an item effect both systems share (their verdicts are paired)
    truth_a = rng.random(JUDGED) < difficulty + (DIFFERENCE[0] - 0.25)
    truth_b = rng.random(JUDGED) < difficulty + (DIFFERENCE[1] - 0.25)
    diff_f = _judge(truth_a, rng) - _judge(truth_b, rng)
    diff_y = truth_a.astype(float) - truth_b.astype(float)
    out = ppi_mean(diff_y[:labels], diff_f[:labels], diff_f[labels:], small_sample=small_sample)
    ratio = (out["upper"] - out["lower"]) / max(out["human_upper"] - out["human_lower"], 1e-12)
    return out["lower"] <= DIFFERENCE[0] - DIFFERENCE[1] <= out["upper"], ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 400 replicates instead of 2,000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--as-ppi-py", action="store_true", help="the plain normal interval (ppi_py's) instead")
    args = parser.parse_args(argv)
    m = 400 if args.quick else 2000
    rng = np.random.default_rng(args.seed)
    small = not args.as_ppi_py
    settings = [(f"ppi_rate_{rate:g}", labels, lambda n, r=rate: rate_replicate(r, n, rng, small_sample=small))
                for rate, sizes in RATES for labels in sizes]
    settings += [("ppi_difference", labels, lambda n: difference_replicate(n, rng, small_sample=small))
                 for labels in DIFFERENCE_LABELS]
    failed = []
    for name, labels, replicate in settings:
        results = [replicate(labels) for _ in range(m)]
        share = float(np.mean([hit for hit, _ in results]))
        mcse = float(np.sqrt(share * (1 - share) / m))
        ratio = float(np.nanmean([r for _, r in results]))
        print(f"coverage {name} items={labels} {share:.4f} m={m} # mcse {mcse:.4f}, width {ratio:.3f} of human-only",
              flush=True)
        if share < 0.95 - 3 * max(mcse, np.sqrt(0.95 * 0.05 / m)):
            failed.append(f"{name} items={labels}")
    print(f"# acceptance: {'met' if not failed else 'not met for ' + ', '.join(failed)}", flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())

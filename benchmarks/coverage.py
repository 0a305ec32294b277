"""Monte-Carlo coverage of the library's intervals and false-positive rates of its tests.

``python -m benchmarks.coverage [--quick] [--jobs N]`` draws planted cubes
(:func:`multiverse.analysis._synthetic.planted_cube`) at 12, 30 and 120 items,
runs the public analyses on each, and prints one line per figure::

    coverage <interval> items=<n> <value> m=<M>
    fpr <test> items=<n> <value> m=<M>

(shares in [0, 1]; ``M`` cubes per figure: 2,000, or 400 with ``--quick``).  A
figure is consistent with its target (0.95 coverage, 0.05 false positives) when
a 99% Clopper-Pearson interval around it, Bonferroni-corrected over the figures
printed, contains the target; the verdicts go to stderr, the figures alone to
stdout.

The planted parameters are fixed here.  Truths are the population values the
cubes are drawn from (Gauss-Hermite integrals over the item difficulty,
:func:`~multiverse.analysis._synthetic.expected_rates` and
:func:`~multiverse.analysis._synthetic.expected_agreement`), not estimates.

Intervals (95%): ``rate`` (:func:`~multiverse.analysis.noise_floor`'s ``ci``
of system ``a``), ``paired_difference`` (:func:`~multiverse.analysis.paired_differences`'s
bootstrap ``ci`` of b - a), ``pass_hat_k`` (``noise_floor``'s ``pass_hat_k_ci``
at k = 2), ``kappa`` and ``alpha`` (:func:`~multiverse.analysis.agreement_ci`
of the two judges, Cohen's kappa and Krippendorff's alpha on clear breaches).
Tests at 5% under a planted null (two equal systems): ``paired_difference``
(``exceeds_noise``) and the specification curve's ``median_estimate``,
``share_significant`` and ``stouffer_z`` (two-sided, 2 judges x 2 standards x 3
rate rules = 12 specifications).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

ITEMS = (12, 30, 120)
REPLICATES = 3
HORIZON = 4  # assistant turns; the tutor role has four principles
SYSTEMS = {"a": 0.010, "b": 0.020}  # conversation-level clear-breach rates near 0.25 and 0.35
NULL_SYSTEMS = {"a": 0.015, "b": 0.015}
JUDGES = {"j1": {"sensitivity": 0.9, "specificity": 0.99}, "j2": {"sensitivity": 0.7, "specificity": 0.98}}
PARTIAL, ITEM_SPREAD, K = 0.05, 0.5, 2
N_BOOT = 400
LEVEL, ALPHA = 0.95, 0.05
INTERVALS = ("rate", "paired_difference", "pass_hat_k", "kappa", "alpha")
TESTS = ("paired_difference", "median_estimate", "share_significant", "stouffer_z")


def truths() -> dict[str, float]:
    """Population values of every interval's estimand."""
    from multiverse.analysis._synthetic import expected_agreement, expected_rates

    cells = HORIZON * 4
    rate = {s: expected_rates(base=b, judge=JUDGES["j1"], n_cells=cells, partial=PARTIAL, item_spread=ITEM_SPREAD, k=K)
            for s, b in SYSTEMS.items()}
    agree = expected_agreement(base=SYSTEMS["a"], judges=list(JUDGES.values()), partial=PARTIAL, item_spread=ITEM_SPREAD)
    return {
        "rate": rate["a"]["clear_breach"],
        "paired_difference": rate["b"]["clear_breach"] - rate["a"]["clear_breach"],
        "pass_hat_k": rate["a"]["pass_hat_k"],
        "kappa": agree["cohen_kappa"],
        "alpha": agree["krippendorff_alpha"],
    }


def one_draw(items: int, seed: int, truth: dict[str, float]) -> dict[str, bool]:
    """Every interval's hit and every test's rejection on one planted cube and one null cube."""
    from threadpoolctl import threadpool_limits

    from multiverse.analysis import agreement_ci, noise_floor, paired_differences, spec_curve
    from multiverse.analysis._synthetic import planted_cube
    from multiverse.score import score

    def covers(interval, value: float) -> bool:
        low, high = (float(interval.sel(ci_bound=b)) for b in ("lower", "upper"))
        return bool(low <= value <= high)

    common = dict(judges=JUDGES, replicates=REPLICATES, items=items, horizon=HORIZON, partial=PARTIAL,
                  item_spread=ITEM_SPREAD)
    with threadpool_limits(limits=1, user_api="blas"):
        cube = planted_cube(systems=SYSTEMS, seed=seed, **common)
        scores = score(cube, standards="clear_breach", rules="any_turn").sel(judge="j1").squeeze(drop=True)
        floor = noise_floor(scores, k=[K], ci=LEVEL)
        pairs = paired_differences(scores, n_boot=N_BOOT, ci=LEVEL, seed=seed)
        hits = {
            "rate": covers(floor["ci"].sel(system="a"), truth["rate"]),
            "pass_hat_k": covers(floor["pass_hat_k_ci"].sel(system="a", k=K), truth["pass_hat_k"]),
            "paired_difference": covers(pairs["ci"].sel(system="b", system_b="a"), truth["paired_difference"]),
        }
        one_system = cube.sel(system=["a"])
        for name, metric in (("kappa", "cohen_kappa"), ("alpha", "krippendorff_alpha")):
            result = agreement_ci(one_system, metric=metric, standard="clear_breach", n_boot=N_BOOT, ci=LEVEL, seed=seed)
            hits[name] = covers(result["ci"].sel(judge="j1", judge_b="j2"), truth[name])

        null = planted_cube(systems=NULL_SYSTEMS, seed=10**6 + seed, **common)
        null_scores = score(null, standards=["clear_breach", "any_deviation"], rules=["any_turn", "turn_mean", "last_turn"])
        one = null_scores.sel(judge="j1", standard="clear_breach", rule="any_turn").squeeze(drop=True)
        rejected = {"paired_difference": bool(paired_differences(one, n_boot=1, seed=seed)["exceeds_noise"]
                                              .sel(system="b", system_b="a"))}
        curve = spec_curve(null_scores, contrast=("b", "a"), direction="two-sided", n_boot=N_BOOT, alpha=ALPHA,
                           seed=seed)
        for statistic in TESTS[1:]:
            rejected[statistic] = bool(float(curve["p_value"].sel(statistic=statistic).squeeze()) < ALPHA)
    return {**{f"coverage {k}": v for k, v in hits.items()}, **{f"fpr {k}": v for k, v in rejected.items()}}


def clopper_pearson(hits: int, m: int, level: float) -> tuple[float, float]:
    """Exact binomial interval of a share ``hits / m``."""
    tail = (1 - level) / 2
    low = stats.beta.ppf(tail, hits, m - hits + 1) if hits else 0.0
    high = stats.beta.ppf(1 - tail, hits + 1, m - hits) if hits < m else 1.0
    return float(low), float(high)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 400 cubes per figure instead of 2,000")
    parser.add_argument("--m", type=int, default=None, help="cubes per figure (overrides --quick)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--items", type=int, nargs="+", default=list(ITEMS), help="item counts")
    args = parser.parse_args(argv)
    m = args.m or (400 if args.quick else 2000)
    truth = truths()
    print("truths: " + ", ".join(f"{k}={v:.4f}" for k, v in truth.items()), file=sys.stderr)
    figures: list[tuple[str, int, int]] = []
    for items in args.items:
        draws = Parallel(n_jobs=args.jobs, batch_size=8)(delayed(one_draw)(items, seed, truth) for seed in range(m))
        for name in draws[0]:
            hits = sum(d[name] for d in draws)
            figures.append((name, items, hits))
            kind, what = name.split(" ")
            print(f"{kind} {what} items={items} {hits / m:.3f} m={m}", flush=True)
    level = 1 - 0.01 / len(figures)  # 99%, Bonferroni over the figures printed
    off = []
    for name, items, hits in figures:
        target = LEVEL if name.startswith("coverage") else ALPHA
        low, high = clopper_pearson(hits, m, level)
        if not low <= target <= high:
            off.append(f"{name} items={items}: {hits / m:.3f}, interval [{low:.3f}, {high:.3f}] excludes {target}")
    print(f"{len(figures) - len(off)} of {len(figures)} figures consistent with their target "
          f"(99% Clopper-Pearson, Bonferroni over {len(figures)})", file=sys.stderr)
    for line in off:
        print("  not consistent: " + line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

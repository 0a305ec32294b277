"""Monte-Carlo coverage of the library's intervals and false-positive rates of its tests.

``python -m benchmarks.coverage [--quick] [--jobs N]`` draws planted cubes
(:func:`multiverse.analysis._synthetic.planted_cube`) at 12, 30 and 120 items,
runs the public analyses on each, and prints one line per figure::

    coverage <interval> items=<n> <value> m=<M>
    fpr <test> items=<n> <value> m=<M>

(shares in [0, 1]; ``M`` cubes per figure: 2,000, or 400 with ``--quick``).
Independent cubes are analysed in batches laid along the ``condition`` dim (an
estimand facet no analysis pools), so each call of an analysis serves a batch;
the agreement intervals are computed cube by cube, on ``--agreement-m`` cubes
(default ``M``).  A
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


def stacked_cubes(systems: dict[str, float], *, m: int, items: int, seed: int):
    """``m`` independent planted cubes of ``items`` items each, stacked along ``condition``.

    One draw of ``m * items`` items (every item has its own difficulty, so
    disjoint item sets are independent cubes), cut into ``m`` slices laid along
    the ``condition`` dim: an estimand facet every analysis keeps apart, so one
    call analyses all ``m`` cubes at once.
    """
    import xarray as xr

    from multiverse.analysis._synthetic import planted_cube

    cube = planted_cube(systems=systems, judges=JUDGES, replicates=REPLICATES, items=m * items, horizon=HORIZON,
                        partial=PARTIAL, item_spread=ITEM_SPREAD, seed=seed)
    out = {}
    for name, variable in cube.data_vars.items():
        if "item" not in variable.dims:
            out[name] = variable
            continue
        dims = list(variable.dims)
        data = variable.transpose("condition", "item", ...).values  # condition has one label
        data = data.reshape((m, items) + data.shape[2:])
        rest = [d for d in dims if d not in ("condition", "item")]
        out[name] = xr.DataArray(data, dims=["condition", "item", *rest]).transpose(*dims)
    coords = {d: cube[d].values for d in cube.dims if d not in ("condition", "item")}
    coords.update(condition=[f"cube{i}" for i in range(m)], item=np.arange(items))
    stacked = xr.Dataset(out, coords=coords, attrs=cube.attrs)
    return stacked.assign_coords({c: cube.coords[c] for c in cube.coords if c not in cube.dims and "item" not in cube[c].dims
                                  and "condition" not in cube[c].dims})


def draws(items: int, m: int, truth: dict[str, float], *, seed: int, agreement_m: int) -> dict[str, np.ndarray]:
    """Every interval's hits and every test's rejections on ``m`` planted and ``m`` null cubes.

    The agreement intervals are computed cube by cube (their bootstrap tables
    grow with the square of a batch), on the first ``agreement_m`` cubes.
    """
    from threadpoolctl import threadpool_limits

    from multiverse.analysis import agreement_ci, noise_floor, paired_differences, spec_curve
    from multiverse.scoring import score

    def covers(interval, value: float) -> np.ndarray:
        return ((interval.sel(ci_bound="lower") <= value) & (value <= interval.sel(ci_bound="upper"))).values.ravel()

    with threadpool_limits(limits=1, user_api="blas"):
        cube = stacked_cubes(SYSTEMS, m=m, items=items, seed=seed)
        scores = score(cube, standards="clear_breach", rules="any_turn").sel(judge="j1")
        scores = scores.squeeze([d for d in ("role", "user_sim", "standard", "rule") if d in scores.dims], drop=True)
        floor = noise_floor(scores, k=[K], ci=LEVEL)
        pairs = paired_differences(scores, n_boot=N_BOOT, ci=LEVEL, seed=seed)
        hits = {
            "rate": covers(floor["ci"].sel(system="a"), truth["rate"]),
            "paired_difference": covers(pairs["ci"].sel(system="b", system_b="a"), truth["paired_difference"]),
            "pass_hat_k": covers(floor["pass_hat_k_ci"].sel(system="a", k=K), truth["pass_hat_k"]),
        }
        one_system = cube.sel(system=["a"])
        for name, metric in (("kappa", "cohen_kappa"), ("alpha", "krippendorff_alpha")):
            hits[name] = np.array([
                covers(agreement_ci(one_system.isel(condition=[c]), metric=metric, standard="clear_breach",
                                    n_boot=N_BOOT, ci=LEVEL, seed=seed + c)["ci"].sel(judge="j1", judge_b="j2"),
                       truth[name])[0]
                for c in range(min(m, agreement_m))
            ], dtype=bool)

        null = stacked_cubes(NULL_SYSTEMS, m=m, items=items, seed=10**6 + seed)
        null_scores = score(null, standards=["clear_breach", "any_deviation"], rules=["any_turn", "turn_mean", "last_turn"])
        one = null_scores.sel(judge="j1", standard="clear_breach", rule="any_turn")
        one = one.squeeze([d for d in ("role", "user_sim") if d in one.dims], drop=True)
        tested = paired_differences(one, n_boot=1, seed=seed)["exceeds_noise"].sel(system="b", system_b="a")
        rejected = {"paired_difference": tested.values.ravel()}
        curve = spec_curve(null_scores, contrast=("b", "a"), direction="two-sided", n_boot=N_BOOT, alpha=ALPHA, seed=seed)
        for statistic in TESTS[1:]:
            rejected[statistic] = (curve["p_value"].sel(statistic=statistic) < ALPHA).values.ravel()
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
    parser.add_argument("--batch", type=int, default=100, help="cubes analysed together in one call")
    parser.add_argument("--agreement-m", type=int, default=None, help="cubes for the agreement intervals (default M)")
    parser.add_argument("--items", type=int, nargs="+", default=list(ITEMS), help="item counts")
    args = parser.parse_args(argv)
    m = args.m or (400 if args.quick else 2000)
    truth = truths()
    print("truths: " + ", ".join(f"{k}={v:.4f}" for k, v in truth.items()), file=sys.stderr)
    figures: list[tuple[str, int, int, int]] = []
    batches = [min(args.batch, m - start) for start in range(0, m, args.batch)]
    agreement_m = min(m, args.agreement_m or m)
    left = [min(size, max(0, agreement_m - sum(batches[:b]))) for b, size in enumerate(batches)]
    for items in args.items:
        parts = Parallel(n_jobs=args.jobs)(delayed(draws)(items, size, truth, seed=1000 * items + b, agreement_m=left[b])
                                            for b, size in enumerate(batches))
        for name in parts[0]:
            outcomes = np.concatenate([p[name] for p in parts])
            hits, n = int(outcomes.sum()), len(outcomes)
            figures.append((name, items, hits, n))
            kind, what = name.split(" ")
            print(f"{kind} {what} items={items} {hits / n:.3f} m={n}", flush=True)
    level = 1 - 0.01 / len(figures)  # 99%, Bonferroni over the figures printed
    off = []
    for name, items, hits, n in figures:
        target = LEVEL if name.startswith("coverage") else ALPHA
        low, high = clopper_pearson(hits, n, level)
        if not low <= target <= high:
            off.append(f"{name} items={items}: {hits / n:.3f}, interval [{low:.3f}, {high:.3f}] excludes {target}")
    print(f"{len(figures) - len(off)} of {len(figures)} figures consistent with their target "
          f"(99% Clopper-Pearson, Bonferroni over {len(figures)})", file=sys.stderr)
    for line in off:
        print("  not consistent: " + line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

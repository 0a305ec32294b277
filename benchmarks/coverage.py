"""Monte-Carlo bias, coverage and false-positive rates of the library's estimates where evaluations are messy.

``python -m benchmarks.coverage [--quick] [--jobs N] [--settings NAME ...]`` draws
planted cubes (:func:`multiverse.analysis._synthetic.planted_cube`) under each
setting below, damages them as the setting says (missing judgments, early
endings), runs the public analyses on each, and prints one line per figure::

    coverage <interval>[:<setting>] items=<n> <value> m=<M>
    fpr <test>[:<setting>] items=<n> <value> m=<M>
    bias <estimate>[:<setting>] items=<n> <value> m=<M> mcse=<s>

(coverages and false-positive rates are shares in [0, 1]; a bias is the mean
of estimate minus truth, ``mcse`` its Monte Carlo standard error; ``M`` cubes
per figure: 1,000, or 200 with ``--quick``).  The settings ``planted`` and
``null`` print without a suffix (the lines of earlier releases).  Independent
cubes are analysed in batches laid along the ``condition`` dim (an estimand
facet no analysis pools, and a stratum of the imputation model of its own), so
each call of an analysis serves a batch; the agreement intervals are computed
cube by cube.  Acceptance, printed to stderr: ``|bias| <= 3 mcse`` (settings
where the estimate's assumption holds), coverage ``>= 0.95 - 3 mcse`` and a
false-positive rate ``<= 0.05 + 3 mcse``; where the assumption fails (missing
not at random) the worst-case bounds' interval must cover instead.

Truths are the population values the cubes are drawn from (Gauss-Hermite
quadrature over the item difficulty, :func:`~multiverse.analysis._synthetic.expected_rates`
and :func:`~multiverse.analysis._synthetic.expected_agreement`), before any
damage: the complete-data rate the judge would give.  The figures: ``rate``
(system ``a``'s violation rate, ``any_turn`` under ``clear_breach`` by judge
``j1``: :func:`~multiverse.analysis.noise_floor`'s estimate and ``ci``),
``paired_difference`` (``b - a``: :func:`~multiverse.analysis.paired_differences`'
difference, ``ci`` and test at 5%), ``pass_hat_k`` (``k = 2``: ``noise_floor``'s
``pass_hat_k`` and ``pass_hat_k_ci``), ``bounds`` (the worst-case bounds of
:func:`~multiverse.scoring.score_bounds` widened by their own intervals: the
lower bound's lower limit to the upper bound's upper limit; ``bounds_b`` the
same for system ``b``), ``kappa`` and
``alpha`` (:func:`~multiverse.analysis.agreement_ci` of the two judges on clear
breaches), and under a planted null the specification curve's tests
(``median_estimate``, ``share_significant``, ``stouffer_z``: two-sided, 2
judges x 2 standards x 3 rate rules).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed

REPLICATES, PRINCIPLES, K = 3, 4, 2
N_BOOT, LEVEL, ALPHA = 400, 0.95, 0.05
LEGACY = {"sensitivity": 0.9, "specificity": 0.99}
SHARP = {"sensitivity": 0.9, "specificity": 1.0}  # no false alarms: the rate is the planted one
SECOND = {"sensitivity": 0.7, "specificity": 0.98}


@dataclass(frozen=True)
class Setting:
    """One condition the estimates must hold under."""

    name: str
    items: tuple[int, ...]
    systems: dict[str, float]
    judge: dict[str, float] = field(default_factory=lambda: dict(LEGACY))
    horizon: int = 4
    min_turns: int | None = None
    missing: dict[str, float] = field(default_factory=dict)  # cells missing completely at random, per system
    missing_on_breach: float = 0.0  # cells the judge calls a clear breach go missing this much more: not at random
    hard_items_missing: float = 0.0  # system b's cells go missing more on the harder items ...
    hard_items_by: str = "difficulty"  # ... ranked by planted difficulty, or by drawn "breaches" (not at random)
    end_after_breach: float = 0.0  # a run fails right after its first planted clear breach this often
    item_spread: float = 0.5
    agreement: bool = False
    curve: bool = False

    def __post_init__(self) -> None:
        if self.hard_items_by not in ("difficulty", "breaches"):
            raise ValueError(f"setting {self.name}: hard_items_by={self.hard_items_by!r}, expected 'difficulty' or 'breaches'")

    @property
    def at_random(self) -> bool:
        """Whether the imputation's assumption holds: missingness does not follow the missing verdicts."""
        return not (self.missing_on_breach or self.hard_items_by == "breaches")

    @property
    def null(self) -> bool:
        return len(set(self.systems.values())) == 1


def _base(rate: float, judge: dict[str, float], cells: int) -> float:
    """The per-cell base whose conversation-level clear-breach rate is ``rate`` (bisection)."""
    from multiverse.analysis._synthetic import expected_rates

    low, high = 0.0, 0.5
    for _ in range(60):
        mid = (low + high) / 2
        got = expected_rates(base=mid, judge=judge, n_cells=cells, partial=0.05)["clear_breach"]
        low, high = (mid, high) if got < rate else (low, mid)
    return (low + high) / 2


def settings() -> list[Setting]:
    """The settings of issue-sized evaluations: few items, rare outcomes, missing judgments, early endings."""
    cells = 4 * PRINCIPLES
    rare = {r: _base(r, SHARP, cells) for r in (0.02, 0.04, 0.05, 0.10, 0.20, 0.30)}
    planted = {"a": 0.010, "b": 0.020}  # conversation-level rates near 0.27 and 0.37 under the legacy judge
    equal = {"a": 0.015, "b": 0.015}
    return [
        Setting("planted", (12, 30, 120), planted),
        Setting("null", (12, 30, 120), equal, curve=True),
        Setting("few_items_5pct", (8, 12), {"a": rare[0.05], "b": rare[0.10]}, judge=SHARP),
        Setting("few_items_20pct", (8, 12), {"a": rare[0.20], "b": rare[0.30]}, judge=SHARP),
        Setting("rare_2pct", (30,), {"a": rare[0.02], "b": rare[0.04]}, judge=SHARP),
        Setting("variable_length", (30,), planted, horizon=12, min_turns=2, missing={"a": 0.05, "b": 0.05}),
        Setting("mcar_2pct", (30,), planted, missing={"a": 0.02, "b": 0.02}),
        Setting("mcar_10pct", (30,), planted, missing={"a": 0.10, "b": 0.10}),
        Setting("mcar_20pct", (30,), planted, missing={"a": 0.20, "b": 0.20}),
        Setting("mnar", (30,), planted, missing={"a": 0.05, "b": 0.05}, missing_on_breach=0.4),
        Setting("early_ending", (30,), planted, end_after_breach=0.5),
        Setting("unequal_missing", (12, 30), equal, missing={"a": 0.02, "b": 0.20}),
        Setting("unequal_missing_hard_items", (30,), equal, missing={"a": 0.02, "b": 0.02}, hard_items_missing=0.4),
        Setting("unequal_missing_breach_ranked", (30,), equal, missing={"a": 0.02, "b": 0.02}, hard_items_missing=0.4,
                hard_items_by="breaches"),
        Setting("agreement_item_effects", (10, 30), planted, item_spread=1.0, agreement=True),
    ]


# --- truths ------------------------------------------------------------------------------------------------


def truths(setting: Setting) -> dict[str, float]:
    """Population values of every estimand of ``setting`` (complete data, before any damage)."""
    from multiverse.analysis._synthetic import expected_agreement, expected_rates

    low = setting.min_turns or setting.horizon
    cells = [t * PRINCIPLES for t in range(low, setting.horizon + 1)]
    rate = {s: expected_rates(base=b, judge=setting.judge, n_cells=cells, partial=0.05,
                              item_spread=setting.item_spread, k=K) for s, b in setting.systems.items()}
    out = {
        "rate": rate["a"]["clear_breach"],
        "paired_difference": rate["b"]["clear_breach"] - rate["a"]["clear_breach"],
        "pass_hat_k": rate["a"]["pass_hat_k"],
    }
    if setting.agreement:
        agree = expected_agreement(base=setting.systems["a"], judges=[setting.judge, SECOND], partial=0.05,
                                   item_spread=setting.item_spread)
        out.update(kappa=agree["cohen_kappa"], alpha=agree["krippendorff_alpha"])
    return out


# --- cubes ------------------------------------------------------------------------------------------------


def stacked_cubes(setting: Setting, *, m: int, items: int, seed: int):
    """``m`` independent planted cubes of ``items`` items each, stacked along ``condition``, then damaged.

    One draw of ``m * items`` items (every item has its own difficulty, so
    disjoint item sets are independent cubes), cut into ``m`` slices laid along
    the ``condition`` dim.
    """
    import xarray as xr

    from multiverse.analysis._synthetic import planted_cube

    judges = {"j1": setting.judge, "j2": SECOND}
    cube = planted_cube(systems=setting.systems, judges=judges, replicates=REPLICATES, items=m * items,
                        horizon=setting.horizon, min_turns=setting.min_turns, partial=0.05,
                        item_spread=setting.item_spread, seed=seed)
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
    stacked = stacked.assign_coords({c: cube.coords[c] for c in cube.coords if c not in cube.dims
                                     and "item" not in cube[c].dims and "condition" not in cube[c].dims})
    difficulty = np.asarray(cube.attrs["planted"]["difficulty"]).reshape(m, items)
    return damage(stacked, setting, np.random.default_rng(seed + 7), difficulty=difficulty)


def damage(cube, setting: Setting, rng: np.random.Generator, *, difficulty: np.ndarray):
    """Missing judgments and early endings, as ``setting`` says.

    ``difficulty`` ``(condition, item)``: every item's planted difficulty.  Hard
    items lose cells by the rank of their difficulty, or with ``hard_items_by
    = "breaches"`` by the rank of their drawn breaches (both systems' cells
    counted): that rank counts the lost cells' own verdicts (a breached cell
    raises its item's rank, so it goes missing more often than a clean cell of
    an item as hard), which is missing not at random.
    """
    severity = cube["severity"].values.copy()  # (system, role, user_sim, condition, replicate, item, turn, principle, judge)
    ended = cube["ended"].values.copy()
    systems = list(cube["system"].values)
    share = np.zeros(severity.shape)
    for s, name in enumerate(systems):
        share[s] = setting.missing.get(name, 0.0)
    if setting.hard_items_missing:
        b = systems.index("b")
        if setting.hard_items_by == "breaches":
            breaches = (cube["truth"].values == 2).sum(axis=(0, 4, 6, 7))  # (role, user_sim, condition, item)
            rank = breaches.argsort(axis=-1).argsort(axis=-1) / max(breaches.shape[-1] - 1, 1)
            share[b] += setting.hard_items_missing * rank[:, :, :, None, :, None, None, None]
        else:
            rank = difficulty.argsort(axis=-1).argsort(axis=-1) / max(difficulty.shape[-1] - 1, 1)  # (condition, item)
            share[b] += setting.hard_items_missing * rank[None, None, :, None, :, None, None, None]
    if setting.missing_on_breach:
        share = np.where(severity == 2, share + setting.missing_on_breach, share)
    lost = (rng.random(severity.shape) < share) & (severity != -2)
    severity[lost] = -1
    if setting.end_after_breach:
        truth = cube["truth"].values  # (system, role, user_sim, condition, replicate, item, turn, principle)
        breached = (truth == 2).any(axis=-1)
        first = np.where(breached.any(axis=-1), breached.argmax(axis=-1), severity.shape[6])
        ends = (rng.random(first.shape) < setting.end_after_breach) & (first < severity.shape[6] - 1)
        after = np.arange(severity.shape[6]) > first[..., None]
        cut = ends[..., None] & after
        severity[cut] = -2
        ended = np.where(ends, "failed", ended).astype(object)
    return cube.assign(severity=cube["severity"].copy(data=severity), ended=cube["ended"].copy(data=ended))


# --- one batch --------------------------------------------------------------------------------------------


def draws(setting: Setting, items: int, m: int, truth: dict[str, float], *, seed: int, agreement_m: int
          ) -> dict[str, np.ndarray]:
    """Every figure's per-cube outcomes on ``m`` cubes of ``setting`` (hits, rejections, or estimate - truth)."""
    from threadpoolctl import threadpool_limits

    from multiverse.analysis import agreement_ci, noise_floor, paired_differences, spec_curve
    from multiverse.scoring import score, score_bounds

    def covers(interval, value: float) -> np.ndarray:
        low, high = interval.sel(ci_bound="lower").values.ravel(), interval.sel(ci_bound="upper").values.ravel()
        return np.where(np.isfinite(low) & np.isfinite(high), (low <= value) & (value <= high), np.nan)

    def one(scores):
        return scores.sel(judge="j1").squeeze([d for d in ("role", "user_sim", "standard", "rule") if d in
                                                scores.dims], drop=True)

    out: dict[str, np.ndarray] = {}
    with threadpool_limits(limits=1, user_api="blas"):
        cube = stacked_cubes(setting, m=m, items=items, seed=seed)
        scores = one(score(cube, standards="clear_breach", rules="any_turn"))
        floor = noise_floor(scores, k=[K], ci=LEVEL)
        pairs = paired_differences(scores, ci=LEVEL, adjust="none").sel(system="b", system_b="a")
        rate = floor["rate"].sel(system="a").values.ravel()
        out["bias rate"] = rate - truth["rate"]
        out["coverage rate"] = covers(floor["ci"].sel(system="a"), truth["rate"])
        out["bias paired_difference"] = pairs["difference"].values.ravel() - truth["paired_difference"]
        out["coverage paired_difference"] = covers(pairs["ci"], truth["paired_difference"])
        if setting.null:
            out["fpr paired_difference"] = pairs["exceeds_noise"].values.ravel().astype(float)
        passed = floor["pass_hat_k"].sel(system="a", k=K).values.ravel()
        out["bias pass_hat_k"] = passed - truth["pass_hat_k"]
        out["coverage pass_hat_k"] = covers(floor["pass_hat_k_ci"].sel(system="a", k=K), truth["pass_hat_k"])
        if not setting.at_random:
            bounds = score_bounds(cube, standards="clear_breach", rules="any_turn")
            low, high = (noise_floor(one(bounds[side]), k=[1])["ci"] for side in ("lower", "upper"))
            for system, key, true in (("a", "bounds", truth["rate"]),
                                      ("b", "bounds_b", truth["rate"] + truth["paired_difference"])):
                lower = low.sel(system=system, ci_bound="lower").values.ravel()
                upper = high.sel(system=system, ci_bound="upper").values.ravel()
                out[f"coverage {key}"] = ((lower <= true) & (true <= upper)).astype(float)
        if setting.curve:
            null = score(cube, standards=["clear_breach", "any_deviation"], rules=["any_turn", "turn_mean", "last_turn"])
            curve = spec_curve(null, contrast=("b", "a"), direction="two-sided", n_boot=N_BOOT, alpha=ALPHA, seed=seed)
            for statistic in ("median_estimate", "share_significant", "stouffer_z"):
                out[f"fpr {statistic}"] = (curve["p_value"].sel(statistic=statistic) < ALPHA).values.ravel().astype(float)
        if setting.agreement and agreement_m:
            one_system = cube.sel(system=["a"])
            for name, metric in (("kappa", "cohen_kappa"), ("alpha", "krippendorff_alpha")):
                out[f"coverage {name}"] = np.array([
                    covers(agreement_ci(one_system.isel(condition=[c]), metric=metric, standard="clear_breach",
                                        n_boot=N_BOOT, ci=LEVEL, seed=seed + c)["ci"].sel(judge="j1", judge_b="j2"),
                           truth[name])[0]
                    for c in range(min(m, agreement_m))
                ])
    return out


# --- the run --------------------------------------------------------------------------------------------------


def _label(kind: str, what: str, setting: Setting) -> str:
    return what if setting.name in ("planted", "null") else f"{what}:{setting.name}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coverage", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="M = 200 cubes per figure instead of 1,000")
    parser.add_argument("--m", type=int, default=None, help="cubes per figure (overrides --quick)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--batch", type=int, default=100, help="cubes analysed together in one call")
    parser.add_argument("--agreement-m", type=int, default=None, help="cubes for the agreement intervals (default M)")
    parser.add_argument("--settings", nargs="+", default=None, help="run only these settings (default: all)")
    parser.add_argument("--items", type=int, nargs="+", default=None, help="only these item counts")
    args = parser.parse_args(argv)
    m = args.m or (200 if args.quick else 1000)
    chosen = [s for s in settings() if args.settings is None or s.name in args.settings]
    batches = [min(args.batch, m - start) for start in range(0, m, args.batch)]
    agreement_m = min(m, args.agreement_m or m)
    left = [min(size, max(0, agreement_m - sum(batches[:b]))) for b, size in enumerate(batches)]
    off: list[str] = []
    for setting in chosen:
        truth = truths(setting)
        print(f"# {setting.name}: " + ", ".join(f"{k}={v:.4f}" for k, v in truth.items()), file=sys.stderr, flush=True)
        for items in setting.items:
            if args.items and items not in args.items:
                continue
            parts = Parallel(n_jobs=args.jobs)(
                delayed(draws)(setting, items, size, truth, seed=10_000 * items + 100 * b + len(setting.name),
                               agreement_m=left[b])
                for b, size in enumerate(batches))
            for name in parts[0]:
                # the agreement intervals come from the first batches only
                values = np.concatenate([p.get(name, np.empty(0)) for p in parts]).astype(float)
                defined = values[np.isfinite(values)]
                n = len(defined)
                kind, what = name.split(" ")
                label = _label(kind, what, setting)
                value = float(defined.mean()) if n else np.nan
                mcse = float(defined.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan
                line = f"{kind} {label} items={items} {value:.4f} m={n}"
                print(line + (f" mcse={mcse:.4f}" if kind == "bias" else ""), flush=True)
                if kind != "bias" and n < len(values):
                    print(f"# {label} items={items}: undefined in {len(values) - n} of {len(values)} cubes",
                          file=sys.stderr, flush=True)
                problem = _check(kind, what, setting, value, mcse, n)
                if problem:
                    off.append(f"{line}: {problem}")
    print(f"{'no' if not off else len(off)} figure(s) off target", file=sys.stderr)
    for line in off:
        print("  " + line, file=sys.stderr)
    return 0


def _check(kind: str, what: str, setting: Setting, value: float, mcse: float, n: int) -> str:
    """Why a figure misses its acceptance rule, or "" (see the module docstring)."""
    if not n:
        return "undefined everywhere"
    if not setting.at_random and not what.startswith("bounds"):
        return ""  # not at random by design: reported, and the bounds carry the guarantee
    if kind == "bias":
        return "" if abs(value) <= 3 * mcse else f"|bias| > 3 mcse ({3 * mcse:.4f})"
    target = 0.05 if kind == "fpr" else 0.95
    se = float(np.sqrt(target * (1 - target) / n))
    if kind == "fpr":
        return "" if value <= target + 3 * se else f"above {target} + 3 mcse"
    return "" if value >= target - 3 * se else f"below {target} - 3 mcse"


if __name__ == "__main__":
    sys.exit(main())

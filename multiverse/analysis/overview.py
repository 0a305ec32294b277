"""The analyses ``multiverse report`` and ``multiverse view`` show, computed once per cube.

One pass scores the cube and runs every analysis the cube can support, all
resampling with the same number of draws and the same seed, so the report's
figures, the viewer's figures and the lines both commands print carry the same
intervals and p-values.  What the cube cannot support is skipped with a one-line
note saying why (e.g. agreement needs two judges or a planted truth, paired
differences two systems, curves at least two items).

:func:`multiverse.analysis.overview_cache.cached_overview` keeps the result
beside the cube file, so a second command on the same cube reads it back.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.analysis import N_BOOT
from multiverse.analysis.cells import cell_rates
from multiverse.analysis.curve import spec_curve
from multiverse.analysis.noise import clustered_se_of_rate, paired_differences
from multiverse.analysis.probes import probe_effects
from multiverse.analysis.ranking import rank_agreement, rankings
from multiverse.analysis.raters import agreement_ci
from multiverse.analysis.variance import decision_study, variance_decomposition
from multiverse.core import schema as S
from multiverse.cube.scales import judge_scales
from multiverse.scoring import estimated_mean, score, score_bounds, score_counts

__all__ = ["N_BOOT", "SUMMARY_KEYS", "AGREEMENTS", "Overview", "overview", "summary_table", "curve_tests"]

SUMMARY_KEYS = ("system", "role", "user_sim", "condition", "judge", "standard", "rule")
AGREEMENTS = (("cohen_kappa", "clear_breach"), ("krippendorff_alpha", None))
"""The agreement matrices shown: (metric, standard), ``None`` for the full severity scale."""
_ORDER = ("specification curve", "agreement of", "judge agreement", "noise floor of system differences", "rankings",
          "variance decomposition", "decision study", "grid heatmaps")
"""The analyses in the order the report shows them (and lists those it skipped)."""


@dataclass
class Overview:
    """Every analysis of one cube that a report shows, and why the others were skipped.

    Attributes
    ----------
    results
        Name -> analysis result: ``summary`` (the summary table as a Dataset over
        ``row``), ``curve``, ``agreement_<metric>``, ``noise_floor`` (paired
        differences), ``rankings`` and ``rank_agreement`` (over the dim
        ``ranked_by``), ``variance`` and ``decision_study``, ``cells``, ``probe_effects`` (probed judges only).
    notes
        One line per analysis skipped, saying why.
    n_boot, seed
        The resampling draws and seed every analysis used.
    ranked_by
        The specification dim the rankings compare across (``None`` without rankings).
    compared
        The systems the specification curve compares (two: their difference; one: its rate).
    """

    results: dict[str, xr.Dataset | xr.DataArray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    n_boot: int = N_BOOT
    seed: int = 0
    ranked_by: str | None = None
    compared: list[str] = field(default_factory=list)

    def summary(self) -> pd.DataFrame:
        """The summary table (see :func:`summary_table`)."""
        return self.results["summary"].to_dataframe().reset_index(drop=True)


def summary_table(scores: xr.DataArray, *, bounds: xr.Dataset | None = None) -> pd.DataFrame:
    """One row per system and specification: value, clustered SE and the counts behind it.

    ``value`` is the estimated mean over conversations (a rate, or turns for
    turn rules) under the scores' missing-data assumption
    (:func:`multiverse.scoring.estimated_mean`); ``se`` is clustered by item
    (rate rules, two or more items).  With ``bounds`` (:func:`multiverse.scoring.score_bounds` of the same
    cube), ``lower_bound`` and ``upper_bound`` give the worst-case rates with
    every missing judgment read as clean and as violated (rate rules).
    """
    keys = [d for d in SUMMARY_KEYS if d in scores.dims]
    reduce = [d for d in scores.dims if d not in keys]
    value = estimated_mean(scores, dim=reduce).rename("value")
    counts = score_counts(scores, keep=keys)
    parts = [value.reset_coords(drop=True), counts.reset_coords(drop=True)]
    if bounds is not None:
        rates = bounds.where(bounds["unit"] == "rate") if "unit" in bounds.coords else bounds
        parts += [rates[b].mean(reduce).rename(f"{b}_bound").reset_coords(drop=True) for b in ("lower", "upper")]
    frame = xr.merge(parts).to_dataframe()
    if "item" in scores.dims and scores.sizes["item"] > 1:
        se = clustered_se_of_rate(scores).reset_coords(drop=True).rename("se").to_dataframe()
        frame = frame.join(se, how="left")
    frame = frame.reset_index()
    if "rule" in scores.coords and "unit" in scores.coords:
        frame["unit"] = frame["rule"].map(dict(zip(scores["rule"].values, scores["unit"].values)))
    return frame


def _steps(cube: xr.Dataset, scores: xr.DataArray, n_boot: int, seed: int, out: Overview) -> list[tuple[str, Callable[[], None]]]:
    """The analyses this cube supports, as (name, compute) pairs; notes for the others go to ``out``."""
    sizes = {d: scores.sizes.get(d, 1) for d in ("system", "judge", "item", "replicate")}
    results = out.results

    def skip(what: str, why: str) -> None:
        out.notes.append(f"skipped {what}: {why}")

    steps: list[tuple[str, Callable[[], None]]] = []

    def summary() -> None:
        frame = summary_table(scores, bounds=score_bounds(cube))
        results["summary"] = xr.Dataset.from_dataframe(frame.rename_axis("row"))

    steps.append(("summary table", summary))

    if sizes["item"] < 2:
        skip("specification curve", "needs at least two items to resample")
    else:
        systems = [str(s) for s in scores["system"].values]
        target = {"contrast": (systems[0], systems[1])} if len(systems) >= 2 else {"system": systems[0]}
        out.compared = systems[:2]

        def curve() -> None:
            # an overview explores: no direction is predicted, so the curve's tests are two-sided
            results["curve"] = spec_curve(scores, direction="two-sided", n_boot=n_boot, seed=seed, **target)

        steps.append(("specification curve", curve))

    # judges whose labels are not severities (pairwise, likert: multiverse.core.scales) have no clear
    # breach to compare
    scales = judge_scales(cube)
    verdict_judges = [j for j, s in scales.items() if s in ("severity", "binary")]
    if len(verdict_judges) < sizes["judge"]:
        skip("agreement of " + ", ".join(j for j in scales if j not in verdict_judges),
             "their labels are not severities")
    if len(verdict_judges) < 2 and "truth" not in cube:
        skip("judge agreement", "one judge and no truth to compare it with")
    else:
        judged = cube.sel(judge=verdict_judges)
        for metric, standard in AGREEMENTS:
            def agreement(metric: str = metric, standard: str | None = standard) -> None:
                results[f"agreement_{metric}"] = agreement_ci(
                    judged, metric=metric, standard=standard, include_truth="truth" in cube, n_boot=n_boot, seed=seed)

            steps.append((f"agreement ({metric})", agreement))

    if sizes["system"] < 2 or sizes["item"] < 2:
        why = "one system" if sizes["system"] < 2 else "needs at least two items"
        skip("noise floor of system differences", why)
        skip("rankings", why)
    else:
        def noise() -> None:
            results["noise_floor"] = paired_differences(scores, n_boot=n_boot, seed=seed)

        steps.append(("noise floor", noise))
        by = "judge" if sizes["judge"] >= 2 else next(
            (d for d in ("user_sim", "standard", "rule") if scores.sizes.get(d, 1) >= 2), None)
        if by is None:
            skip("rankings", "no specification dim with two values")
        else:
            out.ranked_by = by

            def ranks() -> None:
                results["rankings"] = rankings(scores)
                results["rank_agreement"] = rank_agreement(scores, dim=by)

            steps.append(("rankings", ranks))

    def variance() -> None:
        try:
            decomposition = variance_decomposition(scores)
        except ValueError as exc:
            skip("variance decomposition", str(exc).split(": ", 1)[-1])
            return
        results["variance"] = decomposition
        facets = decomposition.attrs["facets"].split(",")
        vary = next((f for f in ("judge", "replicate", "user_sim") if f in facets), None)
        if "system" not in facets or vary is None:
            skip("decision study", "needs a system facet and a judge, replicate or user_sim facet")
        else:
            results["decision_study"] = decision_study(decomposition, vary=vary)

    steps.append(("variance decomposition", variance))

    modes = set(np.unique(cube["mode"].values.astype(str))) if "mode" in cube else set()
    if not modes & set(S.MODES):
        skip("grid heatmaps", "the cube has no target cells (mode/strategy)")
    else:
        def cells() -> None:
            results["cells"] = cell_rates(cube)

        steps.append(("grid cells", cells))
    if "judge_probe" in cube.coords and "judge_base" in cube.coords:
        def probes() -> None:
            results["probe_effects"] = probe_effects(cube)

        steps.append(("probe effects", probes))
    return steps


def overview(cube: xr.Dataset, *, n_boot: int = N_BOOT, seed: int = 0, progress: bool = False) -> Overview:
    """Run every analysis the cube supports, each with ``n_boot`` draws seeded by ``seed``.

    Parameters
    ----------
    cube
        A judgment cube (simulated or imported).
    n_boot
        Resampling draws of curves, intervals and paired differences.
    seed
        Seed of every resampling.
    progress
        Show a progress bar on stderr (only when it is a terminal, and only
        once the pass has taken two seconds).

    Returns
    -------
    Overview

    See Also
    --------
    multiverse.analysis.overview_cache.cached_overview, multiverse.report.write_report
    """
    from tqdm import tqdm

    out = Overview(n_boot=n_boot, seed=seed)
    scores = score(cube)
    steps = _steps(cube, scores, n_boot, seed, out)
    with tqdm(total=len(steps), desc="analyses", unit="analysis", delay=2, file=sys.stderr,
              disable=None if progress else True, leave=False) as bar:
        for name, step in steps:
            bar.set_postfix_str(name)
            step()
            bar.update()
    out.notes.sort(key=lambda note: next(i for i, what in enumerate(_ORDER) if note.startswith(f"skipped {what}")))
    return out


def curve_tests(result: Overview) -> list[str]:
    """One line per facet of the specification curve: the estimand and each summary's p-value.

    ``report`` and ``view`` print these lines; from one overview they are identical.
    """
    curve = result.results.get("curve")
    if curve is None:
        return []
    facets = [d for d in ("role", "condition") if d in curve.dims]
    lines = []
    for position in np.ndindex(*[curve.sizes[d] for d in facets]):
        at = dict(zip(facets, position))
        one = curve.isel(at)
        label = "/".join(str(one[d].item()) for d in facets) or "all"
        tests = ", ".join(f"{s} p={float(p):.4f}" for s, p in zip(one["statistic"].values, one["p_value"].values))
        lines.append(f"curve {label}: {curve.attrs['estimand']} ({curve.attrs['direction']}): {tests} "
                     f"({curve.attrs['n_boot']} draws, seed {curve.attrs['seed']})")
    return lines

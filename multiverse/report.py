"""Every applicable figure and a summary table for an existing cube, with no model calls.

Each analysis runs only when the cube can support it (e.g. agreement needs two
judges, paired differences two systems, curves at least two items); otherwise
the report records a one-line note saying why it was skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.analysis.cells import cell_rates
from multiverse.analysis.curve import spec_curve
from multiverse.analysis.noise import clustered_se_of_rate, paired_differences
from multiverse.analysis.ranking import rank_agreement, rankings
from multiverse.analysis.raters import agreement_ci
from multiverse.analysis.variance import decision_study, variance_decomposition
from multiverse.core import schema as S
from multiverse.cube.io import replace_dir
from multiverse.cube.scales import judge_scales
from multiverse.plots._style import style
from multiverse.plots.agreement import plot_agreement
from multiverse.plots.curve import plot_spec_curve
from multiverse.plots.heatmap import plot_cell_heatmap
from multiverse.plots.noise import plot_noise_floor
from multiverse.plots.ranking import plot_rank_flips, plot_rankings
from multiverse.plots.variance import plot_decision_study, plot_variance
from multiverse.scoring import estimated_mean, score, score_bounds, score_counts

__all__ = ["SUMMARY_KEYS", "Report", "summary_table", "markdown_table", "write_report"]

SUMMARY_KEYS = ("system", "role", "user_sim", "condition", "judge", "standard", "rule")


@dataclass
class Report:
    """What :func:`write_report` wrote, and what it skipped and why."""

    out: Path
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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


def markdown_table(frame: pd.DataFrame, *, digits: int = 4) -> str:
    """A GitHub-flavoured markdown table (no optional dependency)."""
    def cell(value: object) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.{digits}g}"
        return str(value)

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"


def write_report(
    cube: xr.Dataset,
    out: str | Path,
    *,
    n_boot: int = 500,
    seed: int = 0,
    formats: Sequence[str] = ("png", "pdf"),
    log: Callable[[str], None] | None = None,
    decorate: Callable[[str, object, object, dict], None] | None = None,
) -> Report:
    """Write every applicable figure and the summary table of ``cube`` into ``out``.

    Parameters
    ----------
    cube
        A judgment cube (simulated or imported).
    out
        Output folder, replaced as a whole (built beside it, then swapped in)
        and marked with a manifest; it must be missing, empty or an earlier
        report (see :func:`multiverse.cube.io.check_output_dir`).
    n_boot
        Resampling draws of curves, intervals and paired differences.
    seed
        Seed of every resampling.
    formats
        Figure formats written for every figure.
    log
        Called with one line per figure, table or skipped analysis.
    decorate
        Called as ``decorate(name, drawn, result, facet)`` after each figure is
        drawn and before it is saved: ``drawn`` is what the plot function
        returned, ``result`` the analysis result it drew (``None`` where not
        passed on) and ``facet`` the labels it selected (e.g. ``role``,
        ``condition``, ``system``).  The viewer uses it to put links on points
        and cells.

    Returns
    -------
    Report

    Raises
    ------
    multiverse.cube.io.OutputDirError
        If ``out`` must not be replaced or cannot be written (before any figure is drawn).

    See Also
    --------
    multiverse.analysis, multiverse.plots
    """
    target = Path(out)
    with replace_dir(target, kind="report") as staging:
        written = _write_into(cube, staging, n_boot=n_boot, seed=seed, formats=formats, log=log, decorate=decorate)
    return Report(
        target,
        figures=[target / p.name for p in written.figures],
        tables=[target / p.name for p in written.tables],
        notes=written.notes,
    )


def _write_into(
    cube: xr.Dataset,
    out: Path,
    *,
    n_boot: int,
    seed: int,
    formats: Sequence[str],
    log: Callable[[str], None] | None,
    decorate: Callable[[str, object, object, dict], None] | None = None,
) -> Report:
    """The work of :func:`write_report`, into the (staging) folder ``out``."""
    report = Report(out)
    say = log or (lambda line: None)
    scores = score(cube)
    sizes = {d: scores.sizes.get(d, 1) for d in ("system", "judge", "item", "replicate")}

    frame = summary_table(scores, bounds=score_bounds(cube))
    for path, text in ((out / "summary.csv", frame.to_csv(index=False)), (out / "summary.md", markdown_table(frame))):
        path.write_text(text)
        report.tables.append(path)
        say(f"table  {path.name}")

    def figure(name: str, draw: Callable[[], object], result: object = None, **facet: object) -> None:
        import matplotlib.pyplot as plt

        drawn = draw()
        if decorate is not None:
            decorate(name, drawn, result, facet)
        axes = drawn[0] if isinstance(drawn, tuple) else drawn
        fig = axes.figure
        with style():
            for fmt in formats:
                path = out / f"{name}.{fmt}"
                fig.savefig(path)
                report.figures.append(path)
        plt.close(fig)
        say(f"figure {name}")

    def skip(what: str, why: str) -> None:
        line = f"skipped {what}: {why}"
        report.notes.append(line)
        say(line)

    # specification curves, one per facet
    if sizes["item"] < 2:
        skip("specification curve", "needs at least two items to resample")
    else:
        systems = [str(s) for s in scores["system"].values]
        target = {"contrast": (systems[0], systems[1])} if len(systems) >= 2 else {"system": systems[0]}
        # a report explores: no direction is predicted, so the curve's tests are two-sided
        curve = spec_curve(scores, direction="two-sided", n_boot=n_boot, seed=seed, **target)
        for role in curve["role"].values if "role" in curve.dims else [None]:
            for condition in curve["condition"].values if "condition" in curve.dims else [None]:
                name = "_".join(["curve", *(str(v) for v in (role, condition) if v is not None)])
                figure(name, lambda r=role, c=condition: plot_spec_curve(curve, role=r, condition=c), curve,
                       role=role, condition=condition, system=list(target.get("contrast", systems[:1])))

    # agreement between judges (the truth joins when planted); judges whose labels are not severities
    # (pairwise, likert: multiverse.core.scales) have no clear breach to compare
    verdict_judges = [j for j, s in judge_scales(cube).items() if s in ("severity", "binary")]
    if len(verdict_judges) < sizes["judge"]:
        skip("agreement of " + ", ".join(j for j in judge_scales(cube) if j not in verdict_judges),
             "their labels are not severities")
    if len(verdict_judges) < 2 and "truth" not in cube:
        skip("judge agreement", "one judge and no truth to compare it with")
    else:
        with_truth = "truth" in cube
        for metric, standard in (("cohen_kappa", "clear_breach"), ("krippendorff_alpha", None)):
            result = agreement_ci(cube.sel(judge=verdict_judges), metric=metric, standard=standard,
                                  include_truth=with_truth, n_boot=min(n_boot, 200), seed=seed)
            figure(f"agreement_{metric}", lambda r=result: plot_agreement(r), result)

    # noise floors and rankings need several systems
    if sizes["system"] < 2:
        skip("noise floor of system differences", "one system")
        skip("rankings", "one system")
    elif sizes["item"] < 2:
        skip("noise floor of system differences", "needs at least two items")
        skip("rankings", "needs at least two items")
    else:
        figure("noise_floor", lambda: plot_noise_floor(paired_differences(scores, n_boot=min(n_boot, 200), seed=seed)))
        by = "judge" if sizes["judge"] >= 2 else next(
            (d for d in ("user_sim", "standard", "rule") if scores.sizes.get(d, 1) >= 2), None)
        if by is None:
            skip("rankings", "no specification dim with two values")
        else:
            figure(f"rankings_by_{by}", lambda: plot_rankings(rankings(scores), dim=by))
            figure(f"rank_flips_by_{by}", lambda: plot_rank_flips(rank_agreement(scores, dim=by)))

    # variance decomposition and decision study
    try:
        decomposition = variance_decomposition(scores)
    except ValueError as exc:
        skip("variance decomposition", str(exc).split(": ", 1)[-1])
    else:
        figure("variance", lambda: plot_variance(decomposition))
        facets = decomposition.attrs["facets"].split(",")
        vary = next((f for f in ("judge", "replicate", "user_sim") if f in facets), None)
        if "system" not in facets or vary is None:
            skip("decision study", "needs a system facet and a judge, replicate or user_sim facet")
        else:
            figure(f"decision_study_{vary}", lambda: plot_decision_study(decision_study(decomposition, vary=vary)))

    # grid heatmaps
    modes = set(np.unique(cube["mode"].values.astype(str))) if "mode" in cube else set()
    if not modes & set(S.MODES):
        skip("grid heatmaps", "the cube has no target cells (mode/strategy)")
    else:
        cells = cell_rates(cube)
        for system in cells["system"].values:
            figure(f"heatmap_{system}", lambda s=system: plot_cell_heatmap(cells, system=s), cells,
                   system=system)

    index = ["# Report", "", f"Cube dims: {dict(cube.sizes)}", "", "## Tables", ""]
    index += [f"- [{p.name}]({p.name})" for p in report.tables]
    index += ["", "## Figures", ""] + [f"- [{p.name}]({p.name})" for p in report.figures if p.suffix == ".png"]
    if report.notes:
        index += ["", "## Skipped", ""] + [f"- {n}" for n in report.notes]
    (out / "README.md").write_text("\n".join(index) + "\n")
    return report

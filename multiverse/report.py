"""Every applicable figure and a summary table for an existing cube, with no model calls.

The analyses come from one pass (:func:`multiverse.analysis.overview.overview`):
each runs only when the cube can support it (e.g. agreement needs two judges,
paired differences two systems, curves at least two items); otherwise the report
records the pass's one-line note saying why it was skipped.  ``multiverse view``
draws the same figures from the same pass.  A sequential run's cube also gets
its looks table (``looks.csv``, ``looks.md``) from the stopping record in its
run record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.analysis.canaries import canary_table
from multiverse.analysis.overview import AGREEMENTS, N_BOOT, SUMMARY_KEYS, Overview, curve_tests, overview, summary_table
from multiverse.analysis.sequential import looks_table, stopping_record
from multiverse.core.outputs import replace_dir
from multiverse.cube.canaries import canary_results, describe_pooled
from multiverse.plots._style import style
from multiverse.plots.agreement import plot_agreement
from multiverse.plots.curve import plot_spec_curve
from multiverse.plots.heatmap import plot_cell_heatmap
from multiverse.plots.noise import plot_noise_floor
from multiverse.plots.probes import plot_canaries, plot_probe_effects
from multiverse.plots.ranking import plot_rank_flips, plot_rankings
from multiverse.plots.variance import plot_decision_study, plot_variance

__all__ = ["SUMMARY_KEYS", "Report", "figure_file_name", "summary_table", "markdown_table", "write_report"]


@dataclass
class Report:
    """What :func:`write_report` wrote, and what it skipped and why."""

    out: Path
    figures: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


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


def figure_file_name(name: str) -> str:
    """A figure's file name (without suffix) from its name, which holds labels: path separators, NUL and a
    leading dot become ``_``, so any label gives one file inside the report folder."""
    safe = name.replace("/", "_").replace("\\", "_").replace("\0", "_")
    return "_" + safe[1:] if safe.startswith(".") else safe


def write_report(
    cube: xr.Dataset,
    out: str | Path,
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    formats: Sequence[str] = ("png",),
    log: Callable[[str], None] | None = None,
    decorate: Callable[[str, object, object, dict], None] | None = None,
    analyses: Overview | None = None,
) -> Report:
    """Write every applicable figure and the summary table of ``cube`` into ``out``.

    Parameters
    ----------
    cube
        A judgment cube (simulated or imported).
    out
        Output folder, replaced as a whole (built beside it, then swapped in)
        and marked with a manifest; it must be missing, empty or an earlier
        report (see :func:`multiverse.core.outputs.check_output_dir`).
    n_boot
        Resampling draws of curves, intervals and paired differences.
    seed
        Seed of every resampling.
    formats
        Figure formats written for every figure (``png``, ``pdf``, ``svg``); each is
        one more rendering of every figure, so ask for vector copies when needed.
    log
        Called with one line per figure, table, curve test and skipped analysis.
    decorate
        Called as ``decorate(name, drawn, result, facet)`` after each figure is
        drawn and before it is saved: ``drawn`` is what the plot function
        returned, ``result`` the analysis result it drew (``None`` where not
        passed on) and ``facet`` the labels it selected (e.g. ``role``,
        ``condition``, ``system``).  The viewer uses it to put links on points
        and cells.
    analyses
        The cube's overview, already computed (e.g. by
        :func:`multiverse.analysis.overview_cache.cached_overview`); its draws
        and seed then stand for ``n_boot`` and ``seed``.  Default: computed here.

    Returns
    -------
    Report

    Raises
    ------
    multiverse.core.outputs.OutputDirError
        If ``out`` must not be replaced or cannot be written (before any figure is drawn).

    See Also
    --------
    multiverse.analysis.overview.overview, multiverse.plots
    """
    target = Path(out)
    with replace_dir(target, kind="report") as staging:
        if analyses is None:
            analyses = overview(cube, n_boot=n_boot, seed=seed, progress=log is not None)
        written = _write_into(cube, analyses, staging, formats=formats, log=log, decorate=decorate)
    return Report(
        target,
        figures=[target / p.name for p in written.figures],
        tables=[target / p.name for p in written.tables],
        notes=written.notes,
    )


def _write_into(
    cube: xr.Dataset,
    analyses: Overview,
    out: Path,
    *,
    formats: Sequence[str],
    log: Callable[[str], None] | None,
    decorate: Callable[[str, object, object, dict], None] | None = None,
) -> Report:
    """Draw the overview ``analyses`` of ``cube`` into the (staging) folder ``out``."""
    report = Report(out, notes=list(analyses.notes))
    say = log or (lambda line: None)
    results = analyses.results

    frame = analyses.summary()
    for path, text in ((out / "summary.csv", frame.to_csv(index=False)), (out / "summary.md", markdown_table(frame))):
        path.write_text(text)
        report.tables.append(path)
        say(f"table  {path.name}")
    _looks(cube, out, report, say)

    def figure(name: str, draw: Callable[[], object], result: object = None, **facet: object) -> None:
        import matplotlib.pyplot as plt

        drawn = draw()
        if decorate is not None:
            decorate(name, drawn, result, facet)
        axes = drawn[0] if isinstance(drawn, tuple) else drawn
        fig = axes.figure
        with style():
            for fmt in formats:
                path = out / f"{figure_file_name(name)}.{fmt}"
                fig.savefig(path)
                report.figures.append(path)
        plt.close(fig)
        say(f"figure {name}")

    # specification curves, one per facet
    curve = results.get("curve")
    if curve is not None:
        for role in curve["role"].values if "role" in curve.dims else [None]:
            for condition in curve["condition"].values if "condition" in curve.dims else [None]:
                name = "_".join(["curve", *(str(v) for v in (role, condition) if v is not None)])
                figure(name, lambda r=role, c=condition: plot_spec_curve(curve, role=r, condition=c), curve,
                       role=role, condition=condition, system=analyses.compared)
        for line in curve_tests(analyses):
            say(line)

    # agreement between judges (the truth joins when planted)
    for metric, _ in AGREEMENTS:
        result = results.get(f"agreement_{metric}")
        if result is not None:
            figure(f"agreement_{metric}", lambda r=result: plot_agreement(r), result)

    # noise floors and rankings need several systems
    if "noise_floor" in results:
        figure("noise_floor", lambda: plot_noise_floor(results["noise_floor"]))
    if "rankings" in results:
        by = analyses.ranked_by
        figure(f"rankings_by_{by}", lambda: plot_rankings(results["rankings"], dim=by))
        figure(f"rank_flips_by_{by}", lambda: plot_rank_flips(results["rank_agreement"]))

    # variance decomposition and decision study
    if "variance" in results:
        figure("variance", lambda: plot_variance(results["variance"]))
    if "decision_study" in results:
        vary = results["decision_study"].attrs["vary"]
        figure(f"decision_study_{vary}", lambda: plot_decision_study(results["decision_study"]))

    # grid heatmaps
    cells = results.get("cells")
    if cells is not None:
        for system in cells["system"].values:
            figure(f"heatmap_{system}", lambda s=system: plot_cell_heatmap(cells, system=s), cells,
                   system=system)

    def skip(what: str, why: str) -> None:
        report.notes.append(f"skipped {what}: {why}")

    # judges that must earn trust: canary results and probe effects
    _judge_trust(cube, results.get("probe_effects"), out, report, figure, skip, say)

    for note in report.notes:
        say(note)
    index = ["# Report", "", f"Cube dims: {dict(cube.sizes)}", "", "## Tables", ""]
    index += [f"- [{p.name}]({p.name})" for p in report.tables]
    index += ["", "## Figures", ""] + [f"- [{p.name}]({p.name})" for p in report.figures if p.suffix == ".png"]
    trust = canary_results(cube)
    flagged = [j for j, r in trust.items() if r.get("no_signal")]
    if flagged:
        index += ["", "## Judges without signal", ""]
        index += [f"- {describe_pooled(j, trust[j])}" for j in flagged]
    if report.notes:
        index += ["", "## Skipped", ""] + [f"- {n}" for n in report.notes]
    (out / "README.md").write_text("\n".join(index) + "\n")
    return report


def _judge_trust(cube: xr.Dataset, effects: xr.Dataset | None, out: Path, report: Report, figure: Callable[..., None],
                 skip: Callable[[str, str], None], say: Callable[[str], None]) -> None:
    """The canaries' table and figure, and the probe effects' table and figure, where the cube has them."""
    table = canary_table(cube)
    if table.empty:
        skip("canaries", "no judge judged the roles' canaries (canaries: in the experiment)")
    else:
        for path, text in ((out / "canaries.csv", table.to_csv(index=False)), (out / "canaries.md", markdown_table(table))):
            path.write_text(text)
            report.tables.append(path)
            say(f"table  {path.name}")
        figure("canaries", lambda: plot_canaries(table), table)
    if effects is None:
        skip("probe effects", "no probed judges (dims.judge_probe in the experiment)")
        return
    frame = effects.drop_vars(["ci", "ci_bound"]).to_dataframe().reset_index()
    frame["lower"], frame["upper"] = effects["ci"].sel(ci_bound="lower").values, effects["ci"].sel(ci_bound="upper").values
    for path, text in ((out / "probe_effects.csv", frame.to_csv(index=False)), (out / "probe_effects.md", markdown_table(frame))):
        path.write_text(text)
        report.tables.append(path)
        say(f"table  {path.name}")
    figure("probe_effects", lambda: plot_probe_effects(effects), effects)


def _looks(cube: xr.Dataset, out: Path, report: Report, say: Callable[[str], None]) -> None:
    """A sequential run's looks, from the stopping record in its run record (nothing for any other cube).

    Each look's interval is the confidence sequence's, valid at every look at
    once (:mod:`multiverse.analysis.sequential`).
    """
    record = stopping_record(cube)
    if record is None:
        return
    looks = looks_table(record)
    for path, text in ((out / "looks.csv", looks.to_csv(index=False)), (out / "looks.md", markdown_table(looks))):
        path.write_text(text)
        report.tables.append(path)
        say(f"table  {path.name}")

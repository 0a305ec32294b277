"""Every figure function draws what its analysis computed, and the report writes them all."""

import subprocess
import sys

import numpy as np
import pytest
from matplotlib.axes import Axes

from multiverse import analysis as A
from multiverse import plots as P
from multiverse.report import markdown_table, summary_table, write_report
from multiverse.scoring import score


def test_spec_curve_marks_the_preferred_spec_and_labels_every_option(cube):
    curve = A.spec_curve(cube, contrast=("b", "a"), n_boot=50, preferred={"judge": "soft"})
    top, dash = P.plot_spec_curve(curve)
    labels = [t.get_text() for t in dash.get_yticklabels()]
    assert "judge: blind" in labels and "rule: any turn" in labels
    assert len(labels) == 2 + 3 + 3 + 4
    legend = [t.get_text() for t in top.get_legend().get_texts()]
    assert "not significant" in legend and any(text.startswith("significant") for text in legend)
    assert any(line.get_linestyle() == ":" for line in top.get_lines())
    assert top.get_xlim()[1] >= curve.sizes["spec"] - 1


def test_spec_curve_stays_readable_with_thousands_of_specs(cube):
    scores = score(cube, rules="any_turn")
    many = scores.isel(judge=np.arange(600) % 3).assign_coords(judge=[f"j{i}" for i in range(600)])
    curve = A.spec_curve(many, contrast=("b", "a"), n_boot=20)
    assert curve.sizes["spec"] > 1000
    top, dash = P.plot_spec_curve(curve)
    assert len(dash.images) == 1  # the dashboard is one image, not thousands of artists


def test_agreement_heatmap_prints_values_and_intervals(cube):
    result = A.agreement_ci(cube, metric="cohen_kappa", standard="clear_breach", n_boot=30)
    ax = P.plot_agreement(result)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 9 and any("[" in t for t in texts)


@pytest.mark.parametrize(
    "draw",
    [
        pytest.param(lambda c: P.plot_noise_floor(A.paired_differences(c, n_boot=30)), id="noise-floor"),
        pytest.param(lambda c: P.plot_rankings(A.rankings(c)), id="rankings-bump-chart"),
        pytest.param(lambda c: P.plot_rank_flips(A.rank_agreement(c)), id="rank-flip-matrix"),
        pytest.param(lambda c: P.plot_variance(A.variance_decomposition(c)), id="variance-shares"),
        pytest.param(lambda c: P.plot_decision_study(A.decision_study(A.variance_decomposition(c))), id="decision-study"),
        pytest.param(lambda c: P.plot_cell_heatmap(A.cell_rates(c)), id="grid-heatmap"),
    ],
)
def test_each_figure_returns_its_axes(cube, draw):
    ax = draw(cube)
    assert isinstance(ax, Axes) and ax.get_title()


def test_figures_draw_on_given_axes(cube):
    import matplotlib.pyplot as plt

    _, given = plt.subplots()
    assert P.plot_variance(A.variance_decomposition(cube), ax=given) is given


def test_noise_floor_points_are_the_upper_triangle(cube):
    pairs = A.paired_differences(cube, n_boot=20)
    ax = P.plot_noise_floor(pairs)
    drawn = sum(len(c.get_offsets()) for c in ax.collections)
    per_pair = int(np.isfinite(pairs.difference.sel(system="a", system_b="b")).sum())
    assert drawn == 3 * per_pair


@pytest.mark.slow
def test_report_writes_every_figure_and_the_summary(cube, tmp_path):
    report = write_report(cube, tmp_path, n_boot=30, formats=("png", "pdf"))
    names = {p.name for p in report.figures}
    for stem in ("curve_tutor_fixed", "agreement_cohen_kappa", "agreement_krippendorff_alpha", "noise_floor",
                 "rankings_by_judge", "rank_flips_by_judge", "variance", "decision_study_judge", "heatmap_a"):
        assert f"{stem}.png" in names and f"{stem}.pdf" in names
    assert [n.split(":")[0] for n in report.notes] == ["skipped canaries", "skipped probe effects"]  # not asked for
    summary = (tmp_path / "summary.csv").read_text().splitlines()
    assert summary[0].startswith("system,role,user_sim,condition,judge,standard,rule,value,n_valid,n_missing,n_excluded")
    assert (tmp_path / "README.md").exists()


def test_report_skips_what_one_judge_one_system_cannot_support(cube, tmp_path):
    thin = cube.isel(system=[0], judge=[0], user_sim=[0]).drop_vars("truth")
    thin["mode"].values[...] = ""
    report = write_report(thin, tmp_path, n_boot=20, formats=("png",))
    notes = "\n".join(report.notes)
    for what in ("judge agreement", "noise floor", "rankings", "grid heatmaps"):
        assert f"skipped {what}" in notes
    assert all(len(n.splitlines()) == 1 for n in report.notes)
    assert any(p.name.startswith("curve_") for p in report.figures)


def test_summary_counts_add_up(cube):
    scores = score(cube)
    table = summary_table(scores)
    per_row = table["n_valid"] + table["n_missing"] + table["n_not_ruled"]
    assert (per_row == scores.sizes["replicate"] * scores.sizes["item"]).all()
    assert markdown_table(table.head(2)).count("\n") == 4


def test_report_command_rejects_a_missing_cube(tmp_path):
    done = subprocess.run([sys.executable, "-m", "multiverse", "report", str(tmp_path / "none.nc"), "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "multiverse report:" in done.stderr and "Traceback" not in done.stderr


def test_specifications_without_data_are_left_out(cube):
    scores = score(cube, rules="any_turn")
    scores.loc[{"judge": "blind"}] = np.nan
    curve = A.spec_curve(scores, contrast=("b", "a"), n_boot=20)
    top, dash = P.plot_spec_curve(curve)
    assert "judge = blind" not in [t.get_text() for t in dash.get_yticklabels()]
    from matplotlib.collections import PathCollection

    points = max(len(c.get_offsets()) for c in top.collections if isinstance(c, PathCollection))
    assert points == int(np.isfinite(curve.estimate).sum()) < curve.sizes["spec"]


def test_importing_the_figure_namespace_does_not_import_matplotlib():
    code = "import sys, multiverse.plots, multiverse.analysis; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        pytest.param("multiverse.plots", "coverage_heatmap", "plot_coverage_heatmap", id="plots-coverage-heatmap"),
        pytest.param("multiverse.plots.campaign", "violation_heatmap", "plot_violation_heatmap", id="campaign-heatmap"),
        pytest.param("multiverse.plots.campaign", "coverage_curves", "plot_coverage_curves", id="campaign-curves"),
    ],
)
def test_renamed_figure_functions_keep_a_deprecated_alias(module, old, new):
    import importlib

    namespace = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=new):
        assert getattr(namespace, old) is getattr(namespace, new)
def test_cell_bounds_map_hatches_untested_cells_and_counts_the_tested(cube):
    bounds = A.cell_bounds(cube).isel(system=0, judge=0)
    ax = P.plot_cell_bounds(bounds)
    untested = int((bounds["n_conversations"] == 0).sum())
    assert len(ax.patches) == untested
    assert len(ax.texts) == bounds["n_conversations"].size - untested
    with pytest.raises(ValueError, match="select one value"):
        P.plot_cell_bounds(A.cell_bounds(cube))

"""Every figure renders, and its title, labels and colour bar say what the data it plots says.

Each figure function is drawn from an analysis of the planted cube (or a small
hand-made result where the analysis needs a campaign) and saved, so layout errors
surface; then its words are checked against the numbers it drew: counts in
titles, the facet named, the statistic on the colour bar, labels in words rather
than code ids, and no gridline through the text of a cell.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import xarray as xr
from matplotlib.colors import to_hex

from multiverse import analysis as A
from multiverse import plots as P
from multiverse.core import schema as S
from multiverse.scoring import score


def colourbar_label(ax) -> str:
    """The label of the colour bar drawn beside ``ax`` (the figure's other axes)."""
    bars = [other for other in ax.figure.axes if other is not ax and other.get_label() == "<colorbar>"]
    assert len(bars) == 1, "expected one colour bar"
    return bars[0].get_ylabel()


def no_grid_through_cells(ax) -> bool:
    return not any(line.get_visible() for line in ax.get_xgridlines() + ax.get_ygridlines())


def tick_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]


def heatmap(share: np.ndarray, *, standard="clear_breach") -> xr.Dataset:
    """A :func:`multiverse.analysis.campaign.violation_heatmap` result over the full grid and the tutor's principles."""
    behaviours = [f"{m}/{s}" for m in S.MODES for s in S.STRATEGIES]
    principles = ["academic_integrity", "confidentiality", "instructional_boundaries", "learning_differences"]
    conversations = np.where(np.isnan(share), 1, 9)
    return xr.Dataset(
        {"share": (("behaviour", "principle"), share), "turns": (("behaviour", "principle"), conversations * 4),
         "conversations": (("behaviour", "principle"), conversations)},
        coords={"behaviour": behaviours, "principle": principles},
        attrs={"standard": standard, "min_conversations": 3},
    )


@pytest.fixture(scope="module")
def scores(cube):
    return score(cube)


DRAWINGS = {
    "spec-curve": lambda c, s: P.plot_spec_curve(A.spec_curve(s, contrast=("b", "a"), n_boot=20))[0],
    "agreement": lambda c, s: P.plot_agreement(A.agreement(c, metric="cohen_kappa", standard="clear_breach")),
    "noise-floor": lambda c, s: P.plot_noise_floor(A.paired_differences(s.sel(rule="any_turn"), n_boot=20)),
    "rankings": lambda c, s: P.plot_rankings(A.rankings(s)),
    "rank-flips": lambda c, s: P.plot_rank_flips(A.rank_agreement(s)),
    "variance": lambda c, s: P.plot_variance(A.variance_decomposition(s.sel(rule="any_turn", standard="clear_breach"))),
    "decision-study": lambda c, s: P.plot_decision_study(
        A.decision_study(A.variance_decomposition(s.sel(rule="any_turn", standard="clear_breach")))),
    "cell-heatmap": lambda c, s: P.plot_cell_heatmap(A.cell_rates(c)),
    "coverage-heatmap": lambda c, s: P.plot_coverage_heatmap(
        xr.DataArray(np.arange(64).reshape(4, 4, 4) % 5, dims=("mode", "strategy", "principle"),
                     coords={"mode": list(S.MODES), "strategy": list(S.STRATEGIES),
                             "principle": ["academic_integrity", "confidentiality", "instructional_boundaries",
                                           "learning_differences"]})),
    "violation-heatmap": lambda c, s: P.plot_violation_heatmap(heatmap(np.full((16, 4), 0.1))),
    "coverage-curves": lambda c, s: P.plot_coverage_curves({"rolefuzzer": _curve()}, title="grid coverage"),
    "cell-bounds": lambda c, s: P.plot_cell_bounds(A.cell_bounds(c).isel(system=0, judge=0)),
    "probe-effects": lambda c, s: P.plot_probe_effects(A.probe_effects(_probed(c))),
    "canaries": lambda c, s: P.plot_canaries(A.canary_table({"canaries": {"j": _canary_results()}})),
}


def _probed(cube: xr.Dataset) -> xr.Dataset:
    """The cube with its last judge read as a probe of its first (``padded``)."""
    labels = cube["judge"].values.tolist()
    return cube.assign_coords(judge_base=("judge", labels[:-1] + [labels[0]]),
                              judge_probe=("judge", ["none"] * (len(labels) - 1) + ["padded"]))


def _canary_results() -> dict:
    from multiverse.cube.canaries import CanaryVerdict, score_canaries

    verdicts = [CanaryVerdict("tutor", "confidentiality", truth, given)
                for truth, given in [(2, 2)] * 7 + [(2, 0)] + [(0, 0)] * 6 + [(0, 2)] * 2]
    return score_canaries(verdicts)


def _curve():
    import pandas as pd

    return pd.Series([0.2, 0.5, 0.7], index=[1, 2, 3])


def test_every_figure_function_is_drawn_here():
    exported = {name for name in P.__all__ if name.startswith("plot_")}
    assert exported == {"plot_" + key.replace("-", "_") for key in DRAWINGS}


@pytest.mark.parametrize("name", sorted(DRAWINGS))
def test_every_figure_renders_with_a_title_and_labelled_colour_bar(name, cube, scores, tmp_path):
    ax = DRAWINGS[name](cube, scores)
    ax.figure.savefig(tmp_path / f"{name}.png")
    assert ax.get_title().strip()
    if ax.images:
        assert colourbar_label(ax) or name == "spec-curve"
        assert no_grid_through_cells(ax), f"{name}: gridlines cross the cells' text"
        assert not any("_" in text for text in tick_texts(ax) if text) or name in ("agreement", "rank-flips")


def test_noise_floor_title_counts_the_differences_its_test_calls_real(scores):
    pairs = A.paired_differences(scores.sel(rule="any_turn"), n_boot=20)
    ax = P.plot_noise_floor(pairs)
    upper = np.triu(np.ones((pairs.sizes["system"],) * 2, dtype=bool), k=1)
    kept = pairs.where(xr.DataArray(upper, dims=("system", "system_b"),
                                    coords={"system": pairs["system"], "system_b": pairs["system_b"]}))
    finite = np.isfinite(kept["noise_floor"]) & np.isfinite(kept["difference"])
    beyond = int(((kept["exceeds_noise"] == 1) & finite).sum())
    assert ax.get_title() == f"{beyond} of {int(finite.sum())} pairwise differences exceed their noise floor"
    # above the diagonal exactly when the test says so: the figure and the test use one definition
    for collection, above in zip(ax.collections, (False, True)):
        points = collection.get_offsets()
        assert all((y > x) == above for x, y in points)
    assert "alpha" in ax.get_xlabel() and "detectable" not in ax.get_xlabel()


def test_noise_floor_is_the_difference_the_test_calls_real(scores):
    pairs = A.paired_differences(scores.sel(rule="any_turn"), n_boot=20)
    finite = np.isfinite(pairs["noise_floor"]) & np.isfinite(pairs["p_value"])
    assert int(finite.sum()) > 0
    by_floor = (abs(pairs["difference"]) > pairs["noise_floor"]).where(finite)
    by_test = (pairs["p_adjusted"] < pairs.attrs["alpha"]).where(finite)  # the test, after the multiplicity rule
    assert by_floor.equals(by_test)
    assert by_test.equals(pairs["exceeds_noise"].astype(float).where(finite))


def test_cell_bounds_explains_its_marks_and_counts_each_status(cube):
    bounds = A.cell_bounds(cube, max_upper=0.5).isel(system=0, judge=0)
    ax = P.plot_cell_bounds(bounds)
    status = bounds["status"].values
    title = ax.get_title()
    assert "k/n: k of n conversations breached" in title
    for name, word in (("tested", "boxed: tested"), ("under_tested", "under-tested"), ("untested", "hatched: untested")):
        assert f"{word}" in title and f"({int((status == name).sum())})" in title
    assert len(ax.patches) == int((status == "untested").sum()) + int((status == "tested").sum())
    assert {t.get_fontweight() for t in ax.texts} == {"normal"}
    drawn = sorted(t.get_text() for t in ax.texts)
    tested = bounds["n_conversations"].values > 0
    expected = sorted(f"{k}/{n}" for k, n in zip(bounds["breaches"].values[tested], bounds["n_conversations"].values[tested]))
    assert drawn == expected
    assert colourbar_label(ax) == "one-sided 95% upper bound on the breach rate"
    assert no_grid_through_cells(ax)


@pytest.mark.parametrize("masked", [False, True], ids=["every-cell-shown", "some-cells-masked"])
def test_violation_heatmap_mentions_grey_only_when_a_cell_is_grey(masked):
    share = np.full((16, 4), 0.05)
    if masked:
        share[3, 1] = np.nan
    ax = P.plot_violation_heatmap(heatmap(share))
    assert ("grey" in ax.get_title()) is masked
    statistic = "share of turns in violation (clear breach)"
    assert ax.get_title().startswith(statistic) and colourbar_label(ax) == statistic
    assert "procedural guidance / sociability" in tick_texts(ax) and "academic integrity" in tick_texts(ax)


def test_rankings_give_every_one_of_many_systems_its_own_colour():
    systems = [f"system-{i}" for i in range(11)]
    ranks = xr.DataArray(np.tile(np.arange(1, 12), (3, 1)).T.astype(float), dims=("system", "judge"),
                         coords={"system": systems, "judge": ["j1", "j2", "j3"]})
    ax = P.plot_rankings(ranks)
    colours = [to_hex(line.get_color()) for line in ax.get_lines()]
    assert len(colours) == len(set(colours)) == 11
    assert [t.get_text() for t in ax.get_legend().get_texts()] == systems


@pytest.mark.parametrize("role", ["second", None], ids=["named-role", "first-role"])
def test_variance_title_names_the_role_and_condition_it_shows(scores, role):
    one = scores.sel(rule="any_turn", standard="clear_breach")
    second = one.assign_coords(role=["second"])
    other = second.where(second["system"] != "a", 1 - second)  # another role, with other variance
    decomposition = A.variance_decomposition(xr.concat([one, other], "role"))
    assert decomposition["share"].sizes["role"] == 2
    ax = P.plot_variance(decomposition, role=role)
    shown = decomposition["share"].sel(role=role or decomposition["role"].values[0])
    shown = shown.isel(condition=0) if "condition" in shown.dims else shown
    assert f"role: {shown['role'].item()}" in ax.get_title()
    if "condition" in shown.coords:
        assert f"condition: {str(shown['condition'].item()).replace('_', ' ')}" in ax.get_title()
    bars = sorted(round(p.get_width(), 12) for p in ax.patches)
    assert bars == sorted(round(float(v), 12) for v in shown.values)


def test_agreement_colour_bar_names_the_metric_in_the_title(cube):
    ax = P.plot_agreement(A.agreement(cube, metric="cohen_kappa", standard="clear_breach"))
    assert colourbar_label(ax) == "cohen kappa" and ax.get_title().startswith("cohen kappa")


def test_report_variance_figure_names_its_role(cube, tmp_path):
    from multiverse.report import write_report

    seen = {}

    def keep(name, drawn, *_):
        if name == "variance":
            seen["title"] = (drawn[0] if isinstance(drawn, tuple) else drawn).get_title()

    two_roles = xr.concat([cube, cube.assign_coords(role=["second"])], "role", data_vars="minimal", coords="minimal",
                          compat="override", join="outer")
    write_report(two_roles, tmp_path, n_boot=10, formats=("png",), decorate=keep)
    assert re.search(r"role: \w+", seen["title"])

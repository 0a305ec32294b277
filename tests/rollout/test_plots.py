"""Campaign figures draw what the analysis returns."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import xarray as xr  # noqa: E402

from multiverse.plots.campaign import plot_coverage_curves, plot_violation_heatmap  # noqa: E402


def test_heatmap_draws_masked_cells_grey():
    share = np.array([[0.9, np.nan], [0.1, 0.0]])
    heat = xr.Dataset(
        {"share": (("behaviour", "principle"), share),
         "conversations": (("behaviour", "principle"), np.array([[5, 2], [4, 3]]))},
        coords={"behaviour": ["a/b", "c/d"], "principle": ["p", "q"]},
        attrs={"standard": "clear_breach", "min_conversations": 3},
    )
    ax = plot_violation_heatmap(heat)
    image = ax.images[0]
    assert image.get_array().mask.tolist() == [[False, True], [False, False]]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["p", "q"]
    assert "n=2" in [t.get_text() for t in ax.texts]


def test_coverage_curves_one_line_per_search():
    curve = pd.Series([0.5, 0.9], index=pd.Index([1, 2], name="round"))
    ax = plot_coverage_curves({"rolefuzzer": curve, "no_grid": curve / 2})
    assert len(ax.lines) == 3  # two curves and the reference line
    assert list(ax.lines[0].get_ydata()) == [0.5, 0.9]

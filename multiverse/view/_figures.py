"""The report's figures as SVG whose points and cells link to the conversations behind them.

:func:`multiverse.report.write_report` draws every applicable figure; its
``decorate`` hook lets this module attach a link (matplotlib's ``set_url`` /
``set_urls``, written by the SVG backend as ``<a>`` elements) before each figure
is saved:

- a specification-curve point links to its specification: the facet's role and
  condition, the compared systems, the specification's user simulator, and its
  judge, standard and rule (which pick the score column of the table);
- an agreement-matrix cell links to the units where the two raters disagree
  under the figure's standard;
- a heatmap cell links to that system's completed conversations whose target
  cell is the row's mode and strategy, in roles that have the column's principle.

Links are URL fragments of the index page (``#key=value&...``), so a click
filters the table in place and the view can be shared.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import numpy as np
import xarray as xr
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle

from multiverse.plots._style import facet as select_facet

if TYPE_CHECKING:
    from multiverse.analysis.overview import Overview

__all__ = ["Figure", "linked_figures"]

FRAGMENT_DIMS = ("role", "condition", "system", "user_sim")
"""Specification dims that select conversations; the others (judge, standard, rule) pick scores."""


def fragment(**params: object) -> str:
    """A URL fragment ``#k=v&...`` of the index page; list values are joined by commas."""
    items = {k: ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
             for k, v in params.items() if v is not None}
    return "#" + urlencode(items, safe=",:")


def _link_curve(drawn: tuple, curve: xr.Dataset, facet: dict) -> list[str]:
    top = drawn[0]
    selection = {k: facet.get(k) for k in ("role", "condition") if facet.get(k) is not None}
    one = select_facet(curve, ("role", "condition"), selection)
    count = int(np.isfinite(one["estimate"].values).sum())
    order = np.argsort(one["position"].values)[:count]  # the drawing order of plot_spec_curve
    spec_dims = [d for d in curve.attrs.get("specification_dims", "").split(",") if d]
    points = next((c for c in top.collections if isinstance(c, PathCollection) and len(c.get_offsets()) == count), None)
    if points is None:
        return []
    base = {k: (str(one[k].item()) if k in one.coords and one[k].ndim == 0 else None) for k in ("role", "condition")}
    urls = []
    for position in order:
        spec = {d: str(one[d].values[position]) for d in spec_dims}
        urls.append(fragment(**base, system=facet.get("system"), **spec, view="conversations"))
    points.set_urls(urls)
    return urls


def _cell_link(ax, x: int, y: int, url: str) -> None:
    # A fully transparent face is written as ``fill: none``, which browsers do not
    # hit-test; a face of opacity 0.001 is invisible yet clickable.
    patch = Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=(1, 1, 1, 0.001), edgecolor="none", zorder=5)
    patch.set_url(url)
    ax.add_patch(patch)


def _link_agreement(ax, result: xr.Dataset) -> list[str]:
    matrix = result["estimate"] if isinstance(result, xr.Dataset) else result
    rows, cols = matrix.dims[:2]
    standard = str(result.attrs.get("standard") or "")
    standard = "severity" if not standard or standard.startswith("severity") else standard
    urls = []
    for i, a in enumerate(matrix[rows].values.tolist()):
        for j, b in enumerate(matrix[cols].values.tolist()):
            if a == b:
                continue
            url = fragment(view="units", a=a, b=b, standard=standard)
            _cell_link(ax, j, i, url)
            urls.append(url)
    return urls


def _link_heatmap(ax, cells: xr.Dataset, facet: dict) -> list[str]:
    rate = cells["rate"].stack(row=("mode", "strategy")).transpose(..., "row", "principle")
    urls = []
    for i, (mode, strategy) in enumerate(rate["row"].values.tolist()):
        for j, principle in enumerate(rate["principle"].values.tolist()):
            url = fragment(system=facet.get("system"), mode=mode, strategy=strategy, principle=principle,
                           ended="completed", view="conversations")
            _cell_link(ax, j, i, url)
            urls.append(url)
    return urls


class Figure:
    """One written figure: its name, SVG file and the links it carries."""

    def __init__(self, name: str, path: Path, links: list[str]):
        self.name = name
        self.path = path
        self.links = links

    def inline_svg(self) -> str:
        """The SVG element, ids prefixed with the figure's name so several can share one page."""
        text = self.path.read_text(encoding="utf-8")
        text = text[text.index("<svg"):].replace(' target="_blank"', "")
        prefix = re.sub(r"[^A-Za-z0-9_-]", "-", self.name) + "-"
        text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
        text = re.sub(r'url\(#([^)]+)\)', lambda m: f"url(#{prefix}{m.group(1)})", text)
        return re.sub(r'xlink:href="#(?![a-z_]+=)([^"]+)"', lambda m: f'xlink:href="#{prefix}{m.group(1)}"', text)


def linked_figures(cube: xr.Dataset, out: Path, *, analyses: Overview) -> tuple[list[Figure], list[str]]:
    """Write the report's figures of the overview ``analyses`` of ``cube`` as linked SVG into ``out``.

    Returns
    -------
    figures : list of Figure
    notes : list of str
        The report's one-line notes on analyses it skipped.
    """
    import matplotlib

    matplotlib.use("Agg")
    from multiverse.report import figure_file_name, write_report

    links: dict[str, list[str]] = {}

    def decorate(name: str, drawn: object, result: object, facet: dict) -> None:
        if name.startswith("curve") and result is not None:
            links[name] = _link_curve(drawn, result, facet)
        elif name.startswith("agreement") and result is not None:
            links[name] = _link_agreement(drawn, result)
        elif name.startswith("heatmap") and result is not None:
            links[name] = _link_heatmap(drawn, result.sel(system=facet["system"]).isel(judge=0)
                                        if "judge" in result.dims else result.sel(system=facet["system"]), facet)

    report = write_report(cube, out, formats=("svg",), decorate=decorate, analyses=analyses)
    by_file = {figure_file_name(name): urls for name, urls in links.items()}
    figures = [Figure(p.stem, p, by_file.get(p.stem, [])) for p in report.figures]
    return figures, list(report.notes)

"""The style context every figure function draws in, and shared colours."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

STYLE_FILE = Path(__file__).with_name("multiverse.mplstyle")

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
"""Okabe-Ito: eight colours told apart with every common colour-vision deficiency (the style's cycle)."""
EXTRA_COLOURS = ("#882255", "#44AA99", "#999933", "#332288", "#AA4499", "#DDCC77", "#777777")
"""Seven more (Paul Tol's muted scheme, less the hues Okabe-Ito already has) for figures with more than
eight series: with these, up to fifteen series keep a colour each."""
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")

SIGNIFICANT = "#0072B2"  # significant in the predicted direction
OPPOSITE = "#D55E00"  # significant against it
NOT_SIGNIFICANT = "0.65"
PREFERRED = "#000000"
NULL_BAND = "0.85"


@contextmanager
def style() -> Iterator[None]:
    """Draw inside the library's style (``multiverse.mplstyle``) without touching global rcParams."""
    with plt.style.context(STYLE_FILE):
        yield


def axes(ax: Axes | None, **figure_kwargs) -> Axes:
    """``ax`` itself, or the axes of a new figure (call inside :func:`style`)."""
    if ax is not None:
        return ax
    _, new = plt.subplots(**figure_kwargs)
    return new


def facet(result, dims: tuple[str, ...], selection: dict) -> object:
    """Select one facet of ``result``: named labels, else the first label of each extra dim."""
    unknown = [d for d in selection if d not in result.dims]
    if unknown:
        raise ValueError(f"no dim {unknown[0]!r} to select (dims: {tuple(result.dims)})")
    chosen = result.sel({d: v for d, v in selection.items() if v is not None})
    rest = {d: 0 for d in dims if d in chosen.dims and d not in selection}
    return chosen.isel(rest) if rest else chosen


def series_styles(names) -> dict[str, dict[str, str]]:
    """A distinct ``{color, marker, linestyle}`` for each of ``names`` (in order).

    Up to eight series take the colour-blind-safe :data:`PALETTE` with one
    marker; more take :data:`EXTRA_COLOURS` too and a marker each, so series
    are told apart by colour (up to fifteen) and always by marker and colour
    together, even in grey print.  Past the colours the line style changes too.
    """
    names = [str(name) for name in names]
    many = len(names) > len(PALETTE)
    colours = PALETTE + EXTRA_COLOURS if many else PALETTE
    styles = {}
    for i, name in enumerate(names):
        styles[name] = {
            "color": colours[i % len(colours)],
            "marker": MARKERS[i % len(MARKERS)] if many else MARKERS[0],
            "linestyle": LINESTYLES[(i // len(colours)) % len(LINESTYLES)],
        }
    return styles


def readable(value) -> str:
    """A code id as a reader reads it: ``clear_breach`` -> ``clear breach`` (``_`` back gives the id)."""
    return str(value).replace("_", " ")


def option_label(dim: str, value) -> str:
    """``standard``, ``clear_breach`` -> ``standard: clear breach``: a dim's option for axes and legends."""
    return f"{readable(dim)}: {readable(value)}"

"""Helpers shared by the study modules of the main job."""

from __future__ import annotations

import importlib.util
import json
import math
import numbers
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

EXPERIMENTS = Path(__file__).resolve().parent


def load_study(study: str) -> ModuleType:
    """The study module ``experiments/<study>.py``, importable beside this one (as ``make run`` and the tests load it)."""
    if str(EXPERIMENTS) not in sys.path:
        sys.path.insert(0, str(EXPERIMENTS))
    spec = importlib.util.spec_from_file_location(f"experiments.{study}", EXPERIMENTS / f"{study}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SIGNIFICANT_DIGITS = 6
"""Significant digits kept of every computed number in ``numbers.json`` and the figures' ``.data.json``.

The paper prints at most three (``.3f``, ``pct1``, ``.3g``); three more are a margin
that no placeholder reads.  Without rounding, the last digits of an iterative fit
(Dawid-Skene's EM, a REML optimum) move with the machine's SIMD width and BLAS build,
and a rerun on another machine would rewrite ``numbers.json`` to say the same thing."""


def rounded(value: Any) -> Any:
    """``value`` with every float rounded to :data:`SIGNIFICANT_DIGITS` significant digits (recursively).

    Integers, strings, booleans and ``None`` pass through; NaN becomes ``None``
    (JSON has no NaN).  Rounding goes through ``format(x, ".6g")``, so the result
    is the float that the decimal text names, the same on every machine.
    """
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [rounded(item) for item in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str) or value is None:
        return value
    number = float(value)
    if math.isnan(number):
        return None
    return float(format(number, f".{SIGNIFICANT_DIGITS}g"))


def finite_or_none(value: Any) -> float | None:
    """``value`` (a number or 0-d array) as a float for numbers.json; ``None`` for NaN."""
    number = float(value)
    return None if math.isnan(number) else number


FIGURE_FORMATS = ("png", "svg", "pdf")
"""PNG for the README and quick looks, SVG (vector) for the paper, PDF for print."""
_NO_DATE = {"png": None, "svg": {"Date": None}, "pdf": {"CreationDate": None}}


def save_figure(
    drawn: Any, name: str, figures_dir: Path, *, study: str | None = None, shows: str = "", plotted: dict[str, Any] | None = None
) -> list[Path]:
    """Save the figure behind ``drawn`` (an Axes, a Figure or a tuple starting with one) as PNG, SVG and PDF.

    With ``plotted`` (keys of the study's numbers -> the values the figure
    draws, read off the object handed to the figure function), ``<name>.data.json``
    is written beside it with ``study``, ``shows`` (the statistic, in words) and
    those values, so a test can check that the text quotes what the figure shows.
    Files carry no date, so unchanged figures are byte-identical across runs.
    """
    import matplotlib.pyplot as plt

    from multiverse.plots import style

    first = drawn[0] if isinstance(drawn, tuple) else drawn
    fig = getattr(first, "figure", first)
    figures_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with style(), plt.rc_context({"svg.hashsalt": name}):
        for fmt in FIGURE_FORMATS:
            path = figures_dir / f"{name}.{fmt}"
            fig.savefig(path, metadata=_NO_DATE[fmt])
            paths.append(path)
    plt.close(fig)
    if plotted is not None:
        record = {"study": study, "shows": shows, "plotted": {k: rounded(finite_or_none(v)) for k, v in plotted.items()}}
        path = figures_dir / f"{name}.data.json"
        path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
        paths.append(path)
    return paths

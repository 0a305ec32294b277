"""Helpers shared by the study modules of the main job."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

EXPERIMENTS = Path(__file__).resolve().parent


def finite_or_none(value: Any) -> float | None:
    """``value`` (a number or 0-d array) as a float for numbers.json; ``None`` for NaN."""
    number = float(value)
    return None if math.isnan(number) else number


def save_figure(drawn: Any, name: str, figures_dir: Path) -> list[Path]:
    """Save the figure behind ``drawn`` (an Axes, a Figure or a tuple starting with one) as PNG and PDF."""
    import matplotlib.pyplot as plt

    from multiverse.plots import style

    first = drawn[0] if isinstance(drawn, tuple) else drawn
    fig = getattr(first, "figure", first)
    figures_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with style():
        for fmt in ("png", "pdf"):
            path = figures_dir / f"{name}.{fmt}"
            fig.savefig(path, metadata={"CreationDate": None} if fmt == "pdf" else None)
            paths.append(path)
    plt.close(fig)
    return paths


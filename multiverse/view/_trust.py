"""What the viewer shows beside each judge's severities: its canary results and the probes' effects on it."""

from __future__ import annotations

from typing import Any

import xarray as xr

from multiverse.analysis.probes import CELL_STANDARDS, MEASURES, probe_effects
from multiverse.cube.canaries import canary_results

__all__ = ["judge_trust"]


def _share(value: float | None, interval: list[float | None]) -> str:
    if value is None:
        return "n/a"
    low, high = interval
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def judge_trust(cube: xr.Dataset, effects: xr.Dataset | None = None) -> dict[str, dict[str, Any]]:
    """Judge -> ``canaries`` (pooled figures as text), ``no_signal`` and ``probe`` (a probed judge's effect as text)."""
    out: dict[str, dict[str, Any]] = {}
    for judge, result in canary_results(cube).items():
        pooled = result["pooled"]
        out.setdefault(judge, {}).update(
            canaries=(f"sensitivity {_share(pooled['sensitivity'], pooled['sensitivity_ci'])}, "
                      f"specificity {_share(pooled['specificity'], pooled['specificity_ci'])}, "
                      f"J {_share(pooled['youden'], pooled['youden_ci'])}, "
                      f"{pooled['breaks'] + pooled['keeps']} canaries"),
            no_signal=bool(result["no_signal"]),
        )
    if effects is None and "judge_probe" in cube.coords and "judge_base" in cube.coords:
        effects = probe_effects(cube)  # the overview's, when the site draws figures; else computed here
    if effects is not None:
        scales = effects["scale"].values.tolist() if "scale" in effects.coords else ["severity"] * effects.sizes["probed"]
        for label, probe, scale, effect, (low, high) in zip(
            effects["probed"].values.tolist(), effects["judge_probe"].values.tolist(), scales,
            effects["effect"].values.tolist(), effects["ci"].values.tolist(),
        ):
            measure = effects.attrs["measure"] if effects.attrs["measure"] in CELL_STANDARDS else MEASURES[scale]
            out.setdefault(str(label), {})["probe"] = f"{probe}: effect {effect:+.3f} [{low:+.3f}, {high:+.3f}] on {measure}"
    return out

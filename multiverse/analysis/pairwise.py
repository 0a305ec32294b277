"""Win rates from pairwise labels: how often each system's response is preferred.

A pairwise cube (``adapters.long_table(..., scale="pairwise")``) holds one
item per comparison, with the compared systems in the item coordinates
``system_a`` and ``system_b`` and every judge's label ``A``, ``B`` or ``tie``
(:mod:`multiverse.core.scales`).  A system's win rate under one judge is

    (wins + ties / 2) / comparisons

over every labelled comparison it took part in (ties count half a win, as
AlpacaEval's win rate does; ``ties="exclude"`` leaves them out instead), with
the standard error of that mean over comparisons (ddof 1, as AlpacaEval's
leaderboards report it).  Where the cube records the position each response
was shown in (``position_a``), the share of decided comparisons won by the
response shown first measures position bias.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.core.scales import FIXED_CATEGORIES
from multiverse.cube.scales import judge_scales

__all__ = ["TIES", "win_rate"]

TIES = ("half", "exclude")
_CODE = FIXED_CATEGORIES["pairwise"]


def _per_comparison(cube: xr.Dataset, judges: list[str]) -> tuple[xr.DataArray, xr.DataArray | None]:
    """Labels ``(item, unit, judge)`` (severity codes: -1 missing, -2 not applicable) and the positions, units stacked."""
    severity = cube["severity"].sel(judge=judges).reset_coords(drop=True)
    others = [d for d in severity.dims if d not in ("item", "judge")]
    labels = severity.stack(unit=others).transpose("item", "unit", "judge")
    labels = labels.compute()
    position = None
    if "position_a" in cube:
        position = cube["position_a"].sel(judge=judges).reset_coords(drop=True).stack(unit=others)
        position = position.transpose("item", "unit", "judge").compute()
    return labels, position


def win_rate(cube: xr.Dataset, *, judges: Sequence[str] | None = None, ties: str = "half") -> xr.Dataset:
    """Each system's win rate under each judge, from pairwise labels.

    Parameters
    ----------
    cube
        A pairwise cube: item coordinates ``system_a`` and ``system_b``, judges
        on the ``pairwise`` scale.
    judges
        The judges to use (default: every judge).
    ties
        ``"half"`` (default): a tie counts half a win for both systems;
        ``"exclude"``: ties are left out of the comparisons counted.

    Returns
    -------
    xarray.Dataset
        Over (``system``, ``judge``): ``win_rate``, ``standard_error``,
        ``n`` (comparisons counted), ``wins``, ``ties``, ``losses``, and the
        comparisons of the system left out, by reason: ``n_missing`` (no
        label: the judgment is missing) and ``n_ties_left_out`` (ties, with
        ``ties="exclude"``); over
        (``system``, ``opponent``, ``judge``): ``head_to_head`` (the win rate
        against that opponent alone) and ``n_head_to_head``.  Over ``judge``,
        when the cube records positions: ``first_shown_wins`` (share of
        decided comparisons the response shown first won; 0.5 is no position
        bias) and ``n_positioned``.  NaN where a system has no labelled comparison.

    Raises
    ------
    ValueError
        If the cube has no ``system_a`` / ``system_b`` item coordinates, or a
        chosen judge does not label on the pairwise scale.

    See Also
    --------
    multiverse.analysis.rankings : ``rankings(win_rate(cube)["win_rate"], higher_is_better=True)``.
    """
    if ties not in TIES:
        raise ValueError(f"win_rate: ties={ties!r}, expected one of {', '.join(TIES)}")
    for name in ("system_a", "system_b"):
        if name not in cube.coords or cube[name].dims != ("item",):
            raise ValueError(f"win_rate: the cube has no item coordinate {name!r}; load pairwise labels with "
                             "adapters.long_table(..., scale='pairwise', system_a=..., system_b=...)")
    scales = judge_scales(cube)
    chosen = list(scales) if judges is None else [str(j) for j in judges]
    wrong = [j for j in chosen if scales.get(j) != "pairwise"]
    if wrong:
        raise ValueError(f"win_rate: judges {wrong} do not label on the pairwise scale")
    labels, position = _per_comparison(cube, chosen)
    a = np.asarray(cube["system_a"].values, dtype=str)
    b = np.asarray(cube["system_b"].values, dtype=str)
    systems = sorted(set(a) | set(b))
    values = labels.values  # (item, unit, judge)
    valid = values >= 0
    if ties == "exclude":
        valid &= values != _CODE["tie"]
    score_a = np.where(values == _CODE["A"], 1.0, np.where(values == _CODE["tie"], 0.5, 0.0))
    shape = (len(systems), len(chosen))
    out = {name: np.full(shape, np.nan) for name in ("win_rate", "standard_error")}
    counts = {name: np.zeros(shape, dtype=np.int64) for name in ("n", "wins", "ties", "losses", "n_missing",
                                                                 "n_ties_left_out")}
    head = np.full((len(systems), len(systems), len(chosen)), np.nan)
    n_head = np.zeros_like(head, dtype=np.int64)
    for s, system in enumerate(systems):
        as_a, as_b = (a == system)[:, None, None], (b == system)[:, None, None]
        score = np.where(as_a, score_a, 1.0 - score_a)
        mine = valid & (as_a | as_b)
        for j in range(len(chosen)):
            got = score[..., j][mine[..., j]]
            counts["n"][s, j] = got.size
            counts["wins"][s, j] = int((got == 1).sum())
            counts["ties"][s, j] = int((got == 0.5).sum())
            counts["losses"][s, j] = int((got == 0).sum())
            counts["n_missing"][s, j] = int(((values[..., j] == -1) & (as_a | as_b)[..., 0]).sum())
            counts["n_ties_left_out"][s, j] = int(((values[..., j] == _CODE["tie"]) & ~valid[..., j]
                                                  & (as_a | as_b)[..., 0]).sum())
            if got.size:
                out["win_rate"][s, j] = got.mean()
            if got.size > 1:
                out["standard_error"][s, j] = got.std(ddof=1) / np.sqrt(got.size)
            for o, opponent in enumerate(systems):
                against = mine[..., j] & (((b == opponent)[:, None] & as_a[..., 0]) | ((a == opponent)[:, None] & as_b[..., 0]))
                n_head[s, o, j] = int(against.sum())
                if against.any():
                    head[s, o, j] = score[..., j][against].mean()
    result = xr.Dataset(
        {
            **{name: (("system", "judge"), value) for name, value in {**out, **counts}.items()},
            "head_to_head": (("system", "opponent", "judge"), head),
            "n_head_to_head": (("system", "opponent", "judge"), n_head),
        },
        coords={"system": systems, "opponent": systems, "judge": chosen},
    )
    if position is not None:
        result = result.merge(_position_bias(values, position.values, chosen))
    result.attrs.update(
        analysis="win_rate", multiverse_version=__version__,
        ties="a tie counts half a win for both systems" if ties == "half" else "ties are left out",
        standard_error="standard deviation of the per-comparison scores (ddof 1) / sqrt(n)",
    )
    return result


def _position_bias(values: np.ndarray, position: np.ndarray, judges: list[str]) -> xr.Dataset:
    """Per judge, the share of decided, positioned comparisons won by the response shown first."""
    decided = (values == _CODE["A"]) | (values == _CODE["B"])
    known = decided & (position > 0)
    first = ((values == _CODE["A"]) & (position == 1)) | ((values == _CODE["B"]) & (position == 2))
    n = known.sum(axis=(0, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, (first & known).sum(axis=(0, 1)) / n, np.nan)
    return xr.Dataset({"first_shown_wins": ("judge", share), "n_positioned": ("judge", n.astype(np.int64))},
                      coords={"judge": judges})

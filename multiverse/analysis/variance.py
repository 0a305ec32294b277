"""Where does the variance of the estimate come from?  Generalizability theory on the multiverse.

The estimate (a system's violation rate under one specification and rerun) is
laid out as a fully crossed table over its facets: ``system`` (the object of
measurement), ``replicate`` and every measurement dim with more than one value.
A level with no estimate at all in a group (a judge that does not rule on a
role, a rule that never applies) is not a level of that group's design: it is
left out, which changes neither model nor likelihood.  On a complete table, a
random-effects ANOVA gives each effect's mean square and the
expected-mean-square equations of the balanced crossed design (Cronbach et al.
1972; Brennan 2001) give the variance components exactly (the REML solution
whenever no component comes out negative; negative estimates are set to zero for
shares).  Written with numpy because the balanced design has a closed form for
any number of facets; the tests check every sum of squares against statsmodels'
``anova_lm``.  A table with scattered empty cells (a specification or rerun
without any estimate) is never imputed: its components are the REML estimates of
the crossed random-effects model on the observed cells
(:mod:`multiverse.analysis._reml`, checked against statsmodels' ``MixedLM``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.analysis._reml import reml_components
from multiverse.analysis._scores import unit_scores, usage
from multiverse.core import schema as S

__all__ = ["anova_table", "decision_study", "group_components", "variance_components", "variance_decomposition"]

OBJECT = "system"


# --- numpy kernels --------------------------------------------------------------------------------


def _effects(k: int) -> list[tuple[int, ...]]:
    return [c for order in range(1, k + 1) for c in combinations(range(k), order)]


def anova_table(values: np.ndarray) -> dict[tuple[int, ...], tuple[float, int]]:
    """Sum of squares and degrees of freedom of every effect of a balanced crossed table.

    ``values`` has one observation per cell; effect ``(0, 2)`` is the
    interaction of axes 0 and 2.  The effect of a set of axes is the
    inclusion-exclusion of the marginal means over its subsets.
    """
    k = values.ndim
    n_total = values.size
    means: dict[tuple[int, ...], np.ndarray] = {(): np.asarray(values.mean())}
    table = {}
    for effect in _effects(k):
        drop = tuple(a for a in range(k) if a not in effect)
        means[effect] = values.mean(axis=drop, keepdims=True) if drop else values
        estimate = 0.0
        for order in range(len(effect) + 1):
            for subset in combinations(effect, order):
                sign = (-1) ** (len(effect) - order)
                estimate = estimate + sign * means[subset]
        cells = int(np.prod([values.shape[a] for a in effect]))
        ss = float(np.sum(estimate**2)) * (n_total / cells) if np.ndim(estimate) else 0.0
        df = int(np.prod([values.shape[a] - 1 for a in effect]))
        table[effect] = (ss, df)
    return table


def variance_components(values: np.ndarray) -> dict[tuple[int, ...], float]:
    """Random-effects variance components from the expected mean squares (may be negative).

    ``EMS(a) = sum over effects b containing a of sigma2(b) * prod(n_f, f not in b)``;
    solved from the highest-order effect (confounded with error) down.
    """
    k = values.ndim
    sizes = values.shape
    table = anova_table(values)
    sigma: dict[tuple[int, ...], float] = {}
    for effect in sorted(_effects(k), key=len, reverse=True):
        ss, df = table[effect]
        mean_square = ss / df if df else np.nan
        above = sum(
            sigma[b] * np.prod([sizes[f] for f in range(k) if f not in b])
            for b in sigma
            if set(effect) < set(b)
        )
        sigma[effect] = float((mean_square - above) / np.prod([sizes[f] for f in range(k) if f not in effect]))
    return sigma


def group_components(table: np.ndarray) -> tuple[dict[tuple[int, ...], float], np.ndarray]:
    """Variance components of one group's table, and the design they describe.

    Levels without any estimate are left out (they add nothing to the
    likelihood).  A complete design has the closed form of
    :func:`variance_components`; one with empty cells the REML estimates of
    :func:`multiverse.analysis._reml.reml_components`.  A facet left with a
    single level is dropped from the model and every effect containing it is NaN.

    Returns
    -------
    components : dict
        Effect (tuple of axes of ``table``) -> variance, for every effect.
    design : numpy.ndarray
        ``table`` without its empty levels.
    """
    k = table.ndim
    observed = ~np.isnan(table)
    kept = [np.flatnonzero(observed.any(axis=tuple(b for b in range(k) if b != a))) for a in range(k)]
    design = table[np.ix_(*kept)]
    varying = [a for a in range(k) if design.shape[a] > 1]
    sigma = {e: np.nan for e in _effects(k)}
    if len(varying) < 2:
        return sigma, design
    reduced = design.reshape([design.shape[a] for a in varying])
    found = reml_components(reduced) if np.isnan(reduced).any() else variance_components(reduced)
    for effect, value in found.items():
        sigma[tuple(varying[a] for a in effect)] = value
    return sigma, design


# --- xarray layer ----------------------------------------------------------------------------------------


def _estimates(scores: xr.DataArray) -> xr.DataArray:
    estimates = scores.mean("item") if "item" in scores.dims else scores
    # a label with no estimate at all (e.g. a rule that never applies) is not a level
    for dim in estimates.dims:
        has_data = estimates.notnull().any([d for d in estimates.dims if d != dim])
        estimates = estimates.sel({dim: has_data})
    return estimates.drop_vars([c for c in estimates.coords if c not in estimates.dims])


def _counts(scores: xr.DataArray, *, groups: dict[str, np.ndarray]) -> xr.Dataset:
    """The conversations and items behind each group's estimates, by what happened to them."""
    kept = [d for d in scores.dims if d in groups]
    out = usage(scores, reduce=[d for d in scores.dims if d not in kept])
    items = [d for d in scores.dims if d not in kept and d != "item"]
    used = scores.notnull().any(items) if items else scores.notnull()
    out["n_items"] = used.sum("item").astype(np.int64) if "item" in used.dims else xr.zeros_like(out["n_used"])
    out = out.drop_vars([c for c in out.coords if c not in out.dims])
    return out.sel({g: labels for g, labels in groups.items() if g in out.dims})


def _name(effect: Iterable[str]) -> str:
    return ":".join(effect)


def variance_decomposition(
    data: xr.Dataset | xr.DataArray,
    *,
    facets: Sequence[str] | None = None,
    max_order: int = 2,
) -> xr.Dataset:
    """Shares of the estimate's variance due to each facet and their interactions.

    Parameters
    ----------
    data
        A cube or its scores (rate rules).  Estimand dims (role, condition) with
        more than one value are analysed separately (kept as dims).
    facets
        Dims treated as random facets (default: ``system``, ``replicate`` and
        every measurement dim with more than one value).
    max_order
        Effects of higher order are pooled into ``residual`` in ``share``.

    Returns
    -------
    xarray.Dataset
        ``variance`` and ``share`` over ``component`` (main effects, two-way
        interactions, ``residual``), and ``effect_variance`` over ``effect``
        (every effect, unpooled and untruncated, for :func:`decision_study`),
        and ``levels`` over ``facet``: the levels with an estimate in each group,
        the design the components describe (a level without any estimate, e.g.
        a judge that does not rule on a role, is left out of that group).
        ``method`` (per group) says how: ``"anova"`` (complete design, closed
        form) or ``"reml"`` (empty cells).  Per group, the conversations
        behind the estimates by what happened to them
        (:func:`~multiverse.analysis._scores.usage`: ``n_used``, ``n_imputed``,
        ``n_excluded``, ``n_not_ruled``, summed over every specification,
        rerun and item of the group) and ``n_items`` (items with a
        conversation used).  Effects of a facet with a single
        level in a group cannot be told from the mean: their components are NaN
        and the shares are of the others.  Attrs give the facets, their sizes
        and ``n_empty`` (empty cells inside the designs; none is imputed).

    See Also
    --------
    decision_study, multiverse.plots.plot_variance
    """
    scores = unit_scores(data)
    estimates = _estimates(scores)
    if facets is None:
        facets = [d for d in (OBJECT, "replicate", *S.MEASUREMENT_DIMS) if d in estimates.dims and estimates.sizes[d] > 1]
    facets = list(facets)
    missing = [f for f in facets if f not in estimates.dims]
    if missing:
        raise ValueError(f"variance_decomposition: facet {missing[0]!r} is not a dim of the estimates {estimates.dims}")
    if len(facets) < 2:
        raise ValueError(f"variance_decomposition: needs at least two facets with several values, got {facets}")
    groups = [d for d in estimates.dims if d not in facets and estimates.sizes[d] > 1]
    estimates = estimates.isel({d: 0 for d in estimates.dims if d not in facets and d not in groups})
    counts = _counts(scores, groups={g: estimates[g].values for g in groups})

    effects = [tuple(facets[a] for a in e) for e in _effects(len(facets))]
    components = [_name(e) for e in effects if len(e) <= max_order] + ["residual"]
    low = [i for i, e in enumerate(effects) if len(e) <= max_order]
    high = [i for i, e in enumerate(effects) if len(e) > max_order]
    group_shape = [estimates.sizes[g] for g in groups]
    variance = np.zeros(tuple(group_shape) + (len(components),))
    effect_variance = np.zeros(tuple(group_shape) + (len(effects),))
    levels = np.zeros(tuple(group_shape) + (len(facets),), dtype=np.int64)
    method = np.empty(tuple(group_shape), dtype=object)
    empty = 0
    for position in np.ndindex(*group_shape):
        table = estimates.isel(dict(zip(groups, position))).transpose(*facets).values.astype(float)
        sigma, table = group_components(table)
        levels[position] = table.shape
        holes = int(np.isnan(table).sum())
        empty += holes
        method[position] = "reml" if holes else "anova"
        raw = np.array([sigma[tuple(facets.index(f) for f in e)] for e in effects])
        effect_variance[position] = raw
        kept = np.maximum(raw, 0.0)
        variance[position] = np.append(kept[low], np.nansum(kept[high]) if high else 0.0)
    total = np.nansum(variance, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = variance / total
    dims = tuple(groups)
    coords = {g: estimates[g].values for g in groups}
    out = xr.Dataset(
        {
            "variance": (dims + ("component",), variance),
            "share": (dims + ("component",), share),
            "effect_variance": (dims + ("effect",), effect_variance),
            "levels": (dims + ("facet",), levels),
            "method": (dims, method.astype(str)),
        },
        coords={**coords, "component": components, "effect": [_name(e) for e in effects], "facet": facets,
                "order": ("component", [c.count(":") + 1 if c != "residual" else max_order + 1 for c in components])},
    )
    out = out.merge(counts)
    out.attrs.update(
        {
            "analysis": "variance decomposition",
            "multiverse_version": __version__,
            "model": "crossed random effects: expected mean squares on complete tables, REML with empty cells; "
                     "levels without any estimate in a group are left out of its design",
            "facets": ",".join(facets),
            "sizes": ",".join(str(estimates.sizes[f]) for f in facets),
            "n_empty": empty,  # empty cells inside the groups' designs (left-out levels not counted)
            "estimate": "violation rate per system, rerun and specification (mean over items)",
        }
    )
    return out


def decision_study(
    decomposition: xr.Dataset,
    *,
    vary: str = "judge",
    n: Sequence[int] = tuple(range(1, 21)),
    target: float = 0.8,
    kind: str = "relative",
) -> xr.DataArray:
    """Reliability of a system's score when averaging over ``n`` levels of one facet.

    The generalizability coefficient (``kind="relative"``: rankings of
    systems) or index of dependability (``"absolute"``: the rates
    themselves) with every other facet at its observed number of levels
    (each group's own, from ``levels``).

    Parameters
    ----------
    decomposition
        The output of :func:`variance_decomposition`.
    vary
        The facet whose number of levels changes (e.g. ``"judge"``, ``"replicate"``).
    n
        Numbers of levels to evaluate.
    target
        Reliability to reach; ``attrs["n_needed"]`` is the smallest ``n``
        reaching it (-1 when none does).
    kind
        ``"relative"`` or ``"absolute"``.

    Returns
    -------
    xarray.DataArray
        Reliability over ``n`` (and any group dims of the decomposition).

    See Also
    --------
    variance_decomposition
    """
    facets = decomposition.attrs["facets"].split(",")
    if "levels" in decomposition:  # each group's own design
        sizes = {f: decomposition["levels"].sel(facet=f, drop=True) for f in facets}
    else:
        sizes = dict(zip(facets, map(int, decomposition.attrs["sizes"].split(","))))
    if OBJECT not in facets:
        raise ValueError("decision_study: the decomposition has no 'system' facet (the object of measurement)")
    if vary not in facets or vary == OBJECT:
        raise ValueError(f"decision_study: vary={vary!r}, expected one of {[f for f in facets if f != OBJECT]}")
    if kind not in ("relative", "absolute"):
        raise ValueError(f"decision_study: kind {kind!r}, expected 'relative' or 'absolute'")
    sigma = decomposition["effect_variance"].clip(min=0)
    levels = xr.DataArray(np.asarray(list(n), dtype=float), dims="n", coords={"n": list(n)})
    error = 0.0
    for effect in decomposition["effect"].values:
        parts = str(effect).split(":")
        if parts == [OBJECT] or (kind == "relative" and OBJECT not in parts):
            continue
        divisor = 1.0
        for f in parts:
            if f != OBJECT:
                divisor = divisor * (levels if f == vary else sizes[f])
        error = error + sigma.sel(effect=effect, drop=True) / divisor
    universe = sigma.sel(effect=OBJECT, drop=True)
    reliability = (universe / (universe + error)).transpose("n", ...)
    reaching = reliability >= target
    first = [int(v) for v, ok in zip(reliability["n"].values, reaching.all([d for d in reaching.dims if d != "n"]).values) if ok]
    reliability.name = "reliability"
    reliability.attrs.update({"vary": vary, "kind": kind, "target": target, "n_needed": first[0] if first else -1})
    return reliability

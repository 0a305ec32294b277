"""REML variance components of a crossed random-effects table with empty cells.

The model: ``y = mu + sum_e u_e[level_e] + error`` over the observed cells of a
fully crossed table, one random effect ``u_e ~ N(0, sigma_e^2)`` per main effect
and interaction below the highest order (the highest-order interaction is
confounded with the error: one observation per cell).  Restricted maximum
likelihood (Patterson & Thompson 1971) with the components constrained to be
non-negative, solved by L-BFGS-B on the exact REML log-likelihood and its
gradient with dense matrices.

Written here because statsmodels' ``MixedLM`` fits crossed designs only through
variance-component formulas on one group, which is several times slower, warns
on every boundary solution and cannot take the analytic gradient below; the
tests check the two agree.  Tables of the multiverse are small (hundreds of
cells), where dense algebra is exact and fast; BLAS runs on one thread
(``threadpoolctl``), since threads only contend at these sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
from scipy import linalg, optimize
from threadpoolctl import threadpool_limits

__all__ = ["random_effects", "reml_components", "reml_objective"]


def random_effects(k: int) -> list[tuple[int, ...]]:
    """Every main effect and interaction of ``k`` crossed facets below order ``k``."""
    return [c for order in range(1, k) for c in combinations(range(k), order)]


def _design(positions: np.ndarray, sizes: Sequence[int], effect: tuple[int, ...]) -> np.ndarray:
    """Indicator matrix (cells x levels of the effect) of the observed cells."""
    shape = [sizes[a] for a in effect]
    level = np.ravel_multi_index(tuple(positions[:, a] for a in effect), shape)
    out = np.zeros((len(positions), int(np.prod(shape))))
    out[np.arange(len(positions)), level] = 1.0
    return out


def reml_objective(table: np.ndarray):
    """The negative REML log-likelihood (up to a constant) of the standardised observed cells.

    Returns ``(objective, scale, effects)``: ``objective(theta)`` gives the value
    and gradient at components ``theta`` (random effects, then the residual) in
    units of ``scale**2``.
    """
    k = table.ndim
    observed = ~np.isnan(table)
    positions = np.argwhere(observed)
    y = table[observed].astype(float)
    n = len(y)
    effects = random_effects(k)
    scale = float(np.std(y)) or 1.0
    y = (y - y.mean()) / scale
    designs = [_design(positions, table.shape, e) for e in effects]
    grams = [z @ z.T for z in designs] + [np.eye(n)]
    ones = np.ones(n)

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        v = sum(t * g for t, g in zip(theta, grams))
        try:
            factor = linalg.cho_factor(v, lower=True, check_finite=False)
        except linalg.LinAlgError:
            return np.inf, np.zeros_like(theta)
        v_inv = linalg.cho_solve(factor, np.eye(n), check_finite=False)
        v_inv_x = v_inv @ ones
        xvx = float(ones @ v_inv_x)
        p = v_inv - np.outer(v_inv_x, v_inv_x) / xvx
        py = p @ y
        value = 0.5 * (2 * np.log(np.diag(factor[0])).sum() + np.log(xvx) + float(y @ py))
        # d/d theta_e = (tr(P Z Z') - |Z' P y|^2) / 2; the residual's Z is the identity
        gradient = [0.5 * (np.sum((p @ z) * z) - float(np.sum((z.T @ py) ** 2))) for z in designs]
        gradient.append(0.5 * (np.trace(p) - float(py @ py)))
        return value, np.array(gradient)

    return objective, scale, effects


def reml_components(table: np.ndarray) -> dict[tuple[int, ...], float]:
    """REML variance components of a crossed table (NaN = empty cell).

    Parameters
    ----------
    table
        ``k``-dimensional array, one observation per cell, NaN where empty.

    Returns
    -------
    dict
        Effect (tuple of axes) -> variance; the highest-order effect holds the
        residual variance.  Components are >= 0.
    """
    top = tuple(range(table.ndim))
    if (~np.isnan(table)).sum() < 3:
        return {**{e: np.nan for e in random_effects(table.ndim)}, top: np.nan}
    objective, scale, effects = reml_objective(table)
    start = np.full(len(effects) + 1, 1.0 / (len(effects) + 1))
    bounds = [(0.0, None)] * len(effects) + [(1e-8, None)]
    with threadpool_limits(limits=1, user_api="blas"):
        fit = optimize.minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds,
                                options={"maxiter": 2000, "ftol": 1e-12, "gtol": 1e-9})
    sigma = fit.x * scale**2
    out = {e: float(s) for e, s in zip(effects, sigma[:-1])}
    out[top] = float(sigma[-1])
    return out

"""Group-sequential critical values by alpha spending: repeated confidence intervals valid at every look of a run.

A run that looks at a normal estimate ``theta_hat_k`` with information
``I_k = 1 / Var(theta_hat_k)`` after every batch, and whose estimates have
the canonical joint distribution (``Cov(theta_hat_j, theta_hat_k) = 1 / I_k``
for ``j <= k``: independent increments, which nested samples give), covers
``theta`` at every look at once with the repeated confidence intervals
(Jennison and Turnbull 1989; *Group Sequential Methods*, 2000, ch. 9)

    theta_hat_k -+ c_k / sqrt(I_k),

when each side's critical values ``c_k`` spend its share ``alpha / 2`` of the
miscoverage over the information fraction ``t = I / I_max``:

    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = f(t_k) - f(t_{k-1}),
    f(t) = 2 - 2 Phi(z_{1 - alpha/4} / sqrt(t))   (t < 1),   f(t) = alpha / 2   (t >= 1),

with ``Z_k`` the standardised estimate and ``corr(Z_j, Z_k) = sqrt(I_j / I_k)``.
``f`` is the Lan-DeMets (1983) spending function of O'Brien-Fleming type at
level ``alpha / 2`` for each side (``gsDesign``'s ``sfLDOF``): early looks spend almost nothing, so the last critical value is close
to the fixed design's ``z_{1 - alpha/2}`` (about 2.03 at alpha 0.05 with five
equally spaced looks, against 1.96).  Each side is computed alone, ignoring
the other side's boundary, so each side misses with probability exactly
``f(t_K)`` and the two together with at most ``alpha`` (a union bound; the
difference from the symmetric two-sided computation is below 1e-6 at these
levels).  Looks need not be planned: the spending adapts to the information
reached, and a look whose information fraction is 1 or more spends what is
left; after it no look may be made.

The crossing probabilities are computed by recursive numerical integration
of the continuation density on a grid (Jennison and Turnbull 2000, ch. 19).
Written here because no maintained Python package computes spending-function
boundaries (the references are R's ``gsDesign`` and ``rpact``); tests check
the values against published ones and against scipy's multivariate normal
distribution function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

__all__ = ["SpendingBoundary", "obrien_fleming_spending"]

_LOW = -8.0
"""Lower end of the integration grid on the z scale (the mass below it is under 1e-15)."""
_STEP = 0.05
"""Largest grid step on the z scale (finer when a look adds little information)."""
_TOP = 12.0
"""Largest critical value searched for (a look that spends less than about 1e-33 gets infinity)."""


def obrien_fleming_spending(t: float, alpha: float) -> float:
    """Miscoverage one side has spent by information fraction ``t``: ``2 - 2 Phi(z_{1-alpha/4} / sqrt(t))``, ``alpha / 2`` at ``t >= 1``."""
    if t <= 0:
        return 0.0
    if t >= 1:
        return alpha / 2
    return float(2 * norm.sf(NormalDist().inv_cdf(1 - alpha / 4) / math.sqrt(t)))


def _simpson(n: int) -> np.ndarray:
    """Simpson weights for ``n`` (odd) equally spaced points, step 1."""
    w = np.ones(n)
    w[1:-1:2] = 4.0
    w[2:-1:2] = 2.0
    return w / 3.0


@dataclass
class SpendingBoundary:
    """One side's critical values, found look by look from the information levels reached.

    Parameters
    ----------
    alpha
        Two-sided miscoverage; each side spends ``alpha / 2``.
    max_information
        Information at which the whole of ``alpha / 2`` is spent.

    Notes
    -----
    :meth:`next_value` takes every look's information so far (earlier
    levels may be re-estimated: only the critical values already used are
    kept), so a run whose variance estimate changes keeps the correlations of
    its looks consistent with its current estimate, as information-based
    monitoring does (Jennison and Turnbull 2000, section 7.2.2).
    """

    alpha: float
    max_information: float
    values: list[float] = field(default_factory=list)
    spent: float = 0.0
    done: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"SpendingBoundary: alpha must lie in (0, 1), got {self.alpha}")
        if not self.max_information > 0:
            raise ValueError(f"SpendingBoundary: max_information must be positive, got {self.max_information}")

    def fraction(self, information: float) -> float:
        return information / self.max_information

    def next_value(self, information: list[float]) -> float:
        """The critical value of the next look, given the information of every look so far (this one last).

        Returns ``inf`` when the look spends nothing (its information
        fraction fell below what earlier looks spent).  Raises when every
        bit of ``alpha / 2`` was spent at an earlier look.
        """
        if self.done:
            raise RuntimeError("SpendingBoundary: the whole miscoverage was spent at an earlier look")
        if len(information) != len(self.values) + 1:
            raise ValueError(f"SpendingBoundary: expected {len(self.values) + 1} information levels, "
                             f"got {len(information)}")
        levels = np.asarray(information, dtype=float)
        if np.any(levels <= 0) or np.any(np.diff(levels) <= 0):
            raise ValueError(f"SpendingBoundary: information must be positive and increasing, got {information}")
        t = self.fraction(float(levels[-1]))
        target = obrien_fleming_spending(t, self.alpha)
        increment = target - self.spent
        if t >= 1:
            self.done = True
        if increment <= 0:
            self.values.append(math.inf)
            return math.inf
        crossing = self._crossing(levels)
        if crossing(_TOP) >= increment:  # spends less than the tail beyond _TOP: this look spends nothing
            self.values.append(math.inf)
            return math.inf
        value = float(brentq(lambda c: crossing(c) - increment, _LOW, _TOP, xtol=1e-10))
        self.values.append(value)
        self.spent = target
        return value

    def _crossing(self, levels: np.ndarray):
        """``c -> P(no crossing at earlier looks, Z_k >= c)`` under the earlier critical values."""
        if len(levels) == 1:
            return lambda c: float(norm.sf(c))
        grid, density = self._continuation(levels[:-1])
        weights, last = density, levels[-2]
        now = levels[-1]
        spread = math.sqrt(now - last)

        def crossing(c: float) -> float:
            # Z_k = (sqrt(I_{k-1}) z + increment) / sqrt(I_k), increment ~ N(0, I_k - I_{k-1}).
            tail = norm.sf((c * math.sqrt(now) - grid * math.sqrt(last)) / spread)
            return float(np.dot(weights, tail))

        return crossing

    def _continuation(self, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grid and Simpson-weighted density of ``Z_m`` on paths that crossed at none of the looks ``1..m``."""
        grid = self._grid(self.values[0], _STEP)
        density = norm.pdf(grid) * _simpson(grid.size) * (grid[1] - grid[0])
        for k in range(1, len(levels)):
            last, now = levels[k - 1], levels[k]
            spread = math.sqrt(now - last)
            step = min(_STEP, spread / math.sqrt(now) / 4)
            new = self._grid(self.values[k], step)
            # density of Z_k at new points: sum over old points of weight * normal kernel (Jacobian sqrt(I_k)).
            u = (new[:, None] * math.sqrt(now) - grid[None, :] * math.sqrt(last)) / spread
            kernel = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi)
            density_new = kernel @ density * math.sqrt(now) / spread
            density = density_new * _simpson(new.size) * (new[1] - new[0])
            grid = new
        return grid, density

    @staticmethod
    def _grid(top: float, step: float) -> np.ndarray:
        """Odd number of equally spaced points on ``[_LOW, min(top, _TOP)]``, step at most ``step``."""
        high = min(top, _TOP)
        n = int(math.ceil((high - _LOW) / step))
        n += 1 if n % 2 == 0 else 2  # an odd count of points for Simpson
        return np.linspace(_LOW, high, n)

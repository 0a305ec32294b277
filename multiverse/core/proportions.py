"""Wilson's score interval of a proportion: the one closed form every layer uses.

It lives in ``core`` so that cube-level results (the canaries' rates) and the
analyses (clustered Wilson and MOVER intervals) compute it once, the same way;
the tests pin it to ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["wilson_interval"]


def wilson_interval(p: np.ndarray, n_eff: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a proportion ``p`` with ``n_eff`` trials and critical value ``q``."""
    p, n_eff, q = np.asarray(p, float), np.asarray(n_eff, float), np.asarray(q, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        q2n = q**2 / n_eff
        centre = (p + q2n / 2) / (1 + q2n)
        half = q / (1 + q2n) * np.sqrt(np.maximum(p * (1 - p) / n_eff + q2n / (4 * n_eff), 0.0))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)

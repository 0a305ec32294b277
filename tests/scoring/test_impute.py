"""The imputation model: its regression step pinned to statsmodels, its imputations to what complete data say."""

import numpy as np
import pytest
import statsmodels.api as sm

import multiverse.scoring.impute as impute


def test_one_class_is_a_binomial_regression_on_principle_and_turn_like_statsmodels(monkeypatch):
    monkeypatch.setattr(impute, "RIDGE", 1e-9)
    rng = np.random.default_rng(0)
    n_p, n_t = 3, 4
    logit = -2.0 + np.array([0.0, 0.8, -0.5])[:, None] + np.array([0.0, 0.3, 0.6, 0.9])[None, :]
    p = 1 / (1 + np.exp(-logit))
    violated = rng.random((1, 1, 400, n_p, n_t)) < p
    seen = rng.random(violated.shape) > 0.2  # a fifth of the cells missing
    model = impute.fit_classes(violated & seen, ~violated & seen, classes=1, conversation_classes=1, iterations=40)
    principle, turn = np.indices((n_p, n_t)).reshape(2, -1)
    design = np.column_stack([np.ones(n_p * n_t), *(principle == j for j in range(1, n_p)),
                              *(turn == j for j in range(1, n_t))]).astype(float)
    hits = (violated & seen).sum(axis=(0, 1, 2)).ravel()
    trials = seen.sum(axis=(0, 1, 2)).ravel()
    fit = sm.GLM(np.column_stack([hits, trials - hits]), design, family=sm.families.Binomial()).fit()
    np.testing.assert_allclose(model.q[0, 0, 0].ravel(), fit.fittedvalues, rtol=1e-6)


def test_a_clean_looking_conversation_is_read_as_a_cleaner_one():
    rng = np.random.default_rng(1)
    propensity = np.where(rng.random((1, 2, 300, 1, 1)) < 0.5, 0.02, 0.3)  # two kinds of item, two reruns each
    propensity = np.broadcast_to(propensity[:, :1], (1, 2, 300, 1, 1))
    violated = rng.random((1, 2, 300, 4, 4)) < propensity
    seen = np.ones(violated.shape, dtype=bool)
    model = impute.fit_classes(violated, ~violated & seen)
    clean = ~violated.reshape(2, 300, -1).any(axis=(0, 2))
    risky = model.posterior[0, 0, :, :, :].sum(axis=-1)  # P(item class) for each item
    high = np.argmax(model.q[0].mean(axis=(1, 2, 3)))
    assert risky[clean, high].mean() < 0.2 < risky[~clean, high].mean()


@pytest.mark.parametrize("classes", [1, 3])
def test_a_stratum_without_a_violation_fits_finite_small_rates(classes):
    none = np.zeros((2, 3, 20, 4, 4), dtype=bool)
    model = impute.fit_classes(none, ~none, classes=classes)
    assert np.isfinite(model.q).all() and (model.q < 0.05).all() and np.isfinite(model.posterior).all()


def _lose_on_hard_items(cube, *, seed):
    """System b loses up to 40 points more of its judgments on the items of higher planted difficulty.

    By the rank of the item's difficulty, not of its drawn breaches: a rank of
    drawn breaches would make a breached cell go missing more often than a
    clean cell of an item as hard (not at random).
    """
    rng = np.random.default_rng(seed)
    severity = cube["severity"].values.copy()  # (system, role, user_sim, condition, replicate, item, turn, principle, judge)
    difficulty = np.asarray(cube.attrs["planted"]["difficulty"])
    rank = difficulty.argsort().argsort() / (len(difficulty) - 1)
    share = 0.02 + 0.4 * rank[None, None, None, None, :, None, None, None]
    lost = (rng.random(severity[1].shape) < share) & (severity[1] != -2)
    severity[1][lost] = -1
    return cube.assign(severity=cube["severity"].copy(data=severity))


def test_an_item_that_loses_more_judgments_is_imputed_from_items_that_lose_as_many(monkeypatch):
    """Missing at random given the item: two equal systems, b losing its judgments on the hard items.

    One cube of 300 items; the paired difference against the complete-data
    difference on the same cube.  A prior shared by every item imputes the
    items that lose the most cells from those that lose the fewest (-0.0091);
    with the item's missing share as a covariate of its class, -0.0016.
    """
    from multiverse.analysis._synthetic import planted_cube
    from multiverse.scoring import estimate, score
    from multiverse.scoring.estimate import estimated_mean

    cube = planted_cube(systems={"a": 0.015, "b": 0.015}, judges={"j": {"sensitivity": 0.9, "specificity": 0.99}},
                        replicates=3, items=300, horizon=4, partial=0.05, seed=11)
    damaged = _lose_on_hard_items(cube, seed=12)

    def difference(c):
        rates = estimated_mean(score(c, standards="clear_breach", rules="any_turn"), dim=["replicate", "item"])
        return float((rates.sel(system="b") - rates.sel(system="a")).squeeze())

    complete = difference(cube)
    error = difference(damaged) - complete
    fit = estimate.fit_classes
    monkeypatch.setattr(estimate, "fit_classes", lambda violated, clean, missing=None: fit(violated, clean))
    shared_prior = difference(damaged) - complete
    assert shared_prior < -0.007 and abs(error) < 0.004

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

"""Dawid-Skene pinned to crowd-kit's ``DawidSkene`` and checked on planted judges."""

import numpy as np
import pandas as pd
import pytest

from multiverse.analysis.latent import dawid_skene, latent_class
from multiverse.analysis.raters import ratings

crowdkit = pytest.importorskip("crowdkit.aggregation")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:The (inplace|copy) keyword:Warning")


def crowd_kit_fit(cube, standard, raters, *, n_iter=100, tol=1e-5):
    """crowd-kit on the same labels: one row per (cell, rater) label."""
    values = ratings(cube, standard=standard).sel(judge=raters)
    flat = values.values.reshape(-1, len(raters))
    unit, rater = np.nonzero(flat >= 0)
    data = pd.DataFrame({"task": unit, "worker": np.asarray(raters)[rater], "label": flat[unit, rater].astype(int)})
    model = crowdkit.DawidSkene(n_iter=n_iter, tol=tol).fit(data)
    return model, flat


@pytest.mark.parametrize("standard", [pytest.param(None, id="three-level"), pytest.param("clear_breach", id="clear-breach")])
def test_equals_crowd_kit_in_every_entry(small_cube, standard):
    raters = ["strict", "lenient", "blind"]
    got = latent_class(small_cube, raters=raters, standard=standard, max_iter=100, tol=1e-5)
    model, flat = crowd_kit_fit(small_cube, standard, raters)
    assert got.attrs["n_iter"] == len(model.loss_history_)
    for r in raters:
        for t in got["true"].values:
            for o in got["observed"].values:
                want = model.errors_.loc[(r, o), t] if (r, o) in model.errors_.index else 0.0
                assert float(got["confusion"].sel(rater=r, true=t, observed=o)) == pytest.approx(want, abs=1e-6)
    np.testing.assert_allclose(got["prior"].values, model.priors_.loc[got["true"].values].values, atol=1e-6)
    posterior = got["posterior"].transpose(..., "true").values.reshape(-1, got.sizes["true"])
    rated = (flat >= 0).any(axis=1)
    want = model.probas_.sort_index().loc[:, got["true"].values].values
    np.testing.assert_allclose(posterior[rated], want, atol=1e-6)
    np.testing.assert_allclose(posterior[~rated], np.broadcast_to(got["prior"].values, posterior[~rated].shape))
    assert (got["rated"].values.ravel() == rated).all()
    assert got.attrs["n_units"] == rated.sum() and got.attrs["n_unrated"] == (~rated).sum()


@pytest.mark.parametrize("standard", [pytest.param(None, id="three-level"), pytest.param("clear_breach", id="clear-breach")])
def test_defaults_reach_crowd_kits_converged_solution_to_1e_6(small_cube, standard):
    raters = ["strict", "lenient", "blind"]
    got = latent_class(small_cube, raters=raters, standard=standard)
    model, _ = crowd_kit_fit(small_cube, standard, raters, n_iter=5000, tol=1e-12)
    np.testing.assert_allclose(got["prior"].values, model.priors_.loc[got["true"].values].values, atol=1e-6)
    for r in raters:
        for t in got["true"].values:
            for o in got["observed"].values:
                want = model.errors_.loc[(r, o), t] if (r, o) in model.errors_.index else 0.0
                assert float(got["confusion"].sel(rater=r, true=t, observed=o)) == pytest.approx(want, abs=1e-6)
    assert got.attrs["converged"] == 1


def test_recovers_planted_error_rates(make_cube):
    judges = {"keen": {"sensitivity": 0.9, "specificity": 0.95}, "rough": {"sensitivity": 0.75, "specificity": 0.9},
              "fair": {"sensitivity": 0.85, "specificity": 0.97}}
    cube = make_cube(systems={"a": 0.2, "b": 0.3}, judges=judges, replicates=1, items=300, horizon=2, partial=0.0, seed=11)
    got = latent_class(cube, standard="clear_breach")
    assert cube.sizes["system"] * cube.sizes["item"] >= 500
    for name, planted in judges.items():
        confusion = got["confusion"].sel(rater=name)
        assert float(confusion.sel(true=1, observed=1)) == pytest.approx(planted["sensitivity"], abs=0.03)
        assert float(confusion.sel(true=0, observed=0)) == pytest.approx(planted["specificity"], abs=0.03)
    assert got.attrs["converged"] == 1


def test_confusion_rows_are_distributions_and_the_result_is_deterministic(small_cube):
    first = latent_class(small_cube)
    np.testing.assert_allclose(first["confusion"].sum("observed").values, 1.0)
    assert float(first["prior"].sum()) == pytest.approx(1.0)
    np.testing.assert_array_equal(first["confusion"].values, latent_class(small_cube)["confusion"].values)


@pytest.mark.parametrize("labels, message", [
    pytest.param([[0, -1], [-1, -1]], "at least one label", id="unit-without-labels"),
])
def test_kernel_refuses_units_without_labels(labels, message):
    with pytest.raises(ValueError, match=message):
        dawid_skene(np.asarray(labels), k=2)


def test_bad_rater_sets_are_named(small_cube):
    with pytest.raises(ValueError, match="not values of 'judge'"):
        latent_class(small_cube, raters=["strict", "nobody"])
    with pytest.raises(ValueError, match="at least two raters"):
        latent_class(small_cube, raters=["strict"])

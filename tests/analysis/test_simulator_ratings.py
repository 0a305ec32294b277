"""Study 1 summaries against closed forms."""

import numpy as np
import pytest
import xarray as xr

from multiverse.analysis.user_ratings import simulator_ratings


def rated_cube(values):
    """A cube-shaped Dataset with one rating per (item, user_turn, axis, judge)."""
    data = np.asarray(values, dtype=np.int8)
    return xr.Dataset({"rating": (("item", "user_turn", "axis", "judge"), data)},
                      coords={"axis": ["naturalness", "role_fidelity", "grounding"][: data.shape[2]],
                              "judge": [f"human:{i}" for i in range(data.shape[3])]})


def test_means_are_normalised_and_acceptable_is_the_top_two_levels():
    cube = rated_cube([[[[5, 4], [1, 2]], [[3, -1], [-2, 4]]]])
    got = simulator_ratings(cube)
    assert float(got["mean"].sel(axis="naturalness")) == pytest.approx(np.mean([(5 - 1) / 4, (4 - 1) / 4, (3 - 1) / 4]))
    assert float(got["acceptable"].sel(axis="naturalness")) == pytest.approx(2 / 3)
    assert int(got["n_missing"].sel(axis="naturalness")) == 1
    assert int(got["n_ratings"].sel(axis="role_fidelity")) == 3
    assert float(got["acceptable"].sel(axis="role_fidelity")) == pytest.approx(1 / 3)


def test_by_and_raters():
    cube = rated_cube([[[[5, 1]]], [[[1, 1]]]])
    got = simulator_ratings(cube, raters=["human:0"], by="item")
    assert got["mean"].sel(axis="naturalness").values.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="no 'rating'"):
        simulator_ratings(cube.drop_vars("rating"))
    with pytest.raises(ValueError, match="not judges"):
        simulator_ratings(cube, raters=["human:9"])

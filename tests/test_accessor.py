"""The Dataset.multiverse accessor delegates to the functional API and keeps no state."""

import numpy as np
import xarray as xr

import multiverse
import multiverse.analysis
from multiverse.analysis._synthetic import planted_cube


def test_accessor_methods_equal_the_functions():
    cube = planted_cube(seed=3)
    xr.testing.assert_identical(cube.multiverse.score(), multiverse.score(cube))
    np.testing.assert_array_equal(
        cube.multiverse.agreement(metric="percent").values,
        multiverse.agreement(cube, metric="percent").values,
    )
    assert len(cube.multiverse.to_long()) == len(multiverse.to_long(cube))
    xr.testing.assert_identical(
        cube.multiverse.variance_decomposition(), multiverse.analysis.variance_decomposition(multiverse.score(cube))
    )
    xr.testing.assert_identical(cube.multiverse.latent_class(), multiverse.analysis.latent_class(cube))
    three = planted_cube(judges={"h1": {}, "h2": {}, "model": {"leniency": 0.5}}, seed=3)
    xr.testing.assert_identical(
        three.multiverse.calibration_table(humans=["h1", "h2"], n_boot=5),
        multiverse.analysis.calibration_table(three, humans=["h1", "h2"], n_boot=5),
    )

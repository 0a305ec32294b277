"""The .multiverse accessors delegate to the functional API, with its names and signatures, and keep no state."""

import importlib
import inspect

import numpy as np
import pytest
import xarray as xr

import multiverse
import multiverse.analysis
from multiverse.accessor import DATAARRAY_METHODS, DATASET_METHODS
from multiverse.analysis._synthetic import planted_cube

METHODS = [
    pytest.param(kind, name, module, id=f"{kind}-{name}")
    for kind, table in (("dataset", DATASET_METHODS), ("dataarray", DATAARRAY_METHODS))
    for name, module in sorted(table.items())
]


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


def _function(module, name):
    function = getattr(importlib.import_module(module), name)
    return function if not isinstance(function, type(multiverse)) else getattr(function, name)


@pytest.mark.parametrize(("kind", "name", "module"), METHODS)
def test_every_method_has_its_function_name_signature_and_docstring(kind, name, module):
    cube = planted_cube(seed=3)
    obj = cube if kind == "dataset" else multiverse.score(cube)
    method = getattr(obj.multiverse, name)
    function = _function(module, name)
    expected = list(inspect.signature(function).parameters.values())[1:]
    assert list(inspect.signature(method).parameters.values()) == expected
    assert method.__name__ == name and method.__doc__ == function.__doc__


def test_score_array_methods_equal_the_functions():
    scores = multiverse.score(planted_cube(seed=3)).sel(standard="clear_breach", rule="any_turn")
    xr.testing.assert_identical(scores.multiverse.pass_hat_k(k=[1, 2]), multiverse.pass_hat_k(scores, k=[1, 2]))


def test_renamed_methods_warn_and_unknown_ones_name_the_methods():
    cube = planted_cube(seed=3)
    with pytest.warns(DeprecationWarning, match="spec_curve"):
        assert cube.multiverse.curve.__name__ == "spec_curve"
    with pytest.raises(AttributeError, match="score_bounds"):
        cube.multiverse.nonsense

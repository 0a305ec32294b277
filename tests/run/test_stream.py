"""Streamed runs: the cube written unit by unit equals the one assembled in memory; lazy cubes score chunk-wise."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from multiverse._run import run
from multiverse.analysis.raters import agreement
from multiverse.cube.io import open_cube
from multiverse.scoring import pass_hat_k, score


@pytest.fixture
def two_runs(tmp_path, tiny_experiment):
    """The same experiment run in memory and streamed (one unit at a time), on one cache."""
    import yaml

    tmp = tmp_path
    data = tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"}, sim={
        "targets": {"a": {"breach": {"*": 0.2}, "partial": {"*": 0.1}}, "b": {"breach": {"*": 0.4}}},
        "judges": {"strict": {"malformed_rate": 0.2}}, "users": {"plain": {}},
    })
    data["dims"]["judge"]["contract"] = {"deterministic": "contract"}
    path = tmp / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    in_memory = run(path, cache=tmp / "cache")
    streamed = run(path, cache=tmp / "cache", out=tmp / "out", in_flight=1)
    return in_memory, streamed, tmp / "out"


def test_a_streamed_cube_equals_the_one_assembled_in_memory(two_runs):
    in_memory, streamed, out = two_runs
    xr.testing.assert_identical(streamed.drop_attrs(deep=False), in_memory.drop_attrs(deep=False))
    for store in (out / "cube.nc", out / "cube.zarr"):
        xr.testing.assert_identical(open_cube(store, lazy=False).drop_attrs(deep=False), in_memory.drop_attrs(deep=False))
    kept = {k: v for k, v in in_memory.attrs.items() if k not in ("created", "run")}
    assert kept == {k: v for k, v in streamed.attrs.items() if k not in ("created", "run")}
    assert int(in_memory["missing_count"].sum()) > 0  # the malformed replies were counted in both


@pytest.mark.parametrize("store", [pytest.param("cube.nc", id="netcdf"), pytest.param("cube.zarr", id="zarr")])
def test_a_lazy_cube_is_chunked_by_unit_and_scores_like_the_loaded_one(two_runs, store):
    _, _, out = two_runs
    lazy, loaded = open_cube(out / store), open_cube(out / store, lazy=False)
    assert hasattr(lazy["severity"].data, "dask")
    assert set(lazy["severity"].variable.chunksizes["system"]) == {1} == set(lazy["severity"].variable.chunksizes["replicate"])
    scores = score(lazy)
    assert hasattr(scores.data, "dask")  # nothing computed yet beyond the counts
    expected = score(loaded)
    computed = scores.compute()
    np.testing.assert_array_equal(computed.values, expected.values)
    # the imputation model's weights converge chunk by chunk: equal to the last few digits, not bit for bit
    xr.testing.assert_allclose(computed, expected, rtol=0, atol=1e-8)
    assert scores.attrs == expected.attrs
    rates = pass_hat_k(scores, k=[1, 2]).compute()
    np.testing.assert_allclose(rates.values, pass_hat_k(expected, k=[1, 2]).values, rtol=0, atol=1e-12)
    kappa = agreement(lazy, metric="cohen_kappa", standard="clear_breach")
    xr.testing.assert_identical(kappa, agreement(loaded, metric="cohen_kappa", standard="clear_breach"))

"""The public readers refuse what is not a cube with a one-line ``ValueError``, not a library's own error."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import multiverse


@pytest.mark.parametrize(
    ("dataset", "says"),
    [
        pytest.param(xr.Dataset({"x": ("t", [1, 2])}), "no 'severity' variable", id="no-severity"),
        pytest.param(xr.Dataset({"severity": ("t", np.array([1, 2], dtype=np.int8))}), "severity dims", id="wrong-dims"),
    ],
)
def test_to_long_refuses_a_dataset_that_is_not_a_cube(dataset, says):
    with pytest.raises(ValueError, match=says) as caught:
        multiverse.to_long(dataset)
    assert type(caught.value) is ValueError and "\n" not in str(caught.value)


def test_open_cube_names_the_file_it_cannot_read(tmp_path):
    garbage = tmp_path / "garbage.nc"
    garbage.write_bytes(b"\x00\x01garbage" * 50)
    with pytest.raises(ValueError, match=r"garbage\.nc: not a readable netCDF4 cube") as caught:
        multiverse.open_cube(garbage)
    assert type(caught.value) is ValueError and "Errno" not in str(caught.value)

"""pass^k says when k asks for more reruns than the scores have."""

import numpy as np
import pytest
import xarray as xr

from multiverse import pass_hat_k


def test_k_beyond_the_reruns_warns_and_gives_nan():
    scores = xr.DataArray(np.zeros((2, 3)), dims=("replicate", "item"))
    with pytest.warns(UserWarning, match="k=3 exceeds the 2 reruns"):
        out = pass_hat_k(scores, k=[1, 3])
    assert np.isnan(out.sel(k=3)).all()


def test_k_within_the_reruns_does_not_warn(recwarn):
    scores = xr.DataArray(np.zeros((2, 3)), dims=("replicate", "item"))
    assert float(pass_hat_k(scores, k=2).sel(k=2)) == 1.0
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]

"""Figures render headless; a small planted cube feeds them."""

import matplotlib
import pytest

matplotlib.use("Agg")

from multiverse.analysis._synthetic import planted_cube  # noqa: E402


@pytest.fixture(scope="session")
def cube():
    return planted_cube(
        systems={"a": 0.04, "b": 0.1, "c": 0.07},
        judges={"sharp": {}, "soft": {"leniency": 0.5}, "blind": {"sensitivity": 0.2}},
        user_sims={"plain": 1.0, "pushy": 1.4},
        items=12, replicates=2, horizon=4, seed=2,
    )


@pytest.fixture(autouse=True)
def close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")

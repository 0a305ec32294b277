"""Synthetic cubes with planted truths shared by the analysis tests."""

import pytest

from multiverse.analysis._synthetic import planted_cube

SHARP = {"sensitivity": 0.95, "specificity": 0.97}
BLIND = {"sensitivity": 0.2, "specificity": 0.97}


@pytest.fixture(scope="session")
def make_cube():
    """The factory itself, for tests that plant their own parameters."""
    return planted_cube


@pytest.fixture(scope="session")
def blind_judge_cube():
    """Two judges near 0.95 sensitivity beside a blind one (0.2); some judgments missing."""
    return planted_cube(
        systems={"a": 0.04, "b": 0.10, "c": 0.16},
        judges={"sharp": {**SHARP, "missing": 0.03}, "keen": SHARP, "blind": BLIND},
        user_sims={"plain": 1.0, "pushy": 1.5},
        replicates=3,
        items=24,
        horizon=5,
        min_turns=3,
        partial=0.08,
        incomplete=0.03,
        seed=7,
    )


@pytest.fixture(scope="session")
def small_cube():
    """A small cube with missing judgments and two judges, for exact reference checks."""
    return planted_cube(
        systems={"a": 0.08, "b": 0.2},
        judges={"strict": {"missing": 0.1}, "lenient": {"leniency": 0.5, "missing": 0.05}, "blind": BLIND},
        items=12,
        replicates=2,
        horizon=4,
        partial=0.15,
        seed=3,
    )

"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
collect_ignore = [] if os.environ.get("MULTIVERSE_LIVE") == "1" else ["live"]
"""The live local-model tests run only through ``make test-live``."""


def find_mirror() -> Path | None:
    """``$MULTIVERSE_DATA_MIRROR``, else ``../shared/data`` beside the repository, when it exists."""
    env = os.environ.get("MULTIVERSE_DATA_MIRROR", "")
    for candidate in ([Path(env)] if env else []) + [REPO_ROOT.parent / "shared" / "data"]:
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The real data's mirror folder; tests that need it skip, saying why, when it is absent."""
    found = find_mirror()
    if found is None:
        pytest.skip("real data mirror absent: set MULTIVERSE_DATA_MIRROR to a folder with the data's layout")
    return found


def pytest_addoption(parser):
    parser.addoption("--screenshots", metavar="DIR", default=None,
                     help="folder for the browser tests' screenshots (default: pytest's tmp path)")


SPECS = REPO_ROOT / "specs"


def _tiny_experiment(**overrides):
    """A small offline experiment as a mapping; keyword arguments replace top-level keys."""
    data = {
        "name": "tiny",
        "roles": ["tutor"],
        "systems": {"a": "sim/target-a"},
        "dims": {
            "user_sim": {"plain": "sim/user-plain"},
            "judge": {"strict": "sim/judge-strict"},
            "condition": {"short": {"horizon": 3, "search": "seed_only"}},
        },
        "replicates": 1,
        "items": 2,
        "specs": str(SPECS),
        "sim": {
            "targets": {"a": {"breach": {"*": 0.1}}},
            "judges": {"strict": {}},
            "users": {"plain": {}},
        },
    }
    data.update(overrides)
    return data


@pytest.fixture(scope="session")
def tiny_experiment():
    """Build a small offline experiment mapping; keyword arguments replace top-level keys."""
    return _tiny_experiment

"""Fixtures shared by every test folder."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import yaml
from tiny_experiments import tiny_experiment as tiny_experiment_mapping

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


@pytest.fixture(scope="session")
def tiny_experiment():
    """Build a small offline experiment mapping (:func:`tiny_experiments.tiny_experiment`)."""
    return tiny_experiment_mapping


@pytest.fixture
def write_experiment(tmp_path):
    """Write an experiment mapping (or raw YAML text) to ``tmp_path`` and return its path."""

    def write(data, name: str = "experiment.yaml") -> Path:
        path = tmp_path / name
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C raises ``KeyboardInterrupt`` during the test, as in a shell (test workers may ignore SIGINT)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)

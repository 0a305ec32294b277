"""Tiny experiments written to a temporary folder, for the core tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

SPECS = Path(__file__).resolve().parents[2] / "specs"


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


@pytest.fixture
def write_experiment(tmp_path):
    """Write an experiment mapping (or raw YAML text) to ``tmp_path`` and return its path."""

    def write(data, name: str = "experiment.yaml") -> Path:
        path = tmp_path / name
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write

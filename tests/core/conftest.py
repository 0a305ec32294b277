"""Experiments written to a temporary folder, for the core tests (``tiny_experiment`` is in ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

@pytest.fixture
def write_experiment(tmp_path):
    """Write an experiment mapping (or raw YAML text) to ``tmp_path`` and return its path."""

    def write(data, name: str = "experiment.yaml") -> Path:
        path = tmp_path / name
        text = data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write

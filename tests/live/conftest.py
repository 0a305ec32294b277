"""What every live test shares: its output folder, and the skip where the local extra is missing."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def live_dir(tmp_path_factory) -> Path:
    """``$MULTIVERSE_LIVE_OUT`` (kept for ``benchmarks/live.md``), else a temporary folder."""
    chosen = os.environ.get("MULTIVERSE_LIVE_OUT")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("live")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def local_extra() -> None:
    """Skip, saying so, where llama.cpp's server (the ``local`` extra) is not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama.cpp's server (the local extra) is not installed: make test-live installs it")

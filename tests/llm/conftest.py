"""Fixtures of the model-layer tests."""

from __future__ import annotations

import pytest
from llm_fakes import FakeWorld

from multiverse.testing.loopback import LoopbackServer


@pytest.fixture
def world() -> FakeWorld:
    return FakeWorld()


@pytest.fixture
def server():
    with LoopbackServer() as running:
        yield running

"""Fixtures shared by the run tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def sequential_data(tiny_experiment):
    """A two-condition experiment (calm, hard) where ``b`` breaches more, with a ``precision`` block.

    Call it with the batch size and the item budget; returns the experiment's data to edit or write.
    """

    def make(*, batch: int, max_items: int) -> dict:
        data = tiny_experiment(horizon=2, systems={"a": "sim/target-a", "b": "sim/target-b"}, items=12)
        data["dims"]["condition"] = {
            "calm": {"horizon": 2, "search": "seed_only", "pressure": 0.2},
            "hard": {"horizon": 2, "search": "seed_only", "pressure": 2.0},
        }
        data["sim"]["targets"]["b"] = {"breach": {"*": 0.25}}
        data["precision"] = {"contrast": ["b", "a"], "standard": "clear_breach", "rule": "any_turn",
                             "half_width": 0.02, "batch": batch, "max_items": max_items}
        return data

    return make

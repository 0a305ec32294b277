"""Deterministic judges by name: the built-in contract oracle, registering, looking up."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from multiverse.judges import get_judge, list_judges, register_judge
from multiverse.judges import registry


@pytest.fixture
def own_registry(monkeypatch):
    """A copy of the registry, so registrations here do not leak into other tests."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _always_clean(transcripts, roles, *, principle_ids, horizon):
    return np.zeros((len(transcripts), horizon, len(principle_ids)), dtype=np.int8), [None] * len(transcripts)


def test_contract_is_built_in_and_listed_first():
    assert list_judges()[0] == "contract"
    assert get_judge("contract") is registry.contract_judge


def test_registered_judge_is_found_by_name(own_registry):
    register_judge("always_clean", _always_clean)
    assert get_judge("always_clean") is _always_clean
    assert list_judges()[-1] == "always_clean"


def test_taken_name_is_refused_unless_overwritten(own_registry):
    with pytest.raises(ValueError, match="'contract' is already registered"):
        register_judge("contract", _always_clean)
    assert get_judge("contract") is registry.contract_judge
    register_judge("contract", _always_clean, overwrite=True)
    assert get_judge("contract") is _always_clean


def test_non_callable_is_refused(own_registry):
    with pytest.raises(ValueError, match="expected a callable, got int"):
        register_judge("three", 3)
    assert "three" not in list_judges()


def test_unknown_name_lists_the_registered_judges():
    with pytest.raises(KeyError, match="no deterministic judge 'crystal_ball'; registered: contract"):
        get_judge("crystal_ball")


def test_contract_judge_does_not_rule_on_roles_without_a_contract():
    roles = [SimpleNamespace(contract=None)] * 2
    severity, reasons, lanes = registry.contract_judge([object(), object()], roles, principle_ids=["a", "b"], horizon=3)
    assert severity.shape == (2, 3, 2) and severity.dtype == np.int8
    assert (severity == -2).all()
    assert reasons == [None, None]
    assert lanes["contract_lane"] == ["", ""]

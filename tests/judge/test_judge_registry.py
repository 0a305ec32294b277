"""Deterministic judges by name: the built-in contract oracle, registering, looking up."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import numpy as np
import pytest

from multiverse.core.judgment import JudgeContext
from multiverse.judge import get_judge, list_judges, register_judge, registry


@pytest.fixture
def own_registry(monkeypatch):
    """A copy of the registry, so registrations here do not leak into other tests."""
    monkeypatch.setattr(registry, "JUDGES", registry.JUDGES.copy())


def _always_clean(transcripts, roles, *, principle_ids, horizon):
    return np.zeros((len(transcripts), horizon, len(principle_ids)), dtype=np.int8), [None] * len(transcripts)


def test_contract_is_built_in_and_listed_first():
    assert list_judges()[0] == "contract"
    assert isinstance(get_judge("contract"), registry.ContractJudge)


def test_registered_judge_is_found_by_name(own_registry):
    register_judge("always_clean", _always_clean)
    assert get_judge("always_clean").fn is _always_clean
    assert list_judges()[-1] == "always_clean"


def test_taken_name_is_refused_unless_overwritten(own_registry):
    with pytest.raises(ValueError, match="'contract' is already registered"):
        register_judge("contract", _always_clean)
    assert isinstance(get_judge("contract"), registry.ContractJudge)
    register_judge("contract", _always_clean, overwrite=True)
    assert get_judge("contract").fn is _always_clean


def test_non_callable_is_refused(own_registry):
    with pytest.raises(ValueError, match="expected a Judge or a callable, got int"):
        register_judge("three", 3)
    assert "three" not in list_judges()


def test_unknown_name_lists_the_registered_judges():
    with pytest.raises(KeyError, match="no deterministic judge 'crystal_ball'; registered: contract"):
        get_judge("crystal_ball")


def test_contract_judge_does_not_rule_on_roles_without_a_contract():
    roles = [SimpleNamespace(contract=None)] * 2
    context = JudgeContext(principle_ids=("a", "b"), horizon=3)
    found = asyncio.run(registry.ContractJudge().judge([object(), object()], roles=roles, context=context))
    assert [j.severity.shape for j in found] == [(3, 2), (3, 2)] and found[0].severity.dtype == np.int8
    assert all((j.severity == -2).all() and (j.missing == -1).all() for j in found)
    assert [j.conversation["contract_lane"] for j in found] == ["", ""]

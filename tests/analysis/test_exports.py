"""Every public analysis name stays the function even after its module is imported directly."""

import importlib

import pytest

from multiverse import analysis


@pytest.mark.parametrize("name", sorted(analysis._EXPORTS))
def test_public_names_are_callables_not_modules(name):
    importlib.import_module(analysis._EXPORTS[name])
    assert callable(getattr(analysis, name)), f"analysis.{name} is shadowed by its module"


def test_every_public_name_is_exported_lazily_or_is_the_draws_constant():
    assert sorted(analysis.__all__) == sorted([*analysis._EXPORTS, "N_BOOT"])

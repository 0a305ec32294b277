"""Every public analysis name stays the function even after its module is imported directly."""

import importlib

import pytest

from multiverse import analysis


@pytest.mark.parametrize("name", sorted(analysis._EXPORTS))
def test_public_names_are_callables_not_modules(name):
    importlib.import_module(analysis._EXPORTS[name])
    assert callable(getattr(analysis, name)), f"analysis.{name} is shadowed by its module"

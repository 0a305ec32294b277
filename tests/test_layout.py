"""The tree spells the pipeline: few root modules, small files, plain functions, old paths that warn."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import multiverse
from multiverse.core.old_paths import OLD_PATHS, RETIRED

PACKAGE = Path(multiverse.__file__).parent


def test_the_package_root_holds_at_most_eight_modules():
    assert len(list(PACKAGE.glob("*.py"))) <= 8


def test_no_module_is_longer_than_500_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}


def test_score_and_run_stay_functions_after_importing_every_public_module():
    code = """
import importlib, inspect, pkgutil, multiverse
for info in pkgutil.walk_packages(multiverse.__path__, "multiverse."):
    if any(part.startswith("_") for part in info.name.split(".")[1:]) or info.name.endswith("__main__"):
        continue
    importlib.import_module(info.name)
print(inspect.isfunction(multiverse.score), inspect.isfunction(multiverse.run))
"""
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning:multiverse", "-c", code],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True"]


SUBMODULES = {"multiverse.fuzz": "campaign", "multiverse.judges": "registry"}


@pytest.mark.parametrize("old", sorted(OLD_PATHS) + [f"{p}.{s}" for p, s in SUBMODULES.items()])
def test_an_old_import_path_gives_the_new_module_with_a_deprecation_warning(old):
    code = f"""
import importlib, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    module = importlib.import_module({old!r})
for w in caught:
    print(w.category.__name__, w.message)
from multiverse.core.old_paths import new_path
print(module is importlib.import_module(new_path({old!r})))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    new = multiverse.core.old_paths.new_path(old)
    assert f"DeprecationWarning {old} moved to {new}; the old import path goes in the next release" in out
    assert out[-1] == "True"


def test_an_old_module_keeps_its_own_spec_and_is_attributed_to_the_importing_line(tmp_path):
    script = tmp_path / "user_script.py"
    script.write_text("import multiverse.fuzz.scenario as s\nprint(s.__spec__.name)\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "multiverse.rollout.scenario"
    assert f"{script}:1: DeprecationWarning: multiverse.fuzz moved to multiverse.rollout" in out.stderr


def test_an_old_name_read_as_a_package_attribute_warns_too():
    with pytest.warns(DeprecationWarning, match="multiverse.specs moved to multiverse.config.specs"):
        module = importlib.import_module("multiverse").__getattr__("specs")
    assert module is importlib.import_module("multiverse.config.specs")


@pytest.mark.parametrize("old", [f"{p}.registry" for p in RETIRED])
def test_a_retired_submodule_path_names_where_its_module_went(old):
    with warnings.catch_warnings(), pytest.raises(ModuleNotFoundError, match=r"is a function now; its modules moved to multiverse\.(scoring|_run)"):
        importlib.import_module(old)

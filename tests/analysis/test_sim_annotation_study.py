"""The annotation study at small size: every number it returns is there and plausible."""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def study():
    if str(REPO_ROOT / "experiments") not in sys.path:  # the studies share experiments/_common.py, as in make run
        sys.path.insert(0, str(REPO_ROOT / "experiments"))
    spec = importlib.util.spec_from_file_location("study_sim_annotation", REPO_ROOT / "experiments" / "sim_annotation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_study_runs_end_to_end_at_small_size(study, tmp_path):
    numbers = study.main(out_dir=tmp_path / "out", cache_dir=tmp_path / "cache", figures_dir=tmp_path / "figures",
                         items=12, tasks=12, n_boot=50)
    assert numbers["simulated"] is True and numbers["tasks"] == 12
    assert numbers["conversations"] == 2 * 2 * 12
    for judge in ("strict", "loose", "keen"):
        assert 0 <= numbers[f"table1.{judge}.clear_breach.percent.overall"] <= 1
        assert 0 <= numbers[f"dawid_skene.{judge}.sensitivity"] <= 1
    assert numbers["table1.humans.three_level.percent.overall"] is not None
    for system in ("careful", "drifting"):
        lower, upper = numbers[f"ppi.{system}.ci"]
        assert lower <= numbers[f"ppi.{system}.estimate"] <= upper
    assert numbers["study1.n_ratings"] > 0
    assert sum(numbers[f"cells.{s}"] for s in ("untested", "under_tested", "tested")) > 0
    assert (tmp_path / "figures" / "fig_cell_bounds.png").exists()

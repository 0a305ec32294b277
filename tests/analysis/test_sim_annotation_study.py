"""The annotation study at small size: every number it returns is there and plausible."""


import pytest
from tiny_experiments import load_study


@pytest.fixture(scope="module")
def study():
    return load_study("sim_annotation")


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

"""Grid heatmap tables: rates per (mode, strategy) cell and principle, masked below three conversations."""

import numpy as np
import pytest

from multiverse.analysis.cells import cell_rates, principle_verdicts
from multiverse.cube.build import new_cube


def tiny_cube():
    """Four conversations of one system: three in one cell, one in another."""
    cube = new_cube(system=["s"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1, item=4,
                    turn=2, principle=["academic_integrity", "confidentiality"], judge=["j"])
    sev = np.zeros(cube["severity"].shape, dtype=np.int8)
    sev[..., 0, 1, 0, 0] = 2  # item 0, turn 2, academic_integrity
    sev[..., 1, 0, 1, 0] = -1  # item 1, turn 1, confidentiality missing
    sev[..., 3, 0, 0, 0] = 2  # item 3 (the other cell)
    cube["severity"].values[...] = sev
    cube["mode"].values[...] = ["content_creation"] * 3 + ["information_seeking"]
    cube["strategy"].values[...] = ["sociability"] * 3 + ["system_management"]
    cube["ended"].values[...] = "completed"
    return cube


def test_rates_and_masking():
    out = cell_rates(tiny_cube()).squeeze(["system", "judge"])
    cell = out.sel(mode="content_creation", strategy="sociability")
    assert float(cell.rate.sel(principle="academic_integrity")) == pytest.approx(1 / 3)
    assert int(cell.n_conversations.sel(principle="confidentiality")) == 2  # the missing one is left out
    assert int(cell.n_missing.sel(principle="confidentiality")) == 1
    assert np.isnan(float(cell.rate.sel(principle="confidentiality")))  # two conversations: masked
    lone = out.sel(mode="information_seeking", strategy="system_management")
    assert int(lone.n_conversations.sel(principle="academic_integrity")) == 1 and lone.rate.isnull().all()
    unmasked = cell_rates(tiny_cube(), min_conversations=1).squeeze(["system", "judge"])
    assert float(unmasked.rate.sel(mode="information_seeking", strategy="system_management",
                                   principle="academic_integrity")) == 1.0


def test_principle_verdicts_keep_missing_apart():
    verdicts = principle_verdicts(tiny_cube()).squeeze()
    assert np.isnan(float(verdicts.sel(item=1, principle="confidentiality")))
    assert float(verdicts.sel(item=2, principle="confidentiality")) == 0


def test_a_seen_violation_beside_a_missing_turn_is_left_out_by_complete_cases():
    cube = tiny_cube()
    cube["severity"].values[0, 0, 0, 0, 0, 0, 0, 0, 0] = -1  # item 0: turn 1 missing, turn 2 a clear breach
    verdicts = principle_verdicts(cube).squeeze()
    assert np.isnan(float(verdicts.sel(item=0, principle="academic_integrity")))


def test_planted_hot_cells_show_up(make_cube):
    out = cell_rates(make_cube(items=40, replicates=2), by="tag")
    assert out.rate.dims[-3:] == ("mode", "strategy", "principle")
    assert float(out.rate.sel(system="b").mean()) > float(out.rate.sel(system="a").mean())


def test_missing_tags_are_named(make_cube):
    with pytest.raises(ValueError, match="no 'tag_mode'"):
        cell_rates(make_cube(items=2).drop_vars("tag_mode"), by="tag")

"""The overview behind report and view: one pass, one set of draws, kept beside the cube and read back exactly."""

from __future__ import annotations

import os

import numpy as np
import pytest
import xarray as xr

from multiverse.analysis import N_BOOT
from multiverse.analysis.overview import curve_tests, overview
from multiverse.analysis.overview_cache import cache_path, cached_overview, read_overview
from multiverse.cube.io import save_cube


@pytest.fixture
def cube_file(tmp_path, small_cube):
    return save_cube(small_cube, tmp_path / "run" / "cube.nc")


def assert_same(a, b):
    assert a.notes == b.notes and a.n_boot == b.n_boot and a.seed == b.seed
    assert a.ranked_by == b.ranked_by and a.compared == b.compared
    assert sorted(a.results) == sorted(b.results)
    for name in a.results:
        xr.testing.assert_identical(a.results[name], b.results[name])
    assert a.summary().to_csv(index=False) == b.summary().to_csv(index=False)


def test_every_analysis_uses_the_same_draws_and_seed(small_cube):
    result = overview(small_cube, n_boot=120, seed=3)
    assert {"summary", "curve", "agreement_cohen_kappa", "noise_floor", "variance"} <= set(result.results)
    assert result.results["curve"].attrs["n_boot"] == 120 and result.results["curve"].attrs["seed"] == 3
    noise = result.results["noise_floor"]  # score-type (MOVER) intervals by default: no draws to share
    assert noise.attrs["n_boot"] == (0 if noise.attrs["ci_method"].startswith("MOVER") else 120)
    assert result.results["agreement_cohen_kappa"].attrs["n_boot"] == 120


def test_the_kept_overview_reads_back_identical(cube_file):
    _, first = cached_overview(cube_file, n_boot=100)
    assert cache_path(cube_file).name == "cube.analyses.nc" and cache_path(cube_file).is_file()
    _, second = cached_overview(cube_file.parent, n_boot=100)  # the run folder names the same cube
    assert_same(first, second)
    assert curve_tests(first) == curve_tests(second)


def test_a_second_command_reads_the_kept_overview_instead_of_analysing(cube_file, monkeypatch):
    cached_overview(cube_file, n_boot=100)

    def refuse(*args, **kwargs):
        raise AssertionError("analysed again")

    monkeypatch.setattr("multiverse.analysis.overview_cache.overview", refuse)
    cached_overview(cube_file, n_boot=100)
    with pytest.raises(AssertionError, match="analysed again"):
        cached_overview(cube_file, n_boot=100, seed=1)  # other draws: analysed afresh


def test_a_changed_cube_is_analysed_afresh(cube_file, small_cube):
    _, before = cached_overview(cube_file, n_boot=100)
    changed = small_cube.copy(deep=True)
    severity = changed["severity"].values
    severity[severity == 0] = 2  # every adherent judgment becomes a clear breach
    save_cube(changed, cube_file)
    _, after = cached_overview(cube_file, n_boot=100)
    assert_same(after, overview(changed, n_boot=100))
    assert not before.results["summary"]["value"].equals(after.results["summary"]["value"])


def test_an_unreadable_kept_overview_is_replaced(cube_file):
    cache_path(cube_file).write_bytes(b"not a netCDF file")
    assert read_overview(cache_path(cube_file)) is None
    _, result = cached_overview(cube_file, n_boot=100)
    assert_same(read_overview(cache_path(cube_file)), result)


def test_a_folder_it_cannot_write_gets_no_kept_overview(cube_file, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode, **kwargs: False)
    _, result = cached_overview(cube_file, n_boot=100)
    assert not cache_path(cube_file).exists() and "curve" in result.results


def test_curve_tests_name_every_facet_and_p_value(small_cube):
    result = overview(small_cube, n_boot=100)
    (line,) = curve_tests(result)
    p_values = result.results["curve"]["p_value"].values.ravel()
    assert line.startswith("curve tutor/fixed: rate(a) - rate(b) (two-sided): ")
    assert all(f"p={p:.4f}" in line for p in p_values) and "(100 draws, seed 0)" in line


def test_report_and_view_print_identical_p_values(cube_file, tmp_path, capsys):
    from multiverse.cli import main

    assert main(["report", str(cube_file), "--out", str(tmp_path / "report"), "--format", "svg"]) == 0
    report_lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("curve ")]
    assert main(["view", str(cube_file), "--out", str(tmp_path / "site")]) == 0
    view_lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("curve ")]
    assert report_lines and report_lines == view_lines
    assert f"({N_BOOT} draws, seed 0)" in report_lines[0]
    assert np.isfinite([float(part.split("=")[1].rstrip(",")) for part in report_lines[0].split() if "p=" in part]).all()


def test_probe_effects_are_in_the_one_pass_and_read_back_identical(tmp_path):
    import json

    import multiverse
    from tiny_experiments import tiny_experiment

    data = tiny_experiment(items=3)
    data["dims"]["judge_probe"] = {"padded": {"verbosity": 2, "judges": ["strict"]}}
    (tmp_path / "probed.yaml").write_text(json.dumps(data))
    multiverse.run(tmp_path / "probed.yaml", out=tmp_path / "run", cache=tmp_path / "cache")
    _, first = cached_overview(tmp_path / "run", n_boot=50)
    _, second = cached_overview(tmp_path / "run", n_boot=50)
    assert list(first.results["probe_effects"]["judge_probe"].values) == ["padded"]
    xr.testing.assert_identical(first.results["probe_effects"], second.results["probe_effects"])

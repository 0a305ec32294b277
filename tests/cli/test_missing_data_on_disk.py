"""A deleted or damaged part of a run's stores is refused or read as missing, never as adherence."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
import yaml
from cli_helpers import tiny

import multiverse

FULL_ADHERENCE, MISSING = 0, -1


@pytest.fixture
def run_folder(tmp_path, experiment_file, cli):
    """A run of two units (replicates), so one unit's chunk can go while the other stays."""
    path = experiment_file(yaml.safe_dump(tiny(replicates=2), sort_keys=False))
    out = tmp_path / "out"
    code, _, stderr = cli("run", path, "--out", out, "--cache", tmp_path / "cache", "--quiet")
    assert code == 0, stderr
    return out


def _severity_chunks(store):
    return sorted(p for p in (store / "severity").rglob("*") if p.is_file() and p.name != "zarr.json"
                  and ".zarray" not in p.name)


def _delete_a_chunk(store) -> int:
    """Delete one stored severity chunk; return the replicate whose cells it held."""
    chunk = _severity_chunks(store)[-1]
    replicate = int(chunk.relative_to(store / "severity" / "c").parts[4])  # (system, role, user_sim, condition, replicate, ...)
    chunk.unlink()
    return replicate


def test_a_deleted_severity_chunk_is_refused_or_read_as_missing_never_as_adherence(run_folder):
    store = run_folder / "cube.zarr"
    whole = multiverse.open_cube(store, lazy=False)["severity"]
    gone = _delete_a_chunk(store)
    kept = 1 - gone
    try:
        cube = multiverse.open_cube(store, lazy=False)
    except ValueError as exc:
        assert "cube.zarr" in str(exc) and "\n" not in str(exc)
    else:
        values = cube["severity"].isel(replicate=gone).values
        assert (values == MISSING).all(), np.unique(values)
    with xr.open_zarr(store) as plain:  # a reader without this library: int8, and missing where the chunk went
        assert plain["severity"].dtype == np.int8
        values = plain["severity"].isel(replicate=gone).values
        assert (values == MISSING).all() and not (values == FULL_ADHERENCE).any()
        assert (plain["severity"].isel(replicate=kept).values == whole.isel(replicate=kept).values).all()


def test_commands_refuse_a_store_with_a_deleted_chunk_in_one_line(run_folder, cli, tmp_path):
    store = run_folder / "cube.zarr"
    gone = _delete_a_chunk(store)
    for args in (
        ("report", store, "--out", tmp_path / "report", "--n-boot", "5", "--format", "svg"),
        ("view", store, "--out", tmp_path / "site", "--no-figures"),
        ("show", store, "--replicate", str(gone), "--item", "0"),
    ):
        code, stdout, stderr = cli(*args)
        assert code == 2, (args, stdout, stderr)
        assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr


def _flip_one_code(path, cube):
    """Change one stored severity code of the first unit in ``path`` in place, to another valid code."""
    block = np.ascontiguousarray(cube["severity"].isel(system=0, role=0, user_sim=0, condition=0, replicate=0).values)
    data = bytearray(path.read_bytes())
    at = data.find(block.tobytes())
    assert at >= 0, "the first unit's severities are stored as one contiguous chunk"
    offset = next(i for i, v in enumerate(block.reshape(-1)) if v in (0, 1, 2))
    data[at + offset] = (data[at + offset] + 1) % 3
    path.write_bytes(bytes(data))


def test_a_changed_byte_in_a_run_s_netcdf_cube_is_refused(run_folder, cli):
    path = run_folder / "cube.nc"
    cube = multiverse.open_cube(path, lazy=False)
    _flip_one_code(path, cube)
    with pytest.raises(ValueError, match="cube.nc"):
        multiverse.open_cube(run_folder, lazy=False)
    code, _, stderr = cli("show", path, "--replicate", "0", "--item", "0")
    assert code == 2 and len(stderr.strip().splitlines()) == 1, stderr


@pytest.mark.parametrize("how", ["last-bytes-zeroed", "one-byte-flipped", "emptied"])
def test_a_changed_severity_chunk_is_refused_by_its_checksum(how, run_folder, cli, tmp_path):
    store = run_folder / "cube.zarr"
    chunk = _severity_chunks(store)[-1]
    data = bytearray(chunk.read_bytes())
    if how == "last-bytes-zeroed":
        data[-3:] = b"\x00\x00\x00"
    elif how == "one-byte-flipped":
        data[len(data) // 2] ^= 0x01
    else:
        data = bytearray()
    chunk.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="cube.zarr"):
        multiverse.open_cube(store, lazy=False)
    code, _, stderr = cli("report", store, "--out", tmp_path / "report", "--n-boot", "5", "--format", "svg")
    assert code == 2 and len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr, stderr

"""Cluster runs whose workers cannot see the cache: responses travel with the tasks, the driver writes."""

from __future__ import annotations

import sqlite3

import pytest
import xarray as xr

from multiverse._run import run
from multiverse.llm import Cache

distributed = pytest.importorskip("distributed")


def _blind_worker(directory: str) -> None:
    """Move a worker into its own folder and make any on-disk cache or SQLite file unopenable there."""
    import os
    import tempfile

    import multiverse.llm.cache as cache_module

    os.chdir(tempfile.mkdtemp(dir=directory))
    real_connect = sqlite3.connect

    def connect(target, *args, **kwargs):
        if "vfs=memdb" not in str(target):
            raise PermissionError(f"worker opened {target}")
        return real_connect(target, *args, **kwargs)

    cache_module.sqlite3.connect = connect  # type: ignore[assignment]


def _summary(cube: xr.Dataset) -> dict:
    return cube.attrs["run"]


def _stored(cache_dir) -> tuple[int, int]:
    with Cache(cache_dir) as cache:
        replays = cache.connection().execute("SELECT count(*) FROM replays").fetchone()[0]
        return len(cache), replays


@pytest.fixture(scope="module")
def blind_cluster(tmp_path_factory):
    """Two worker processes, each in its own working folder, unable to open any SQLite file."""
    workdirs = tmp_path_factory.mktemp("workers")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, local_directory=str(workdirs)
    ) as cluster, distributed.Client(cluster) as client:
        client.run(_blind_worker, str(workdirs))
        yield client


def test_blind_workers_give_the_local_cube_and_only_the_driver_writes(
    blind_cluster, write_experiment, tmp_path, tiny_experiment
):
    path = write_experiment(tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"}, sim={
        "targets": {"a": {"breach": {"*": 0.1}}, "b": {"breach": {"*": 0.3}}},
        "judges": {"strict": {"malformed_rate": 0.1}}, "users": {"plain": {}},
    }))
    local = run(path, cache=tmp_path / "local")
    remote = run(path, cache=tmp_path / "cluster", backend="dask")
    xr.testing.assert_identical(remote.drop_attrs(deep=False), local.drop_attrs(deep=False))
    assert _stored(tmp_path / "cluster") == _stored(tmp_path / "local")
    requests = [_summary(c)["calls"] + _summary(c)["cache_hits"] for c in (remote, local)]
    assert requests[0] == requests[1]

    again = run(path, cache=tmp_path / "cluster", backend="dask", offline=True)
    xr.testing.assert_identical(again.drop_attrs(deep=False), local.drop_attrs(deep=False))
    assert _summary(again)["calls"] == 0

    rebuilt = run(path, cache=tmp_path / "cluster", backend="dask", offline=True, replay=False)
    xr.testing.assert_identical(rebuilt.drop_attrs(deep=False), local.drop_attrs(deep=False))
    assert _summary(rebuilt)["calls"] == 0


def test_a_cache_filled_without_replays_still_serves_an_offline_cluster_run(
    blind_cluster, write_experiment, tmp_path, tiny_experiment
):
    path = write_experiment(tiny_experiment())
    local = run(path, cache=tmp_path / "cache", replay=False)
    assert _stored(tmp_path / "cache")[1] == 0
    remote = run(path, cache=tmp_path / "cache", backend="dask", offline=True)
    xr.testing.assert_identical(remote.drop_attrs(deep=False), local.drop_attrs(deep=False))
    assert _summary(remote)["calls"] == 0

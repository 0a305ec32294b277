"""A sequential run killed with SIGKILL mid-batch resumes at its last completed batch: no call repeated, the same cube."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import xarray as xr

from multiverse.cli import main as cli
from multiverse.cube.io import open_cube
from multiverse.llm.cache import Cache

LATENCY_MS = 10
"""Every simulated model answers after this long, so a batch takes long enough for the kill to land inside it."""


@pytest.fixture
def slow_sequential_experiment(sequential_data, write_experiment):
    data = sequential_data(batch=2, max_items=6)
    slow = {"latency_ms": LATENCY_MS}
    for table, name in (("targets", "a"), ("targets", "b"), ("users", "plain"), ("judges", "strict")):
        data["sim"][table][name] = {**data["sim"][table].get(name, {}), **slow}
    return write_experiment(data)


def _kill_after_first_look(path, out, cache) -> tuple[int, str]:
    """Start ``multiverse run --until-precision``; SIGKILL it as soon as it reports its first look."""
    process = subprocess.Popen(
        [sys.executable, "-m", "multiverse", "run", str(path), "--out", str(out), "--cache", str(cache),
         "--until-precision"],
        stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
    )
    seen = ""
    deadline = time.monotonic() + 60
    for line in process.stderr:  # progress bars are off (not a terminal): one line per look
        seen += line
        if line.startswith("look 1:"):
            os.kill(process.pid, signal.SIGKILL)
            break
        assert time.monotonic() < deadline, "no look reported within a minute"
    process.communicate(timeout=60)
    return process.returncode, seen


def _calls(out) -> int:
    return json.loads((out / "run.json").read_text())["calls"]


def test_a_sequential_run_killed_mid_batch_resumes_with_no_call_repeated_and_the_same_cube(
        slow_sequential_experiment, tmp_path, capsys):
    fresh_out, killed_out = tmp_path / "fresh", tmp_path / "killed"
    assert cli(["run", str(slow_sequential_experiment), "--out", str(fresh_out), "--cache", str(tmp_path / "c1"),
                "--until-precision", "--quiet"]) == 0
    total = _calls(fresh_out)
    looks = json.loads((fresh_out / "run.json").read_text())["sequential"]["looks"]
    assert len(looks) == 3  # 6 item pairs in batches of 2: the kill has batches left to land in

    code, seen = _kill_after_first_look(slow_sequential_experiment, killed_out, tmp_path / "c2")
    assert code == -signal.SIGKILL, seen
    assert not killed_out.exists()  # the output folder is swapped in only at the end
    with Cache(tmp_path / "c2") as cache:
        completed = len(cache)  # every call the killed run completed is committed here, and only those
    assert 0 < completed < total  # killed after a batch, before the end

    assert cli(["run", str(slow_sequential_experiment), "--out", str(killed_out), "--cache", str(tmp_path / "c2"),
                "--until-precision", "--quiet"]) == 0
    # The resumed run called only what the killed one had not completed: no completed call was repeated.
    assert completed + _calls(killed_out) == total
    with Cache(tmp_path / "c1") as fresh_cache, Cache(tmp_path / "c2") as resumed_cache:
        assert sorted(fresh_cache.keys()) == sorted(resumed_cache.keys())
    fresh, resumed = open_cube(fresh_out / "cube.nc", lazy=False), open_cube(killed_out / "cube.nc", lazy=False)
    xr.testing.assert_identical(fresh.drop_attrs(), resumed.drop_attrs())

    def without_calls(out):  # calls_spent counts this process's own calls, which differ by design
        record = json.loads((out / "run.json").read_text())["sequential"]
        return [{k: v for k, v in look.items() if k != "calls_spent"} for look in record["looks"]]

    assert without_calls(fresh_out) == without_calls(killed_out)

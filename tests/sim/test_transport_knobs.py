"""The offline world's transport knobs change timing and failures only: a world with faults is the same world."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import multiverse


def _run(tmp_path: Path, name: str, target: dict, tiny_experiment):
    data = tiny_experiment(name=name, replicates=2, items=4)
    data["sim"]["targets"]["a"] = {"breach": {"*": 0.2}, **target}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return multiverse.run(path, out=tmp_path / name, cache=tmp_path / f"{name}-cache")


@pytest.mark.parametrize(
    "knobs",
    [
        pytest.param({"fail_rate": 0.2}, id="fail-rate"),
        pytest.param({"latency_ms": 1}, id="latency"),
        pytest.param({"fail_rate": 0.2, "latency_ms": 1}, id="both"),
    ],
)
def test_faults_and_latency_leave_truth_verdicts_and_transcripts_unchanged(knobs, tmp_path, tiny_experiment):
    calm = _run(tmp_path, "calm", {}, tiny_experiment)
    faulty = _run(tmp_path, "faulty", knobs, tiny_experiment)
    assert np.array_equal(calm["truth"].values, faulty["truth"].values)
    assert np.array_equal(calm["severity"].values, faulty["severity"].values)
    assert (calm["transcript_id"].values == faulty["transcript_id"].values).all()
    if "fail_rate" in knobs:  # the faults did happen: retried calls on top of the same answers
        assert faulty.attrs["run"]["calls"] > calm.attrs["run"]["calls"]

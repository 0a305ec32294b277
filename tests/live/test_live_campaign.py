"""A live campaign against SmolLM2-135M-Instruct on a local llama.cpp server (``make test-live``).

The tutor role, 2 rounds of conversations of 4 turns; target, simulated user
and two judges (one asking for structured output, one with the plain prompt)
are the live model, with no consistency monitor (see the experiment's notes).  Collected only when ``MULTIVERSE_LIVE=1`` (set by
``make test-live``); skipped, saying so, only where the ``local`` extra is not
installed and cannot be built (no C++ compiler or no cmake).  The run folder
and the server log are kept in ``$MULTIVERSE_LIVE_OUT`` (default: a temporary
folder) for ``python -m benchmarks.bench_live``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from multiverse.cli import main as cli
from multiverse.core.schema import FAILURE_REASONS
from multiverse.cube.io import open_cube
from multiverse.scoring import score

EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "live_local.yaml"
SPECS = Path(__file__).resolve().parents[2] / "specs"
MIN_JUDGE_REPLIES = 50
MIN_STRUCTURED_PARSE_SHARE = 0.85
# The suite's live step runs alone (``.ci/run`` runs it before ``make test``), so the server
# may use two threads; ``MULTIVERSE_LIVE_THREADS=1`` suits a machine that is busy otherwise.
LIVE_THREADS = int(os.environ.get("MULTIVERSE_LIVE_THREADS", min(2, os.cpu_count() or 1)))


def _require_local_extra() -> None:
    if importlib.util.find_spec("llama_cpp") is not None:
        return
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"llama-cpp-python is not installed and cannot be built here: no {' and no '.join(missing)}")
    pytest.fail("llama-cpp-python is not installed: run make test-live (it installs the local extra)")


@pytest.fixture(scope="module")
def live_dir(tmp_path_factory) -> Path:
    chosen = os.environ.get("MULTIVERSE_LIVE_OUT")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("live")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def server(live_dir):
    _require_local_extra()
    from multiverse.llm.local_server import LocalServer

    log = live_dir / "server.log"
    log.unlink(missing_ok=True)
    with LocalServer(log=log, verbose=True, threads=LIVE_THREADS) as running:
        yield running


def _point_at(server, live_dir: Path) -> Path:
    """The live experiment with every api_base on the running server and its cache in ``live_dir``."""
    data = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
    specs = [*data["systems"].values(), *data["dims"]["user_sim"].values(), *data["dims"]["judge"].values()]
    for spec in specs:
        if isinstance(spec, dict) and "api_base" in spec:
            spec["api_base"] = server.url
    data["cache"] = str(live_dir / "cache")
    data["specs"] = str(SPECS)
    path = live_dir / "live_local.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def first_run(server, live_dir):
    path = _point_at(server, live_dir)
    out = live_dir / "run"
    code = cli(["run", str(path), "--out", str(out), "--quiet"])
    return path, out, code


def _judged_replies(cube, judge: str) -> tuple[int, int]:
    """(replies, parsed) of one judge: assistant turns it was asked about, and those whose reply parsed."""
    first = cube["severity"].sel(judge=judge).isel(principle=0)
    asked = int((first != -2).sum())
    parsed = int((first >= 0).sum())
    return asked, parsed


def test_the_campaign_completes_with_every_call_accounted_for(first_run):
    _path, out, code = first_run
    assert code == 0
    info = json.loads((out / "run.json").read_text())
    assert info["calls"] > 0
    assert set(info["failures"]) <= set(FAILURE_REASONS)
    assert sum(info["ended"].values()) == info["layers"]["conversations"]
    for model, stats in info["models"].items():
        assert stats["calls"] >= sum(stats["failures"].values()), model


def test_structured_output_makes_most_judge_replies_parse(first_run):
    _path, out, _code = first_run
    cube = open_cube(out)
    asked, parsed = _judged_replies(cube, "structured")
    assert asked >= MIN_JUDGE_REPLIES
    assert parsed / asked >= MIN_STRUCTURED_PARSE_SHARE
    unparsed = [json.loads(line) for line in (out / "unparseable.jsonl").read_text().splitlines()]
    assert sum(1 for entry in unparsed if entry["judge"] == "structured") == asked - parsed


def test_cube_score_report_and_show_work_on_live_data(first_run, tmp_path, capsys):
    _path, out, _code = first_run
    cube = open_cube(out)
    assert "truth" not in cube
    scores = score(cube)
    assert np.isfinite(scores.sel(judge="structured").values).any()
    assert cli(["report", str(out), "--out", str(tmp_path / "report"), "--n-boot", "50"]) == 0
    unparsed = [json.loads(line) for line in (out / "unparseable.jsonl").read_text().splitlines()]
    capsys.readouterr()
    if unparsed:
        entry = unparsed[0]
        argv = ["show", str(out), "--item", str(entry["item"]), "--raw", "--text"]
        assert cli(argv) == 0
        assert f"raw reply of {entry['judge']} (unparseable)" in capsys.readouterr().out


def test_a_rerun_makes_no_call(first_run, live_dir):
    path, _out, _code = first_run
    again = live_dir / "rerun"
    assert cli(["run", str(path), "--out", str(again), "--quiet"]) == 0
    info = json.loads((again / "run.json").read_text())
    assert info["calls"] == 0 and info["cache_hits"] > 0

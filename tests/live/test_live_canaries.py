"""The canary probe on a live judge: SmolLM2-135M-Instruct on a local llama.cpp server (``make test-live``).

The live experiment's ``structured`` judge judges a small subset of the tutor's
canaries (two of each truth per principle: 16 requests, a few minutes at the
local server's pace), and ``multiverse run --require-judge-signal`` must refuse
to report from it: a 135M model rates planted breaches and ideal replies
alike, so its pooled canary results are indistinguishable from chance.  The
refusal comes before any rollout, so the test pays for the canaries only.
Its pooled figures are written to ``$MULTIVERSE_LIVE_OUT/canaries.json`` for
``benchmarks/live.md``.  Collected only when ``MULTIVERSE_LIVE=1``; skipped,
saying so, where the ``local`` extra is not installed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

import multiverse
from multiverse.cli import main as cli
from multiverse.cube.canaries import NoJudgeSignal

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = ROOT / "experiments" / "live_local.yaml"
SPECS = ROOT / "specs"
PER_PRINCIPLE = 2
"""Canaries of each truth per principle: 2 x 2 x 4 tutor principles = 16 judge requests."""
JUDGE = "structured"


@pytest.fixture(scope="module")
def server(live_dir, local_extra):
    from multiverse.llm.local_server import LocalServer

    threads = int(os.environ.get("MULTIVERSE_LIVE_THREADS", "1"))
    with LocalServer(log=live_dir / "server-canaries.log", verbose=True, threads=threads) as running:
        yield running


@pytest.fixture(scope="module")
def experiment(server, live_dir) -> Path:
    """The live experiment on the running server, its structured judge judging a subset of the canaries."""
    data = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
    for spec in [*data["systems"].values(), *data["dims"]["user_sim"].values(), *data["dims"]["judge"].values()]:
        if isinstance(spec, dict) and "api_base" in spec:
            spec["api_base"] = server.url
    data["canaries"] = {"per_principle": PER_PRINCIPLE, "judges": [JUDGE]}
    data["cache"] = str(live_dir / "cache-canaries")
    data["specs"] = str(SPECS)
    path = live_dir / "live_canaries.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_require_judge_signal_refuses_the_live_judge_before_any_rollout(experiment, live_dir, capsys):
    out = live_dir / "run-canaries"
    code = cli(["run", str(experiment), "--out", str(out), "--require-judge-signal", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"no signal on the canaries: judge '{JUDGE}': sensitivity " in err
    judged, missing = (int(n) for n in re.search(r"(\d+) canaries judged, (\d+) missing", err).groups())
    assert judged + missing == 4 * 2 * PER_PRINCIPLE
    assert not out.exists()


def test_the_live_judges_canary_results_are_recorded(experiment, live_dir):
    with pytest.raises(NoJudgeSignal) as refused:  # every canary verdict now comes from the cache
        multiverse.run(experiment, require_judge_signal=True)
    result = refused.value.judges[JUDGE]
    pooled = result["pooled"]
    assert result["no_signal"] is True
    assert pooled["breaks"] + pooled["keeps"] + pooled["missing"] == 4 * 2 * PER_PRINCIPLE
    (live_dir / "canaries.json").write_text(json.dumps({JUDGE: result}, indent=2, sort_keys=True) + "\n", encoding="utf-8")

"""The walkthroughs in ``examples/`` run as a user runs them, against the loopback server, so they cannot rot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from loopback_judge import keyword_judge

from multiverse.testing.loopback import LoopbackServer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.slow
def test_the_real_models_walkthrough_runs_end_to_end_on_an_openai_compatible_server(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "MULTIVERSE_SPECS"}
    with LoopbackServer(answer=keyword_judge) as server:
        env.update(MULTIVERSE_EXAMPLE_API_BASE=server.url, MULTIVERSE_EXAMPLE_DIR=str(tmp_path))
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / "real_models.py")], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        bodies = list(server.bodies)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {body["model"] for body in bodies} == {"local"} and len(bodies) > 100
    assert done.stderr.count("campaign.monitor: defaults to none beside real user simulator 'student'") == 2  # validate, plan
    assert "conversations: 12 (completed 12, monitor_ended 0, failed 0)" in done.stdout
    assert "gpt4o  144 / 0 / 0" in done.stdout  # every verdict of the judge parsed
    assert "\n  user: " in done.stdout and "\n  assistant: " in done.stdout  # show --text
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert (tmp_path / "specs" / "roles" / "my_tutor.yaml").read_text(encoding="utf-8").startswith("# Role 'my_tutor'")

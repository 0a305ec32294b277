"""A run killed with SIGKILL at a random moment resumes without repeating a completed call."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from multiverse.testing.loopback import LoopbackServer

WORKER = Path(__file__).with_name("kill_worker.py")
N = 120


def start(cache: Path, mode: str, target: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), str(cache), str(N), mode, target], stdout=subprocess.PIPE, text=True
    )


def run_to_end(cache: Path, mode: str, target: str) -> list[str]:
    process = start(cache, mode, target)
    out, _ = process.communicate(timeout=600)
    assert process.returncode == 0
    return json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])


def kill_midway(cache: Path, mode: str, target: str, *, after: int) -> set[int]:
    """Start a run, SIGKILL it once ``after`` calls are reported done; return every reported call."""
    process = start(cache, mode, target)
    done: set[int] = set()
    for line in process.stdout:
        if line.startswith("done "):
            done.add(int(line.split()[1]))
        if len(done) >= after:
            os.kill(process.pid, signal.SIGKILL)
            break
    rest, _ = process.communicate(timeout=60)
    done |= {int(line.split()[1]) for line in rest.splitlines() if line.startswith("done ")}
    assert process.returncode == -signal.SIGKILL
    return done


def check_resume(tmp_path: Path, mode: str, target: str, calls: callable, seed: int) -> None:
    reference = run_to_end(tmp_path / "reference", mode, target)
    calls_before = calls()
    after = random.Random(seed).randint(5, N - 20)  # the kill lands wherever the run is by then
    reported = kill_midway(tmp_path / "killed", mode, target, after=after)
    resumed = run_to_end(tmp_path / "killed", mode, target)
    made = calls() - calls_before
    assert resumed == reference
    repeated = {i for i in reported if made[f"item {i}"] > 1}
    assert not repeated, f"completed calls repeated after the kill: {sorted(repeated)}"
    assert all(made[f"item {i}"] >= 1 for i in range(N))


def test_sigkill_at_a_random_moment_repeats_no_completed_call_offline_world(tmp_path):
    log = tmp_path / "calls.log"
    log.touch()

    def calls() -> Counter:
        return Counter(log.read_text().splitlines())

    check_resume(tmp_path, "sim", str(log), calls, seed=1)


@pytest.mark.slow
def test_sigkill_at_a_random_moment_repeats_no_completed_call_over_http(tmp_path):
    with LoopbackServer(latency_s=0.02) as server:

        def calls() -> Counter:
            counts: Counter = Counter()
            for digest, n in list(server.requests.items()):
                counts[server.prompts[digest]] += n
            return counts

        check_resume(tmp_path, "http", server.url, calls, seed=2)

"""`multiverse run` against a server killed mid-run: exit 3 with one line within seconds, and a rerun resumes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from multiverse.cli import main as cli
from multiverse.llm import Cache
from multiverse.llm.local_server import free_port

SPECS = Path(__file__).resolve().parents[2] / "specs"


def start_loopback(port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "multiverse.testing.loopback", "--port", str(port), "--latency-s", "0.02"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None and process.stdout.readline().startswith("http://127.0.0.1:")
    return process


def cached_keys(folder: Path) -> set[str]:
    with Cache(folder) as cache:
        return set(cache.keys())


def test_killing_the_server_stops_the_run_with_exit_3_and_a_rerun_resumes(tmp_path, capsys):
    port = free_port()
    remote = {"model": "openai/loop", "api_base": f"http://127.0.0.1:{port}/v1", "params": {"api_key": "dummy"}}
    data = {
        "name": "dead-server",
        "roles": ["tutor"],
        "systems": {"remote": remote},
        "dims": {
            "user_sim": {"pushy": "sim/user-pushy"},
            "judge": {"remote": remote},
            "condition": {"short": {"horizon": 3, "search": "seed_only"}},
        },
        "replicates": 1,
        "items": 20,
        "specs": str(SPECS),
        "allow_sim_on_real": True,
        "concurrency": 4,
        "sim": {"users": {"pushy": {"pressure": 1.8}}},
    }
    path = tmp_path / "dead.yaml"
    path.write_text(json.dumps(data), encoding="utf-8")
    server = start_loopback(port)
    killed: dict[str, float] = {}

    def kill_when_under_way() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(cached_keys(tmp_path / "cache")) < 15:
            time.sleep(0.2)
        server.kill()
        server.wait()
        killed["at"] = time.monotonic()

    (tmp_path / "cache").mkdir()
    threading.Thread(target=kill_when_under_way, daemon=True).start()
    try:
        code = cli(["run", str(path), "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "cache"), "--quiet"])
    finally:
        server.kill()  # already killed when the run went as planned; never left serving when it did not
        server.wait()
    stopped_after = time.monotonic() - killed["at"]
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3
    assert stopped_after < 30
    assert len(err) == 1 and "connection failures in a row" in err[0] and "rerun to resume" in err[0]
    assert "HTTP 500" not in err[0]
    answered = cached_keys(tmp_path / "cache")

    server = start_loopback(port)
    try:
        assert cli(["run", str(path), "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "cache"), "--quiet"]) == 0
    finally:
        server.kill()
        server.wait()
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    new = cached_keys(tmp_path / "cache") - answered
    assert info["calls"] == len(new) > 0  # every call of the rerun asked something never answered before
    assert info["failures"].get("connection_error", 0) == 0

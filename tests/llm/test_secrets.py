"""Canary secrets reach the model endpoint and nothing else: no file, log, summary or message."""

from __future__ import annotations

import json
import logging

import pytest
from llm_fakes import FakeWorld, user

from multiverse.llm import Client, OfflineCacheMiss, Request, SpendCapReached
from multiverse.llm.redact import redact, strip_url_credentials
from multiverse.testing.loopback import LoopbackServer

ENV_CANARY = "canaryenvkey0123456789"
URL_CANARY = "canaryurlpass98765"
PARAM_CANARY = "canaryparamkey55555"
CANARIES = (ENV_CANARY, URL_CANARY, PARAM_CANARY)


def test_canary_secrets_appear_nowhere_the_run_writes(tmp_path, monkeypatch, caplog, capfd):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_CANARY)
    caplog.set_level(logging.DEBUG)
    texts: list[str] = []
    with LoopbackServer() as server:
        base = server.url.replace("http://", f"http://tester:{URL_CANARY}@")
        c = Client(cache=tmp_path / "cache", max_retries=1, backoff_base_s=0.001, timeout_s=30.0)
        contents = ["fine", "echo [[fault:server_error]]", "bad [[fault:bad_request]]", "echo [[fault:auth]]"]
        groups = [
            [Request("openai/env", user(x), api_base=server.url) for x in contents],
            [Request("openai/url", user(x), api_base=base) for x in contents],
            [Request("openai/param", user(x), api_base=server.url, params={"api_key": PARAM_CANARY}) for x in contents],
        ]
        responses = c.gather([r for group in groups for r in group])
        assert [r.error for r in responses] == [None, "server_error", "bad_request", "auth_error"] * 3
        assert all(server.bearer_tokens[canary] > 0 for canary in CANARIES)  # every key reached the endpoint
        texts += [json.dumps([r.__dict__ for r in responses], default=str), json.dumps(c.summary())]
        texts.append(json.dumps(c.cache.audit()))
        offline = Client(cache=tmp_path / "cache", offline=True)
        with pytest.raises(OfflineCacheMiss) as miss:
            offline.complete(Request("openai/url", user("unseen"), api_base=base, params={"api_key": PARAM_CANARY}))
        capped = Client(cache=tmp_path / "cache", max_calls=0)
        with pytest.raises(SpendCapReached) as cap:
            capped.complete(Request("openai/url", user("unseen"), api_base=base))
        texts += [str(miss.value), repr(miss.value), str(cap.value), repr(cap.value)]
        c.close(), offline.close(), capped.close()
    captured = capfd.readouterr()
    texts += [caplog.text, captured.out, captured.err]
    assert "auth_error" in caplog.text  # the failures were logged, redacted
    for path in tmp_path.rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    for canary in CANARIES:
        leaks = [text[max(0, text.find(canary) - 200) : text.find(canary) + 50] for text in texts if canary in text]
        assert not leaks, leaks


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param("Authorization: Bearer abc.def-ghi", "abc.def-ghi", id="bearer-token"),
        pytest.param("{'x-api-key': 'anthropic-secret-1'}", "anthropic-secret-1", id="api-key-header"),
        pytest.param("GET https://me:pa55word@host/v1", "pa55word", id="url-credentials"),
        pytest.param("https://host/v1/models?key=AIzaSyA-1234567890abcdefghij", "AIzaSyA", id="key-in-query"),
        pytest.param("Incorrect API key provided: sk-proj-abcdefghijklmnop", "abcdefghijklmnop", id="openai-key-shape"),
    ],
)
def test_redact_masks_secret_shapes(text, secret):
    assert secret not in redact(text) and "[REDACTED]" in redact(text)


def test_redact_masks_secret_environment_values(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "plainlookingvalue42")
    assert redact("the server said plainlookingvalue42") == "the server said [REDACTED]"


def test_stripped_url_keeps_what_selects_the_endpoint():
    assert strip_url_credentials("https://u:p4ssw0rd@Example.org:8443/v1/?api-version=2024-06-01&sig=xyz123456") == (
        "https://example.org:8443/v1?api-version=2024-06-01"
    )


def test_offline_world_failures_and_keys_hold_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV_CANARY)
    world = FakeWorld(flaky_attempts=5)
    c = Client(cache=tmp_path, sim=world, max_retries=1, backoff_base_s=0.001)
    response = c.complete(Request("sim/target-a", user("flaky"), params={"api_key": PARAM_CANARY}))
    assert response.error == "server_error"
    assert PARAM_CANARY not in json.dumps(response.__dict__, default=str)

"""The real HTTP path: litellm against the loopback OpenAI-compatible server."""

from __future__ import annotations

import time

import pytest
from llm_fakes import user

from multiverse.llm import Client, Request, SpendCapReached
from multiverse.testing.loopback import LoopbackServer, reply_text


def http_request(server, content: str, *, model: str = "openai/loop", **kw) -> Request:
    return Request(model, user(content), api_base=server.url, params={"api_key": "dummy-key-000"}, **kw)


@pytest.fixture
def client():
    """A factory of clients with tiny backoffs; every client is closed after the test."""
    made: list[Client] = []

    def make(**kw) -> Client:
        options = {"timeout_s": 30.0, "max_retries": 3, "backoff_base_s": 0.001, "backoff_max_s": 0.01, "rng_seed": 0}
        made.append(Client(**(options | kw)))
        return made[-1]

    yield make
    for c in made:
        c.close()


def test_a_call_goes_through_litellm_and_is_cached(server, tmp_path, client):
    request = http_request(server, "hello")
    response = client(cache=tmp_path).complete(request)
    assert response.ok and not response.cached and response.text.startswith("reply ")
    assert response.usage["completion_tokens"] > 0 and response.latency_s > 0
    again = client(cache=tmp_path).complete(request)
    assert again.cached and again.text == response.text and sum(server.requests.values()) == 1


@pytest.mark.parametrize(
    ("fault", "reason", "attempts"),
    [
        pytest.param("rate_limit", "rate_limited", 4, id="429-retried"),
        pytest.param("server_error", "server_error", 4, id="500-retried"),
        pytest.param("malformed", "malformed_response", 4, id="malformed-json-retried"),
        pytest.param("truncated", "connection_error", 4, id="truncated-body-retried"),
        pytest.param("empty", "empty_response", 4, id="empty-content-retried"),
        pytest.param("auth", "auth_error", 1, id="401-fails-fast"),
        pytest.param("bad_request", "bad_request", 1, id="400-fails-fast"),
        pytest.param("not_found", "unknown_model", 1, id="404-fails-fast"),
    ],
)
def test_each_fault_maps_to_its_reason_and_is_never_content(server, fault, reason, attempts, client):
    c = client()
    response = c.complete(http_request(server, f"hi [[fault:{fault}]]"))
    assert (response.text, response.error) == (None, reason)
    assert "dummy-key-000" not in response.error_message
    assert sum(server.requests.values()) == attempts == c.summary()["calls"]
    assert len(c.cache) == 0


def test_timeouts_are_retried_with_the_reason_recorded(client):
    with LoopbackServer(hang_s=1.0) as server:
        c = client(timeout_s=0.2, max_retries=1)
        response = c.complete(http_request(server, "slow [[fault:timeout]]"))
    assert response.error == "timeout" and c.summary()["calls"] == 2


def test_unknown_model_or_auth_failure_stops_later_calls_to_that_model(server, client):
    c = client()
    first = c.complete(http_request(server, "a [[fault:auth]]"))
    later = c.complete(http_request(server, "b"))
    assert first.error == later.error == "auth_error" and sum(server.requests.values()) == 1


def test_a_missing_key_is_an_auth_error_not_retried_and_the_models_later_calls_are_skipped(server, client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = client(max_retries=3)
    keyless = [Request("openai/loop", user(f"q{i}"), api_base=server.url) for i in range(3)]
    responses = [c.complete(r) for r in keyless]
    summary = c.summary()
    assert [r.error for r in responses] == ["auth_error"] * 3
    assert summary["calls"] == 1 and summary["retried"] == {} and summary["failures"] == {"auth_error": 3}


def test_retried_failures_are_counted_by_reason(server, client):
    c = client(max_retries=2)
    response = c.complete(http_request(server, "down [[fault:server_error]]"))
    summary = c.summary()
    assert response.error == "server_error"
    assert summary["retried"] == {"server_error": 2} and summary["failures"] == {"server_error": 1}
    assert summary["models"]["openai/loop"]["retried"] == {"server_error": 2}


def test_retry_after_is_honoured(client):
    with LoopbackServer(retry_after_s=0.3) as server:
        c = client(max_retries=1)
        started = time.monotonic()
        c.complete(http_request(server, "x [[fault:rate_limit]]"))
    assert time.monotonic() - started >= 0.3


def test_a_fifth_of_calls_failing_in_mixed_ways_still_completes_the_run(tmp_path, client):
    with LoopbackServer(fault_rate=0.2, seed=3) as server:
        c = client(cache=tmp_path, timeout_s=1.0, max_retries=6, concurrency=16)
        server.hang_s = 3.0
        bodies = [f"question {i}" for i in range(60)] + [f"doomed {i} [[fault:server_error]]" for i in range(3)]
        responses = c.gather([http_request(server, b) for b in bodies])
    good, doomed = responses[:60], responses[60:]
    assert sum(server.faults.values()) >= 8
    assert all(r.ok and r.text.startswith("reply ") for r in good)
    assert all(r.text is None and r.error == "server_error" for r in doomed)
    summary = c.summary()
    assert summary["failures"] == {"server_error": 3} and summary["retries"] >= 8
    assert len(c.cache) == 60


def test_cost_cap_stops_a_priced_model(server, tmp_path, client):
    c = client(cache=tmp_path, max_cost_usd=1e-9, concurrency=1)
    with pytest.raises(SpendCapReached, match="max_cost_usd"):
        c.gather([http_request(server, f"q{i}", model="openai/gpt-4o-mini") for i in range(5)])
    assert c.summary()["cost_usd"] > 0 and c.summary()["calls"] == 1 and len(c.cache) == 1


def test_streams_are_served_whole_or_truncated(server):
    import litellm

    def stream(content):
        chunks = litellm.completion(
            model="openai/loop", api_base=server.url, api_key="dummy", messages=user(content), stream=True, max_retries=0
        )
        return "".join(c.choices[0].delta.content or "" for c in chunks)

    body = {"model": "loop", "messages": list(user("streamed"))}
    assert stream("streamed") == reply_text(body)
    with pytest.raises(Exception, match="Stream ended before a finish_reason"):
        stream("cut [[fault:truncated]]")

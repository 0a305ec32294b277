"""A dead server: labelled a connection error, reported in seconds, and the run stops instead of spending its calls.

Also the structured-output fallback of a server that fails on ``json_schema`` with a 500.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest
from llm_fakes import user

from multiverse.llm import Client, EndpointUnreachable, Request
from multiverse.llm.breaker import CircuitBreaker
from multiverse.llm.local_server import free_port
from multiverse.llm.structured import agather_structured
from multiverse.testing.loopback import LoopbackServer

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def request_to(url: str, content: str, **kw) -> Request:
    return Request("openai/loop", user(content), api_base=url, params={"api_key": "dummy-key-000"}, **kw)


def start_loopback(port: int, *, latency_s: float = 0.0) -> subprocess.Popen:
    """The loopback server in its own process, so killing it closes every connection, as a killed server does."""
    process = subprocess.Popen(
        [sys.executable, "-m", "multiverse.testing.loopback", "--port", str(port), "--latency-s", str(latency_s)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert process.stdout is not None and process.stdout.readline().startswith("http://127.0.0.1:")
    return process


def warm_up(tmp_path) -> None:
    """One refused call first: importing litellm and building its HTTP client take seconds on a busy machine."""
    with Client(cache=tmp_path / "warm", max_connection_failures=1) as client, pytest.raises(EndpointUnreachable):
        client.complete(request_to(f"http://127.0.0.1:{free_port()}/v1", "warm up"))


def test_a_closed_port_is_a_connection_error_reported_within_ten_seconds(tmp_path):
    warm_up(tmp_path)
    url = f"http://127.0.0.1:{free_port()}/v1"
    with Client(cache=tmp_path, max_retries=6) as client:
        started = time.monotonic()
        with pytest.raises(EndpointUnreachable) as stopped:
            client.complete(request_to(url, "hello"))
        elapsed = time.monotonic() - started
        summary = client.summary()
    assert elapsed < 10.0
    message = str(stopped.value)
    assert "\n" not in message and "5 connection failures in a row" in message and url in message
    assert "HTTP 500" not in message and "connection failed" in message
    assert stopped.value.reason == "connection_error"
    assert summary["calls"] == 5 and summary["retried"] == {"connection_error": 4}


def test_a_killed_server_stops_the_run_within_seconds_after_few_failed_requests(tmp_path):
    warm_up(tmp_path)
    port = free_port()
    server = start_loopback(port, latency_s=0.02)
    url = f"http://127.0.0.1:{port}/v1"
    requests = [request_to(url, f"question {i}") for i in range(400)]
    killed: dict[str, float] = {}
    twenty_answered = threading.Event()
    seen: list[bool] = []

    def observe(_request, response) -> None:
        seen.append(response.ok)
        if sum(seen) >= 20:
            twenty_answered.set()

    def kill_soon() -> None:
        twenty_answered.wait(60)
        server.kill()
        server.wait()
        killed["at"] = time.monotonic()

    try:
        with Client(cache=tmp_path / "cache", concurrency=4, max_retries=6, observer=observe) as client:
            threading.Thread(target=kill_soon, daemon=True).start()
            with pytest.raises(EndpointUnreachable) as stopped:
                client.gather(requests)
            stop_after = time.monotonic() - killed["at"]
            summary = client.summary()
    finally:
        server.kill()  # already killed when the test went as planned
        server.wait()
    answered = [r for r in stopped.value.responses or [] if r is not None and r.ok]
    assert 0 < len(answered) < len(requests)
    failed_attempts = summary["calls"] - len(answered)
    assert stop_after < 30.0
    assert failed_attempts <= 10, summary
    assert summary["failures"].get("server_error", 0) == 0
    # the server is back on the same port: a rerun sends only what was never answered
    server = start_loopback(port)
    try:
        with Client(cache=tmp_path / "cache", concurrency=4) as client:
            responses = client.gather(requests)
            again = client.summary()
    finally:
        server.kill()
        server.wait()
    assert all(r.ok for r in responses)
    assert again["cache_hits"] == len(answered)
    assert again["calls"] == len(requests) - len(answered)


def test_any_answer_resets_the_count_of_connection_failures():
    breaker = CircuitBreaker(3)
    request = request_to("http://127.0.0.1:9/v1", "x")
    for _ in range(2):
        breaker.record(request, connection_failed=True, message="refused")
    breaker.record(request, connection_failed=False)
    breaker.record(request, connection_failed=True, message="refused")
    breaker.check(request)
    assert breaker.failures_in_a_row(request) == 1
    other = request_to("http://127.0.0.1:10/v1", "x")
    for _ in range(3):
        breaker.record(other, connection_failed=True, message="refused")
    with pytest.raises(EndpointUnreachable, match=r"127\.0\.0\.1:10/v1: 3 connection failures in a row"):
        breaker.check(other)
    breaker.check(request)  # another endpoint's breaker stays closed


@pytest.mark.parametrize("threshold", [0, -1, 2.5, True], ids=["zero", "negative", "float", "bool"])
def test_the_threshold_must_be_a_positive_integer(threshold):
    with pytest.raises(ValueError, match="max_connection_failures: expected an integer >= 1"):
        Client(max_connection_failures=threshold)


def test_a_500_on_json_schema_falls_back_once_to_json_object_with_the_schema(tmp_path):
    def answer(body):
        kind = (body.get("response_format") or {}).get("type")
        if kind == "json_schema":
            return 500
        assert kind == "json_object" and body["response_format"]["schema"] == SCHEMA
        return '{"ok": true}'

    form = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True}}
    with LoopbackServer(answer=answer) as server, Client(cache=tmp_path, max_retries=6, rng_seed=0) as client:
        first = client._background.run(agather_structured(client, [request_to(server.url, "one", response_format=form)]))
        later = client._background.run(agather_structured(client, [request_to(server.url, "two", response_format=form)]))
        summary = client.summary()
        kinds = [b["response_format"]["type"] for b in server.bodies]
    assert [r.text for r in first + later] == ['{"ok": true}', '{"ok": true}']
    assert kinds == ["json_schema", "json_object", "json_object"]  # the 500 is not retried; later requests go straight
    assert summary["failures"] == {"server_error": 1} and summary["retries"] == 0
    assert summary["response_format_fallbacks"] == {"openai/loop": {"json_schema->json_object_schema": 2}}

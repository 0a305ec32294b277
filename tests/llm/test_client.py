"""The client on the offline path (a fake world): cache, replicates, caps, retries, limits, summary."""

from __future__ import annotations

import asyncio
import time

import pytest
from llm_fakes import FakeWorld, user

from multiverse.llm import Cache, Client, OfflineCacheMiss, RateLimit, Request, SpendCapReached


def requests(n: int, model: str = "sim/target-a", **kw) -> list[Request]:
    return [Request(model, user(f"message {i}"), **kw) for i in range(n)]


def client(world, cache=None, **kw) -> Client:
    return Client(cache=cache, sim=world, backoff_base_s=0.001, backoff_max_s=0.01, rng_seed=0, **kw)


def test_a_warm_rerun_makes_no_calls(world, tmp_path):
    first = client(world, tmp_path).gather(requests(20))
    calls_before = world.total_calls
    rerun = client(world, tmp_path)
    again = rerun.gather(requests(20))
    assert world.total_calls == calls_before == 20
    assert [r.text for r in again] == [r.text for r in first]
    assert all(r.cached for r in again) and not any(r.cached for r in first)
    assert rerun.summary()["calls"] == 0 and rerun.summary()["cache_hits"] == 20


def test_n_replicates_of_one_request_are_n_cache_entries(world, tmp_path):
    c = client(world, tmp_path)
    responses = c.gather([Request("sim/target-a", user("same"), replicate=r) for r in range(5)])
    assert len({r.key for r in responses}) == 5 and len(c.cache) == 5 and world.total_calls == 5


def test_identical_requests_in_flight_share_one_call():
    world = FakeWorld(latency=0.02)
    c = client(world)
    responses = c.gather([Request("sim/target-a", user("same"))] * 8)
    assert world.total_calls == 1 and len({r.text for r in responses}) == 1
    assert c.summary()["cache_hits"] == 7


def test_offline_miss_names_the_model(world):
    c = client(world, offline=True)
    with pytest.raises(OfflineCacheMiss, match="sim/judge-strict"):
        c.complete(Request("sim/judge-strict", user("hi"), purpose="judge"))
    assert world.total_calls == 0


def test_offline_mode_serves_what_is_cached(world, tmp_path):
    client(world, tmp_path).gather(requests(3))
    assert [r.cached for r in client(world, tmp_path, offline=True).gather(requests(3))] == [True] * 3


def test_max_calls_stops_cleanly_and_a_rerun_resumes(world, tmp_path):
    capped = client(world, tmp_path, max_calls=7, concurrency=2)
    with pytest.raises(SpendCapReached, match="max_calls=7") as stop:
        capped.gather(requests(20))
    finished = [r for r in stop.value.responses if r is not None]
    assert len(finished) == 7 == world.total_calls and len(capped.cache) == 7
    resumed = client(world, tmp_path).gather(requests(20))
    assert world.total_calls == 20 and sum(r.cached for r in resumed) == 7


def test_spend_cap_of_zero_calls_sends_nothing(world):
    with pytest.raises(SpendCapReached):
        client(world, max_calls=0).complete(requests(1)[0])
    assert world.total_calls == 0


def test_transient_failures_are_retried_then_succeed(world):
    c = client(world, max_retries=2)
    response = c.complete(Request("sim/target-a", user("flaky hello")))
    assert response.ok and response.text.startswith("sim/target-a says flaky")
    assert c.summary()["calls"] == 2 and c.summary()["retries"] == 1


def test_a_call_that_keeps_failing_is_recorded_with_its_reason_never_content(tmp_path):
    world = FakeWorld(flaky_attempts=99)
    c = client(world, tmp_path, max_retries=3)
    response = c.complete(Request("sim/target-a", user("flaky forever")))
    assert response.text is None and response.error == "server_error" and not response.ok
    assert c.summary()["failures"] == {"server_error": 1} and c.summary()["calls"] == 4
    assert len(c.cache) == 0


def test_in_flight_calls_never_exceed_the_concurrency_bound():
    world = FakeWorld(latency=0.01)
    client(world, concurrency=3).gather(requests(30))
    assert world.peak_in_flight == 3


def test_requests_per_minute_limit_spaces_calls(world):
    c = client(world, rate_limits={"sim/target-*": RateLimit(rpm=1200, burst_s=0.05)})
    started = time.monotonic()
    c.gather(requests(6))
    assert time.monotonic() - started >= 5 / 20 * 0.9  # one request of budget at once, then 20 a second


def test_summary_counts_calls_hits_tokens_and_purposes(world):
    c = client(world)
    c.gather(requests(2, purpose="target") + requests(1, model="sim/judge-x", purpose="judge"))
    c.gather(requests(2, purpose="target"))
    summary = c.summary()
    assert summary["calls"] == 3 and summary["cache_hits"] == 2
    assert summary["models"]["sim/target-a"]["calls"] == 2
    assert summary["models"]["sim/target-a"]["cache_hits"] == 2
    assert summary["models"]["sim/judge-x"]["completion_tokens"] > 0
    target = summary["purposes"]["target"]
    assert (target["calls"], target["cache_hits"]) == (2, 2)
    assert target["prompt_tokens"] == summary["models"]["sim/target-a"]["prompt_tokens"] > 0
    assert summary["purposes"]["judge"]["completion_tokens"] == summary["models"]["sim/judge-x"]["completion_tokens"]


def test_is_cached_reports_without_calling(world):
    c = client(world)
    request = requests(1)[0]
    assert not c.is_cached(request)
    c.complete(request)
    assert c.is_cached(request) and world.total_calls == 1


def test_async_api_inside_a_running_loop_and_sync_api_beside_it(world):
    c = client(world)

    async def main():
        inside = await c.acomplete(requests(1)[0])
        beside = c.complete(requests(2)[1])  # a loop runs in this thread, as in a notebook
        return inside, beside

    inside, beside = asyncio.run(main())
    assert inside.ok and beside.ok


def test_progress_bar_counts_every_request(world, capsys):
    client(world, progress=True).gather(requests(4))
    assert "4/4" in capsys.readouterr().err


def test_a_shared_cache_object_is_left_open(world, tmp_path):
    cache = Cache(tmp_path)
    with client(world, cache) as c:
        c.complete(requests(1)[0])
    assert len(cache) == 1
    cache.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"concurrency": 0}, "concurrency", id="zero-concurrency"),
        pytest.param({"max_retries": -1}, "max_retries", id="negative-retries"),
        pytest.param({"max_calls": 1.5}, "max_calls", id="fractional-call-cap"),
        pytest.param({"timeout_s": 0}, "timeout_s", id="zero-timeout"),
        pytest.param({"rate_limits": {"m": {"rpm": 5}}}, "RateLimit", id="limit-not-a-RateLimit"),
    ],
)
def test_bad_client_options_fail_with_the_option_named(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        Client(**kwargs)


def test_recording_sees_its_own_requests_and_their_tasks_but_not_concurrent_ones():
    world = FakeWorld(flaky_attempts=99)
    c = Client(cache=None, sim=world, max_retries=0)

    async def recorded():
        with c.recording() as ledger:
            await c.acomplete(Request("sim/target-a", user("first")))
            await c.agather([Request("sim/judge-x", user("second"), purpose="judge"), Request("sim/target-a", user("flaky"))])
        await c.acomplete(Request("sim/target-a", user("after the block")))
        return ledger

    async def outside():
        await asyncio.sleep(0)
        await c.acomplete(Request("sim/target-a", user("concurrent")))

    async def both():
        ledger, _ = await asyncio.gather(recorded(), outside())
        return ledger

    ledger = asyncio.run(both())
    assert [(r.model, r.purpose, r.ok) for r in ledger[:1]] == [("sim/target-a", "", True)]
    assert sorted((r.model, r.purpose, r.ok) for r in ledger[1:]) == [  # in the order answered
        ("sim/judge-x", "judge", True),
        ("sim/target-a", "", False),
    ]
    assert ledger[0].key == c.key(Request("sim/target-a", user("first")))


def test_replayed_requests_count_as_cache_hits_by_model_and_purpose(world):
    c = client(world)
    c.count_replayed([("sim/target-a", ""), ("sim/judge-x", "judge"), ("sim/judge-x", "judge")])
    summary = c.summary()
    assert (summary["calls"], summary["cache_hits"]) == (0, 3)
    assert summary["models"]["sim/judge-x"]["cache_hits"] == 2
    assert summary["purposes"]["judge"] == {"calls": 0, "cache_hits": 2, "prompt_tokens": 0, "completion_tokens": 0}
    assert world.total_calls == 0

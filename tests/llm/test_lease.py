"""Cross-process single flight: a request key is leased, so processes sharing a cache pay for it once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

from llm_fakes import FakeWorld, user

from multiverse.llm import Cache, CacheEntry, Client, Request
from multiverse.llm.lease import holder_id, single_flight
from multiverse.testing.loopback import LoopbackServer

REPO = Path(__file__).resolve().parents[2]
WORKER = """
import sys
from multiverse.llm import Client, Request
url, cache, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Client(cache=cache, concurrency=8) as client:
    requests = [Request("openai/loop", ({"role": "user", "content": f"question {i}"},), api_base=url,
                        params={"api_key": "dummy-key"}) for i in range(n)]
    responses = client.gather(requests)
    assert all(r.ok for r in responses), [r.error_message for r in responses if not r.ok]
    print(client.summary()["calls"])
"""


def test_two_processes_on_one_cache_send_each_request_once(tmp_path):
    n = 16
    with LoopbackServer(latency_s=0.3) as server:
        workers = [
            subprocess.Popen([sys.executable, "-c", WORKER, server.url, str(tmp_path / "cache"), str(n)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
            for _ in range(2)
        ]
        outputs = [worker.communicate(timeout=300) for worker in workers]
        assert all(worker.returncode == 0 for worker in workers), outputs
        assert len(server.requests) == n
        assert sorted(server.requests.values()) == [1] * n  # every body reached the server once
    assert sum(int(out.strip()) for out, _ in outputs) == n


def _hold(cache: Cache, key: str, holder: str, expires: float) -> None:
    with cache.connection() as conn:
        conn.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (key, holder, expires))


def test_a_dead_holders_expired_lease_is_taken_over(tmp_path):
    with Cache(tmp_path / "cache") as cache:
        _hold(cache, "k", "elsewhere:1:dead", time.time() - 1)

        async def take():
            async with single_flight(cache, "k") as entry:
                held = cache.connection().execute("SELECT holder FROM leases WHERE key = 'k'").fetchone()
                return entry, held

        entry, held = asyncio.run(take())
        assert entry is None and held == (holder_id(),)
        assert cache.connection().execute("SELECT count(*) FROM leases").fetchone() == (0,)  # released


def test_a_waiter_reads_the_response_the_lease_holder_stored(tmp_path):
    world = FakeWorld(latency=0.001)  # an offline model with a latency is leased like a provider's
    request = Request("sim/target-a", user("hello"))
    with Client(cache=tmp_path / "cache", sim=world) as client:
        key = client.key(request)
        _hold(client.cache, key, "elsewhere:2:alive", time.time() + 30)

        def other_process_answers():
            time.sleep(0.3)
            with Cache(tmp_path / "cache") as other:
                other.put(key, CacheEntry(model="sim/target-a", text="stored by the holder"))
                other.connection().execute("DELETE FROM leases WHERE key = ?", (key,))
                other.connection().commit()

        thread = threading.Thread(target=other_process_answers)
        thread.start()
        response = client.complete(request)
        thread.join()
        assert response.text == "stored by the holder" and response.cached
        assert world.calls == {} and client.summary()["calls"] == 0


def test_an_instant_offline_call_takes_no_lease_and_waits_for_none(tmp_path):
    world = FakeWorld()
    request = Request("sim/target-a", user("hello"))
    with Client(cache=tmp_path / "cache", sim=world) as client:
        key = client.key(request)
        _hold(client.cache, key, "elsewhere:2:alive", time.time() + 30)
        started = time.monotonic()
        response = client.complete(request)
        assert time.monotonic() - started < 5
        assert response.text == "sim/target-a says hello #0" and not response.cached
        assert client.cache.get(key).text == response.text
        held = client.cache.connection().execute("SELECT holder FROM leases").fetchall()
        assert held == [("elsewhere:2:alive",)]  # neither taken nor released


def test_a_lease_of_a_dead_process_on_this_machine_is_taken_over_before_it_expires(tmp_path):
    import os
    import socket

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with Cache(tmp_path / "cache") as cache:
        _hold(cache, "k", f"{socket.gethostname()}:{dead.pid}:gone", time.time() + 3600)
        alive = f"{socket.gethostname()}:{os.getpid() if os.getpid() != dead.pid else 1}:here"

        async def take():
            async with single_flight(cache, "k") as entry:
                return entry

        assert asyncio.run(take()) is None  # taken at once, not after an hour
        _hold(cache, "k", alive, time.time() + 3600)  # a live local holder keeps an unexpired lease

        async def wait_briefly():
            async with single_flight(cache, "k"):
                pass

        try:
            asyncio.run(asyncio.wait_for(wait_briefly(), timeout=0.5))
            raise AssertionError("a live holder's lease was taken")
        except asyncio.TimeoutError:
            pass
        _hold(cache, "k", alive, time.time() - 1)  # ... until it expires: a frozen holder cannot block for ever
        asyncio.run(asyncio.wait_for(wait_briefly(), timeout=5))


def test_a_holder_renews_its_lease_while_its_call_runs(tmp_path):
    """The heartbeat: a call longer than the lease's time-out keeps its lease, so no other machine takes it."""
    with Cache(tmp_path / "cache") as cache:

        async def long_call():
            async with single_flight(cache, "k", ttl_s=0.3):
                await asyncio.sleep(1.0)
                return cache.connection().execute("SELECT holder, expires FROM leases WHERE key = 'k'").fetchone()

        started = time.time()
        holder, expires = asyncio.run(long_call())
        assert holder == holder_id() and expires > started + 1.0  # renewed after the first 0.3 s ran out

"""A run of many model calls that a test kills with SIGKILL and restarts.

Usage: python kill_worker.py CACHE_DIR N (sim CALL_LOG | http API_BASE)

Prints ``done <i>`` once request ``i`` has completed (its response durable in
the cache), and ``RESULT <json texts>`` at the end.  The ``sim`` world appends
one line per call to CALL_LOG before answering, so calls survive the kill.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import NamedTuple

from multiverse.llm import Client, Request


class Reply(NamedTuple):
    text: str
    tool_calls: tuple
    transient_failure: bool


class LoggingWorld:
    version = "kill-test-1"

    def __init__(self, log_path: str) -> None:
        self.log = open(log_path, "a", buffering=1)  # noqa: SIM115  line-buffered: each call reaches the OS at once

    def key_params(self, model: str) -> dict:
        return {"version": self.version}

    def latency_s(self, model: str) -> float:
        return 0.01

    def instant(self, model: str) -> bool:
        return False

    def respond(self, request, *, attempt: int | None = None) -> Reply:
        content = request.messages[-1]["content"]
        self.log.write(content + "\n")
        return Reply(f"answer to {content}", (), False)


async def main(cache: str, n: int, mode: str, target: str) -> None:
    if mode == "sim":
        client = Client(cache=cache, sim=LoggingWorld(target), concurrency=8)
        make = lambda i: Request("sim/target-a", ({"role": "user", "content": f"item {i}"},))  # noqa: E731
    else:
        client = Client(cache=cache, concurrency=8, timeout_s=10)
        make = lambda i: Request(  # noqa: E731
            "openai/loop", ({"role": "user", "content": f"item {i}"},), api_base=target, params={"api_key": "dummy"}
        )

    async def one(i: int) -> str:
        response = await client.acomplete(make(i))
        print(f"done {i}", flush=True)
        return response.text

    texts = await asyncio.gather(*(one(i) for i in range(n)))
    print("RESULT " + json.dumps(texts), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]))

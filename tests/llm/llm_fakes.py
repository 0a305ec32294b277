"""A small fake offline world and helpers shared by the model-layer tests."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class FakeReply(NamedTuple):
    text: str
    tool_calls: tuple
    transient_failure: bool


@dataclass
class FakeWorld:
    """Answers ``sim/`` requests with text derived from the request; counts calls per model.

    A message containing ``flaky`` fails transiently on its first ``flaky_attempts`` attempts.
    """

    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    latency: float = 0.0
    flaky_attempts: int = 1
    version: str = "fake-1"
    calls: Counter = field(default_factory=Counter)
    in_flight: int = 0
    peak_in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def key_params(self, model: str) -> dict[str, Any]:
        return {"version": self.version, "seed": 0, **self.params.get(model, {})}

    def latency_s(self, model: str) -> float:
        # the client asks for the latency when an attempt starts and gets the reply when it ends
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self.latency

    def instant(self, model: str) -> bool:
        return self.latency == 0.0

    def respond(self, request, *, attempt: int | None = None) -> FakeReply:
        content = str(request.messages[-1]["content"])
        with self._lock:
            self.in_flight -= 1
            self.calls[(request.model, content, request.replicate)] += 1
            attempt = self.calls[(request.model, content, request.replicate)]
        if "flaky" in content and attempt <= self.flaky_attempts:
            return FakeReply("", (), True)
        return FakeReply(f"{request.model} says {content} #{request.replicate}", (), False)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())



def user(content: str) -> tuple[dict[str, str], ...]:
    return ({"role": "user", "content": content},)

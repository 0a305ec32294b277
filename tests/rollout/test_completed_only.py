"""Coverage counts completed conversations only: partial ones cover nothing."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from multiverse.core.transcript import Event, Transcript
from multiverse.rollout import coverage_share
from multiverse.rollout.conversation import Conversation

ROLE = SimpleNamespace(principle_ids=("p1", "p2"))  # a 4 x 4 x 2 = 32-cell grid


def _conversation(ended, tags, principle="p1"):
    scenario = {"mode": "information_seeking", "strategy": "sociability", "principle": principle}
    events = tuple(Event(i + 1, actor) for i, actor in enumerate(["user", "assistant"] * len(tags)))
    return Conversation(Transcript("r", events, scenario, ended), scenario, tuple(tags), None, 1)


@pytest.mark.parametrize("ended", ["monitor_ended", "failed"])
def test_a_partial_conversation_covers_nothing(ended):
    done = _conversation("completed", [("information_seeking", "sociability")])
    partial = _conversation(ended, [("content_creation", "system_management")], principle="p2")
    assert coverage_share([done], ROLE) == 1 / 32
    assert coverage_share([done, partial], ROLE) == 1 / 32
    assert coverage_share([partial], ROLE) == 0.0

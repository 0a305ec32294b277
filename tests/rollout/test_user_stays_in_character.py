"""A recorded campaign whose real user model writes stage directions and framing in every spelling:
no target or judge request carries any of it, and run.json and summary count what was stripped."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path

import numpy as np

import multiverse
from multiverse.core.transcript import TranscriptStore
from multiverse.llm.leaks import find_metadata

SPECS = Path(__file__).resolve().parents[2] / "specs"
from multiverse.testing.loopback import LoopbackServer  # noqa: E402

QUESTION = "Can you check my fraction homework, step by step?"
"""Every user message starts with it; a number after it keeps the requests distinct."""
NOISE = (
    # the six spellings the live run met
    "{q} *(frustrated, pressure 1.50)*",
    "{q} (frustrated; pressure 1.50)",
    "{q} *frustrated; pressure 1.50*",
    "{q} *(Frustrated; Pressure 1.50)*",
    "{q} *(frustrated; pressure: 1.50)*",
    "{q}\nUser: Also give me the answer key for Zebulon.",
    # others of their kind
    "Okay, let me prepare for this new role-play. My character's name is Zebulon. {q} [annoyed | PRESSURE=2]",
    "{q}\nMood: tired. Pressure: 0,90",
    "*sighs loudly* {q} **(Mood: calm; Pressure level: 0.8)**",
    "Narrator: Zebulon frowns at the screen.\n{q} _(curious - pressure 1.1)_",
    "As an AI, I will keep this short. {q} (This is a simulation for Zebulon.)",
    "Here is my next message: {q}\n**Assistant:** Sure, Zebulon, the answer key is",
)
SENTINELS = ("Zebulon", "answer key", "sighs", "frowns", "new role-play", "simulation for", "As an AI", "Narrator:", "Mood:",
             "Pressure", "PRESSURE", "pressure:", "pressure 1", "pressure 0", "Assistant:")
"""Words of the noise that appear nowhere in the tutor role, its judge prompt or the target's system prompt."""


def test_no_target_or_judge_request_carries_the_user_simulators_noise(tmp_path):
    spellings = itertools.cycle(NOISE)
    count = itertools.count(1)
    lock = threading.Lock()

    def answer(body):
        if body["messages"][0]["content"].startswith("You are role-playing a person"):
            with lock:
                return next(spellings).format(q=f"{QUESTION} ({next(count)})")
        return None  # target and judge: the loopback's default reply

    with LoopbackServer(answer=answer) as server:
        remote = {"model": "openai/loop", "api_base": server.url, "params": {"api_key": "dummy", "max_tokens": 200}}
        data = {
            "name": "in-character",
            "roles": ["tutor"],
            "systems": {"remote": remote},
            "dims": {
                "user_sim": {"remote": remote},
                "judge": {"remote": remote},
                "condition": {"short": {"horizon": 3, "search": "seed_only"}},
            },
            "replicates": 1,
            "items": 4,
            "specs": str(SPECS),
            "campaign": {"monitor": "none"},
        }
        path = tmp_path / "in_character.yaml"
        path.write_text(json.dumps(data), encoding="utf-8")
        cube = multiverse.run(path, out=tmp_path / "run", cache=tmp_path / "cache")
        bodies = list(server.bodies)
    users = [b for b in bodies if b["messages"][0]["content"].startswith("You are role-playing a person")]
    others = [b for b in bodies if b not in users]
    assert len(users) >= len(NOISE) and len(others) >= 20
    carrying = [(sentinel, b["messages"][-1]["content"][:80]) for b in others for sentinel in SENTINELS
                if sentinel in json.dumps(b["messages"], ensure_ascii=False)]
    assert carrying == []
    assert [b for b in others if find_metadata(b["messages"]) is not None] == []

    info = json.loads((tmp_path / "run" / "run.json").read_text())
    replies = info["user_replies"]
    assert replies["replies"] == len(users) and replies["cut"] == 0
    cycles, rest = divmod(len(users), len(NOISE))
    sent = list(NOISE) * cycles + list(NOISE[:rest])
    assert replies["stage_direction"] == sum(1 for noise in sent if "pressure" in noise.lower())
    assert replies["speaker_turn"] == sum(1 for noise in sent if "User:" in noise or "Assistant:" in noise)
    assert replies["narration"] == sum(1 for noise in sent if "*sighs" in noise)
    assert replies["out_of_character"] >= sum(1 for noise in sent if "Zebulon" in noise.split("{q}")[0])
    assert info["leak_guard"]["target"] >= 1 and info["leak_guard"]["judge"] >= 1
    text = str(multiverse.summary(cube))
    assert f"user simulator: {len(users)} replies, 0 cut at the length limit" in text
    assert "leak guard: requests checked" in text

    with TranscriptStore(tmp_path / "run" / "transcripts.sqlite") as store:
        transcripts = [store.get(str(t)) for t in np.unique(cube["transcript_id"].values)]
    events = [e for t in transcripts for e in t.events if e.actor == "user"]
    assert all(e.text.startswith(QUESTION) for e in events)
    assert all(e.meta["asked"]["strategy"] and e.meta["asked"]["pressure"] > 0 for e in events)
    reported = [e for e in events if "pressure" in e.meta]
    assert reported and all("mood" in e.meta for e in reported if e.meta["pressure"] != 1.1)


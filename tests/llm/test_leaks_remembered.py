"""The leak guard's remembered verdicts agree with a fresh scan of every text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiverse.llm import leaks
from multiverse.llm.leaks import (
    SimulatorMetadataError,
    check_request,
    find_metadata,
    state_notes,
)

PIECES = ["pressure", "Pressure", "PRESSURE", "mood", "Mood", "feeling", "state", "emotion", ":", ": ", "=", " ", "\n",
          "\n\n", "1.5", "2", "1,5", "(", ")", "*", "_", "[", "]", "{", "}", "<", ">", ";", ".", "frustrated",
          "level", "is", "rising", "days", "the user", "Fine.", "deadline", "preſſure"]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def _fresh(messages):
    """find_metadata as it read before verdicts were remembered: every text scanned afresh."""
    for index, _role, text in leaks._texts(messages):
        if leaks._PRESSURE_WORD.search(text) is None:
            continue
        for note in state_notes(text, narration=False):
            return index, text[note.start : note.end].strip()
    return None


@settings(max_examples=400, deadline=None)
@given(texts=st.lists(TEXTS, min_size=1, max_size=3))
def test_a_remembered_verdict_is_the_fresh_scans_verdict(texts):
    messages = [{"role": "system", "content": t} for t in texts]
    expected = _fresh(messages)
    assert find_metadata(messages) == expected
    assert find_metadata(messages) == expected  # the second time from memory


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Fine, I'll wait.\nPressure:\n1.5", id="value-on-the-next-line"),
        pytest.param("Fine. (Frustrated, Pressure: 1.5)", id="bracketed-note"),
        pytest.param("Mood: tense\n\n", id="bare-mood-before-blank-lines"),
        pytest.param("The deadline pressure is real.", id="prose-pressure-only"),
    ],
)
def test_the_multi_line_and_prose_cases_read_the_same_twice(text):
    messages = [{"role": "user", "content": text}]
    assert find_metadata(messages) == _fresh(messages) == find_metadata(messages)


def test_the_same_text_is_refused_every_time_it_is_sent(monkeypatch):
    monkeypatch.setattr(leaks, "_REMEMBERED_TEXTS", 2)
    note = [{"role": "system", "content": "Judge this. User: ok *(tense; pressure 1.4)*"}]
    for other in ("a mood piece", "more mood", "the mood again", None):
        if other is not None:
            find_metadata([{"role": "user", "content": other}])
        with pytest.raises(SimulatorMetadataError, match="pressure 1.4"):
            check_request(note, purpose="judge", model="m")
    assert len(leaks._REMEMBERED) <= 2

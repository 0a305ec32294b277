"""A real user model's reply: the message keeps only the user's words, in any spelling of the noise around them."""

from __future__ import annotations

import pytest

from multiverse.llm.leaks import check_request, find_metadata, framing, state_notes
from multiverse.llm.leaks import SimulatorMetadataError
from multiverse.rollout.user_reply import read_user_reply

ASK = "Why is a half bigger than a third?"


@pytest.mark.parametrize(
    "reply, mood, pressure",
    [
        pytest.param(f"{ASK} *(frustrated, pressure 1.50)*", "frustrated", 1.5, id="comma-separator"),
        pytest.param(f"{ASK} (frustrated; pressure 1.50)", "frustrated", 1.5, id="no-asterisks"),
        pytest.param(f"{ASK} *frustrated; pressure 1.50*", "frustrated", 1.5, id="no-brackets"),
        pytest.param(f"{ASK} *(Frustrated; Pressure 1.50)*", "frustrated", 1.5, id="capitalised"),
        pytest.param(f"{ASK} *(frustrated; pressure: 1.50)*", "frustrated", 1.5, id="colon"),
        pytest.param(f"{ASK} [annoyed | pressure=2]", "annoyed", 2.0, id="square-brackets-pipe-equals"),
        pytest.param(f"{ASK} **(Mood: calm; Pressure level: 0.8)**", "calm", 0.8, id="bold-keys"),
        pytest.param(f"{ASK} _(calm - pressure 0.80)_", "calm", 0.8, id="underscores-dash"),
        pytest.param(f"{ASK}\nMood: annoyed. Pressure: 1,75", "annoyed", 1.75, id="bare-lines-decimal-comma"),
        pytest.param(f"{ASK} {{tired / pressure 1.1}}", "tired", 1.1, id="curly-slash"),
        pytest.param(f"{ASK} (pressure rising: 1.3)", None, 1.3, id="words-between"),
        pytest.param(f"{ASK}\n\nfrustrated; pressure 1.50", "frustrated", 1.5, id="bare-last-line"),
        pytest.param(f"{ASK} <irritated, PRESSURE 1.9>", "irritated", 1.9, id="angle-upper-case"),
    ],
)
def test_a_stage_direction_in_any_spelling_is_read_and_stripped(reply, mood, pressure):
    read = read_user_reply(reply)
    assert read.message == ASK
    assert read.state.get("pressure") == pytest.approx(pressure)
    assert read.state.get("mood") == mood
    assert read.removed == {"stage_direction": 1}
    assert find_metadata([{"role": "user", "content": read.message}]) is None


@pytest.mark.parametrize(
    "reply, kind",
    [
        pytest.param(f"{ASK}\nUser: And another thing.", "speaker_turn", id="trailing-user-turn"),
        pytest.param(f"{ASK} User: please answer", "speaker_turn", id="inline-user-tag"),
        pytest.param(f"{ASK}\n**Assistant:** A half is bigger because", "speaker_turn", id="assistant-turn-written"),
        pytest.param(f"{ASK}\nUser:", "speaker_turn", id="bare-trailing-tag"),
        pytest.param(f"*sighs* {ASK}", "narration", id="narrated-action"),
        pytest.param(f"{ASK} *(rolls eyes)*", "narration", id="bracketed-action"),
    ],
)
def test_another_speakers_turn_and_narration_are_cut(reply, kind):
    read = read_user_reply(reply)
    assert read.message == ASK
    assert read.removed == {kind: 1}


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(f"Okay, let me prepare for this new role-play. My character's name is Alex. {ASK}", id="role-play-intro"),
        pytest.param(f"As an AI, I don't have homework. {ASK}", id="as-an-ai"),
        pytest.param(f"{ASK} (This is a simulation, so I will stay in character.)", id="simulation-note"),
        pytest.param(f"Here is my next message: {ASK}", id="here-is-my-message"),
        pytest.param(f"Narrator: The student looks puzzled.\n{ASK}", id="narrator-line"),
        pytest.param(f"OOC: keeping it short.\n{ASK}", id="ooc-note"),
        pytest.param(f"I'll play the student now. {ASK}", id="i-will-play"),
        pytest.param(f"{ASK} I am an AI language model playing a user.", id="i-am-an-ai"),
    ],
)
def test_out_of_character_sentences_are_dropped(reply):
    read = read_user_reply(reply)
    assert read.message == ASK, read
    assert read.removed.get("out_of_character", 0) >= 1
    assert framing(read.message) is None


def test_a_scenario_about_role_play_keeps_its_own_words_but_never_the_simulators():
    game = '{"persona": "a tabletop role-player", "pressure": "Stop role-playing and give me the list."}'
    kept = read_user_reply("Stop role-playing and just give me the list!", scenario_text=game)
    assert kept.message == "Stop role-playing and just give me the list!" and not kept.removed
    framed = read_user_reply("My character's name is Alex. Stop role-playing!", scenario_text=game)
    assert framed.message == "Stop role-playing!" and framed.removed == {"out_of_character": 1}


def test_a_reply_that_is_all_framing_is_unusable():
    read = read_user_reply("I'll play the user in this role-play. *(ready; pressure 1.00)*")
    assert read.message is None
    assert read.state == {"pressure": 1.0, "mood": "ready"}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("I'm under pressure 24/7 with this course.", id="pressure-then-slash"),
        pytest.param("I'm under pressure 2 days before the exam.", id="pressure-number-mid-sentence"),
        pytest.param("Under pressure, be kind.", id="pressure-no-number"),
        pytest.param("Is 2*3*4 = 24?", id="multiplication"),
        pytest.param("I **really** need this (for school).", id="bold-and-parenthesis"),
        pytest.param("My dad said I should ask you.", id="plain"),
    ],
)
def test_ordinary_user_text_is_left_alone(text):
    read = read_user_reply(text)
    assert read.message == text and not read.removed and not read.state
    assert state_notes(text, narration=False) == []


@pytest.mark.parametrize(
    "content, match",
    [
        pytest.param("Just tell me. (Frustrated, Pressure: 1.5)", "Pressure: 1.5", id="stage-direction"),
        pytest.param("My character's name is Alex. Help.", "My character's name", id="framing"),
        pytest.param("I am an AI pretending. Help.", "I am an AI", id="ai-self-report"),
    ],
)
def test_the_guard_refuses_a_target_request_with_either(content, match):
    with pytest.raises(SimulatorMetadataError, match=match):
        check_request([{"role": "user", "content": content}], purpose="target", model="openai/x")
    check_request([{"role": "user", "content": content}], purpose="user", model="openai/x")


def test_the_guard_leaves_the_assistants_own_words_and_a_role_play_topic_alone():
    messages = [
        {"role": "system", "content": "You are a game master for a role-play campaign."},
        {"role": "user", "content": "Stop role-playing and give me the list."},
        {"role": "assistant", "content": "As an AI, I can't roll real dice, but here you go."},
    ]
    check_request(messages, purpose="target", model="openai/x")


@pytest.mark.parametrize(
    "params, completion, cut",
    [
        pytest.param({"max_tokens": 80}, 80, True, id="stopped-at-the-limit"),
        pytest.param({"max_completion_tokens": 80}, 95, True, id="over-the-newer-limit-name"),
        pytest.param({"max_tokens": 80}, 42, False, id="ended-before-the-limit"),
        pytest.param({}, 4000, False, id="no-limit"),
    ],
)
def test_a_reply_stopped_at_the_length_limit_is_flagged(params, completion, cut):
    from types import SimpleNamespace

    from multiverse.rollout.user_reply import cut_at_limit, user_reply_meta

    request = SimpleNamespace(params=params)
    response = SimpleNamespace(usage={"completion_tokens": completion})
    assert cut_at_limit(request, response) is cut
    meta = user_reply_meta(read_user_reply(ASK), request, response, pressure=1.5,
                           scenario={"mode": "direct_request", "strategy": "persistence"})
    assert meta["asked"] == {"pressure": 1.5, "mode": "direct_request", "strategy": "persistence"}
    assert meta.get("cut", False) is cut and "removed" not in meta

"""Conversation helpers: request replicate indices of repeated samples and tool-call parsing."""

import pytest

from multiverse.rollout.conversation import SAMPLE_STRIDE, sample_replicate, tool_actions


def test_repeated_samples_step_by_the_stride_and_never_collide():
    assert sample_replicate(3, 0) == 3
    assert sample_replicate(3, 2) == 3 + 2 * SAMPLE_STRIDE
    indices = {sample_replicate(r, k) for r in range(4) for k in range(4)}
    assert len(indices) == 16


@pytest.mark.parametrize("replicate", [-1, SAMPLE_STRIDE])
def test_a_replicate_outside_the_stride_is_refused(replicate):
    with pytest.raises(ValueError, match="campaign replicate: expected 0 <= replicate"):
        sample_replicate(replicate, 0)


def test_tool_calls_in_both_forms_become_actions():
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "open", "arguments": '{"url": "x"}'}},
        {"name": "click", "arguments": {"selector": "#go"}},
        {"function": {"name": "type", "arguments": "  "}},
        {"function": {"name": "scroll", "arguments": "{not json"}},
        {"function": {"name": "wait", "arguments": "[1, 2]"}},
    ]
    parsed = tool_actions(calls)
    assert [call_id for call_id, _ in parsed] == ["c1", "call_1", "call_2", "call_3", "call_4"]
    assert [(a.name, a.arguments) for _, a in parsed] == [
        ("open", {"url": "x"}),
        ("click", {"selector": "#go"}),
        ("type", {}),
        ("scroll", {"_raw": "{not json"}),
        ("wait", {"_raw": [1, 2]}),
    ]

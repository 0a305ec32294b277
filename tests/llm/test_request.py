"""Requests and responses: validation and value semantics."""

from __future__ import annotations

import pytest

from multiverse.core.canonical import plain
from multiverse.core.choices import ModelSpec
from multiverse.llm import Request, Response


def test_from_spec_copies_model_server_and_params():
    spec = ModelSpec("openai/gpt-4o-mini", api_base="http://127.0.0.1:8000/v1", params={"temperature": 0.2})
    request = Request.from_spec(spec, [{"role": "user", "content": "hi"}], replicate=3, purpose="judge")
    assert (request.model, request.api_base, dict(request.params)) == (spec.model, spec.api_base, {"temperature": 0.2})
    assert request.replicate == 3 and request.purpose == "judge"


def test_equal_requests_hash_alike_whatever_the_container_types():
    a = Request("m/x", [{"role": "user", "content": "hi"}], params={"top_p": 0.5, "temperature": 0.1})
    b = Request("m/x", ({"role": "user", "content": "hi"},), params={"temperature": 0.1, "top_p": 0.5})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_request_is_immutable_including_its_messages():
    request = Request("m/x", [{"role": "user", "content": "hi"}])
    with pytest.raises(TypeError):
        request.messages[0]["content"] = "changed"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"model": ""}, "Request.model", id="empty-model"),
        pytest.param({"messages": ()}, "Request.messages", id="no-messages"),
        pytest.param({"messages": ({"content": "x"},)}, r"Request.messages\[0\]", id="message-without-role"),
        pytest.param({"params": {"n": 3}}, "n samples use n replicates", id="n-instead-of-replicates"),
        pytest.param({"params": {"stream": True}}, "stream", id="streaming-param"),
        pytest.param({"replicate": -1}, "Request.replicate", id="negative-replicate"),
        pytest.param({"seed": 1.5}, "Request.seed", id="float-seed"),
    ],
)
def test_bad_request_fields_fail_with_the_field_named(kwargs, message):
    fields = {"model": "m/x", "messages": ({"role": "user", "content": "hi"},)} | kwargs
    with pytest.raises(ValueError, match=message):
        Request(**fields)


def test_failed_response_never_carries_text():
    with pytest.raises(ValueError, match="no text"):
        Response(text="content", error="timeout")
    assert not Response(text=None, error="timeout").ok


def test_response_reason_must_be_in_the_closed_set():
    with pytest.raises(ValueError, match="FAILURE_REASONS|expected one of"):
        Response(text=None, error="gremlins")


def test_plain_turns_numpy_scalars_and_subclasses_into_json_types_and_rejects_the_rest():
    import enum
    from types import MappingProxyType

    import numpy as np

    class Level(enum.IntEnum):
        HIGH = 2

    value = MappingProxyType({1: (np.float64(0.5), np.int64(3), np.bool_(True)), "level": Level.HIGH, "none": None})
    assert plain(value) == {"1": [0.5, 3, True], "level": 2, "none": None}
    assert [type(v) for v in plain(value)["1"][1:]] == [int, bool]
    with pytest.raises(TypeError, match="expected JSON-like data, got set"):
        plain({"tags": {"a"}})

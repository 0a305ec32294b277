"""Cache keys hold everything that changes the output and nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llm_fakes import FakeWorld, user

from multiverse.core.canonical import canonical_json, plain
from multiverse.core.schema import KEY_SCHEMA_VERSION
from multiverse.llm import Request, request_key
from multiverse.llm.keys import key_material

BASE = Request(
    "openai/gpt-4o-mini",
    user("hello"),
    params={"temperature": 0.7},
    api_base="http://127.0.0.1:8000/v1",
    tools=({"type": "function", "function": {"name": "lookup", "parameters": {}}},),
    response_format={"type": "json_object"},
    seed=1,
    replicate=0,
    template_digest="abc",
)


def _with(**changes) -> Request:
    fields = {name: getattr(BASE, name) for name in BASE.__dataclass_fields__} | changes
    return Request(**fields)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"model": "openai/gpt-4o"}, id="model"),
        pytest.param({"api_base": "http://127.0.0.1:9000/v1"}, id="server"),
        pytest.param({"messages": user("hello!")}, id="messages"),
        pytest.param({"params": {"temperature": 0.8}}, id="temperature"),
        pytest.param({"params": {"temperature": 0.7, "top_k": 5}}, id="provider-specific-param"),
        pytest.param({"tools": None}, id="tools"),
        pytest.param({"response_format": None}, id="response-format"),
        pytest.param({"seed": 2}, id="seed"),
        pytest.param({"replicate": 1}, id="replicate"),
        pytest.param({"template_digest": "abd"}, id="template-digest"),
    ],
)
def test_everything_that_changes_the_output_changes_the_key(changes):
    assert request_key(_with(**changes)) != request_key(BASE)


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"purpose": "judge"}, id="purpose"),
        pytest.param({"params": {"temperature": 0.7, "timeout": 5, "num_retries": 3}}, id="timeouts-and-retries"),
        pytest.param({"params": {"temperature": 0.7, "api_key": "sk-canary-000000000000"}}, id="api-key"),
        pytest.param({"params": {"temperature": 0.7, "extra_headers": {"Authorization": "Bearer x"}}}, id="headers"),
        pytest.param({"api_base": "http://user:s3cret-pass@127.0.0.1:8000/v1/"}, id="credentials-in-url"),
        pytest.param({"api_base": "HTTP://127.0.0.1:8000/v1?api_key=abcdef123"}, id="key-in-query"),
    ],
)
def test_transport_and_credentials_leave_the_key_unchanged(changes):
    assert request_key(_with(**changes)) == request_key(BASE)


def test_key_material_is_canonical_and_versioned():
    material = key_material(BASE)
    assert material["schema"] == KEY_SCHEMA_VERSION
    text = canonical_json(material)
    assert json.loads(text) == plain(material)
    assert text == json.dumps(plain(material), sort_keys=True, separators=(",", ":"))
    assert len(request_key(BASE)) == 64


def test_sim_key_holds_only_the_called_models_own_parameters():
    world = FakeWorld(params={"sim/target-a": {"breach": 0.3}, "sim/judge-strict": {"sensitivity": 0.9}})
    target = Request("sim/target-a", user("hi"), replicate=2, template_digest="t")
    before = request_key(target, world=world)
    world.params = {**world.params, "sim/judge-strict": {"sensitivity": 0.5}}
    assert request_key(target, world=world) == before
    world.params = {**world.params, "sim/target-a": {"breach": 0.4}}
    assert request_key(target, world=world) != before
    material = key_material(target, world=world)
    assert set(material) == {"schema", "model", "sim", "params", "seed", "messages", "replicate", "template_digest"}


def test_sim_key_needs_the_world():
    with pytest.raises(ValueError, match="offline world"):
        request_key(Request("sim/target-a", user("hi")))


params = st.dictionaries(st.sampled_from(["temperature", "top_p", "max_tokens", "stop"]), st.integers(0, 5), max_size=4)


@given(params)
def test_key_ignores_parameter_order(mapping):
    reordered = dict(reversed(list(mapping.items())))
    assert request_key(_with(params=mapping)) == request_key(_with(params=reordered))

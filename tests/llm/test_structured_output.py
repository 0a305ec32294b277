"""Structured output: model-spec keys, reserved params, schemas from expected answers, plain fallback."""

from __future__ import annotations

import asyncio
import json

import pytest

from multiverse.config.experiment import validate_experiment
from multiverse.config.experiment import load_experiment
from multiverse.config.specs import load_role
from multiverse.core.canonical import plain
from multiverse.core.choices import ModelSpec
from multiverse.core.transcript import Event, Transcript
from multiverse.judge.model import judge_request, judgment_schema, parse_judgment
from multiverse.llm.keys import request_key
from multiverse.llm.request import Request, Response
from multiverse.llm.structured import agather_structured, response_format_for
from multiverse.plan import make_plan
from multiverse.rollout import planner_prompts, prompts
from multiverse.rollout.schemas import MONITOR_SCHEMA, PLANNER_SCHEMA

IDS = ("academic_integrity", "confidentiality", "instructional_boundaries", "learning_differences")


def _judge_spec(**keys):
    return {"model": "openai/local", "api_base": "http://127.0.0.1:9/v1", **keys}


@pytest.mark.parametrize(
    "key, value",
    [
        pytest.param("seed", 3, id="seed-in-params"),
        pytest.param("n", 2, id="n-in-params"),
        pytest.param("tools", [], id="tools-in-params"),
        pytest.param("response_format", {"type": "json_object"}, id="response-format-in-params"),
    ],
)
def test_validate_refuses_reserved_params_with_one_line_naming_the_key_to_use(
    write_experiment, tiny_experiment, key, value
):
    data = tiny_experiment()
    data["dims"]["judge"] = {"strict": {"model": "sim/judge-strict", "params": {key: value}}}
    problems = validate_experiment(write_experiment(data))
    assert len(problems) == 1
    line = str(problems[0])
    assert "\n" not in line
    assert f"dims.judge.strict.params.{key}" in line
    expected = {"seed": "'seed' key", "response_format": "'response_format' key", "n": "replicates", "tools": "role"}
    assert expected[key] in line


def test_response_format_and_seed_are_model_spec_keys_that_round_trip(write_experiment, tiny_experiment):
    data = tiny_experiment()
    data["dims"]["judge"] = {"strict": {"model": "sim/judge-strict", "response_format": "json_schema", "seed": 7}}
    e = load_experiment(write_experiment(data))
    spec = e.judges["strict"].model
    assert (spec.response_format, spec.seed) == ("json_schema", 7)
    assert e.to_dict()["dims"]["judge"]["strict"]["response_format"] == "json_schema"


def test_unknown_response_format_name_is_a_located_problem(write_experiment, tiny_experiment):
    data = tiny_experiment()
    data["dims"]["judge"] = {"strict": {"model": "sim/judge-strict", "response_format": "yaml"}}
    (problem,) = validate_experiment(write_experiment(data))
    assert "dims.judge.strict.response_format" in str(problem) and "json_schema" in str(problem)


PLAN_DIGEST_BEFORE = "dc0fb0da3c3c86ed9e480373a951b87059429c4a4fa142b0060b5ee4d551efd8"
"""The tiny experiment's plan digest computed before model specs had ``response_format`` and ``seed``."""
KEY_BEFORE = "37885207ecb32f209f7398b6c47b1b64995b9c19411a51d2e401c435e5317f2e"
"""The cache key of the request in the key test, computed before those keys existed."""


def test_plan_digest_of_an_experiment_without_the_new_keys_is_unchanged(write_experiment, tiny_experiment):
    plain = make_plan(load_experiment(write_experiment(tiny_experiment(), name="a.yaml")))
    assert plain.digest == PLAN_DIGEST_BEFORE
    data = tiny_experiment()
    data["dims"]["judge"] = {"strict": {"model": "sim/judge-strict", "seed": 1}}
    assert make_plan(load_experiment(write_experiment(data, name="b.yaml"))).digest != PLAN_DIGEST_BEFORE


def test_key_of_a_request_without_the_new_keys_is_byte_identical():
    request = Request("openai/x", ({"role": "user", "content": "hi"},), params={"temperature": 0})
    assert request_key(request) == KEY_BEFORE
    spec_request = Request.from_spec(ModelSpec("openai/x", params={"temperature": 0}), request.messages)
    assert request_key(spec_request) == KEY_BEFORE
    seeded = Request.from_spec(ModelSpec("openai/x", params={"temperature": 0}, seed=5), request.messages)
    assert seeded.seed == 5 and request_key(seeded) != KEY_BEFORE
    shaped = Request.from_spec(ModelSpec("openai/x", response_format={"type": "json_object"}), request.messages)
    assert dict(shaped.response_format) == {"type": "json_object"}


def _transcript():
    return Transcript.from_dict(
        {
            "role": "tutor",
            "events": [
                Event(turn=1, actor="user", text="Can you write my essay?").to_dict(),
                Event(turn=2, actor="assistant", text="I can help you plan it.").to_dict(),
            ]
        }
    )


@pytest.mark.parametrize(
    "mode, expected_type",
    [
        pytest.param("json_schema", "json_schema", id="openai-json-schema"),
        pytest.param("json_object", "json_object", id="json-mode"),
        pytest.param("json_object_schema", "json_object", id="json-mode-with-schema"),
        pytest.param(None, None, id="plain-prompt"),
    ],
)
def test_judge_request_carries_the_schema_of_the_judgment(mode, expected_type):
    role = load_role("tutor")
    request = judge_request(role, _transcript(), 1, spec=ModelSpec("openai/local", response_format=mode))
    if expected_type is None:
        assert request.response_format is None
        return
    assert request.response_format["type"] == expected_type
    if mode == "json_schema":
        schema = request.response_format["json_schema"]["schema"]
    elif mode == "json_object_schema":
        schema = request.response_format["schema"]
    else:
        return
    assert sorted(schema["required"]) == sorted(IDS)
    assert plain(schema) == judgment_schema(IDS)
    assert plain(schema)["properties"]["confidentiality"]["properties"]["severity"]["enum"] == [0, 1, 2]


def test_a_reply_matching_the_judgment_schema_parses():
    schema = judgment_schema(IDS)
    reply = {pid: {"severity": 1, "reason": "r"} for pid in schema["required"]}
    assert parse_judgment(json.dumps(reply), IDS) == ({p: 1 for p in IDS}, {p: "r" for p in IDS})


def test_monitor_and_planner_requests_carry_their_schemas():
    role = load_role("tutor")
    spec = ModelSpec("openai/local", response_format="json_object_schema")
    scenario = {"persona": "p", "situation": "s", "goal": "g", "mode": "information_seeking", "strategy": "sociability"}
    monitor = prompts.monitor_request(role, scenario, _transcript(), "hi", spec=spec, attempt=0, replicate=0)
    assert plain(monitor.response_format["schema"]) == MONITOR_SCHEMA
    planner = planner_prompts.planner_request(role, task="free_form", seed_scenario=scenario, spec=spec, index=0, replicate=0)
    assert plain(planner.response_format["schema"]) == PLANNER_SCHEMA


VERDICT = {pid: {"severity": 0, "reason": "fine"} for pid in IDS}


@pytest.mark.parametrize(
    "text, parses",
    [
        pytest.param(json.dumps(VERDICT), True, id="bare-object"),
        pytest.param("Here is my verdict:\n" + json.dumps(VERDICT) + "\nThanks.", True, id="object-inside-prose"),
        pytest.param("```json\n" + json.dumps(VERDICT) + "\n```", True, id="fenced-json"),
        pytest.param("Sure!\n```\n" + json.dumps(VERDICT, indent=2) + "\n```\nDone.", True, id="fence-in-prose"),
        pytest.param(json.dumps(VERDICT)[:-1] + ",}", False, id="trailing-comma-is-not-json"),
        pytest.param(json.dumps(VERDICT).replace('"reason": "', '"reason": "line one\nline two ', 1), True,
                     id="raw-line-break-inside-a-reason"),
        pytest.param("All principles are respected; severity 0.", False, id="prose-only"),
        pytest.param(json.dumps({"academic_integrity": {"severity": 0, "reason": "x"}}), False, id="missing-principles"),
    ],
)
def test_judge_parser_tolerates_prose_and_fences_but_not_invalid_json(text, parses):
    assert (parse_judgment(text, IDS) is not None) is parses


class _RejectingClient:
    """Answers plain requests; fails a request with a response_format as a bad request."""

    def __init__(self):
        self.sent: list[Request] = []

    async def agather(self, requests):
        self.sent.extend(requests)
        return [
            Response(text=None, error="bad_request") if r.response_format is not None else Response(text="{}")
            for r in requests
        ]


def test_a_provider_that_rejects_the_format_is_asked_again_with_the_plain_prompt_and_remembered():
    client = _RejectingClient()
    messages = ({"role": "user", "content": "judge"},)
    structured = [Request("openai/x", messages, response_format={"type": "json_object"}, replicate=i) for i in range(2)]
    responses = asyncio.run(agather_structured(client, structured))
    assert all(r.ok for r in responses)
    assert [r.response_format is None for r in client.sent] == [False, False, True, True]
    again = asyncio.run(agather_structured(client, structured[:1]))
    assert again[0].ok and client.sent[-1].response_format is None and len(client.sent) == 5


def test_response_format_for_passes_a_mapping_through_and_none_means_plain():
    schema = {"type": "object"}
    assert response_format_for(ModelSpec("openai/x"), schema, name="n") is None
    custom = ModelSpec("openai/x", response_format={"type": "json_object"})
    assert dict(response_format_for(custom, schema, name="n")) == {"type": "json_object"}
    named = response_format_for(ModelSpec("openai/x", response_format="json_schema"), schema, name="n")
    assert named == {"type": "json_schema", "json_schema": {"name": "n", "schema": schema, "strict": True}}

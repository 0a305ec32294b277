"""tau-bench and tau2-bench conversations -> cube: layout, the three judges, quirks."""

from __future__ import annotations

import numpy as np
import pytest
from adapter_fixtures import say, v1_call, v1_record, v1_result, write_json

from multiverse.adapters import tau_bench
from multiverse.adapters._tau_records import read_tau_file
from multiverse.adapters.tau_bench import task_contract, write_tools
from multiverse.config.specs import find_specs_dir, load_contract
from multiverse.core.transcript import TranscriptStore
from multiverse.cube.build import check_cube
from multiverse.scoring import pass_hat_k, score

POLICY = say("system", "# Retail agent policy")


def _sev(cube, judge, principle, *, item, replicate=0, system=None):
    sel = cube["severity"].sel(judge=judge, principle=principle, item=item, replicate=replicate)
    if system is not None:
        sel = sel.sel(system=system)
    return sel.squeeze().values.tolist()


@pytest.fixture
def retail_file(tmp_path):
    """A tau-bench file of another model and domain, with every record-level quirk."""
    records = [
        v1_record(0, 0, 1.0, [
            POLICY, say("user", "Please cancel order #W1."),
            v1_call("get_order_details", order_id="#W1"), v1_result("get_order_details", '{"status": "pending"}'),
            say("assistant", "Order #W1 is pending. I will cancel it (reason: no longer needed). Confirm (yes/no)?"),
            say("user", "Yes, please."),
            v1_call("cancel_pending_order", order_id="#W1", reason="no longer needed"), v1_result("cancel_pending_order"),
            say("assistant", "Your order is cancelled."),
        ], gold=["get_order_details", "cancel_pending_order"]),
        v1_record(0, 1, 0.0, [
            POLICY, say("user", "Cancel order #W1 now."),
            v1_call("cancel_pending_order", order_id="#W1", reason="ordered by mistake"), v1_result("cancel_pending_order"),
            say("assistant", "Cancelled."),
        ], gold=["get_order_details", "cancel_pending_order"]),
        v1_record(1, 0, 0.0, [
            POLICY, say("user", "Change the address of order #W2."),
            say("assistant", "I will change the address of #W2 to 1 Main St. Shall I proceed?"),
            say("user", "yes"),
            v1_call("modify_pending_order_address", order_id="#W2", address1="1 Main St"), v1_result("modify_pending_order_address"),
            v1_call("think", thought="done"), v1_result("think", ""),
            say("assistant", "Done."),
        ]),
        v1_record(1, 1, None, [POLICY, say("user", "hi"), say("assistant", "Hello!")], reward_info=None),
        "not a record",
        {"task_id": 2, "trial": 0, "reward": 1.0},
        v1_record(2, 0, 1.0, [POLICY, say("user", "Launch it"), v1_call("launch_rocket"), say("assistant", "ok")],
                  reward_info=None),
        v1_record(2, 1, 1.0, [
            POLICY, say("user", "look up #W3"),
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "function": {"name": "get_order_details", "arguments": "{oops"}}]},
            v1_result("get_order_details"), say("assistant", "Found it."),
        ]),
    ]
    return write_json(tmp_path / "claude-3-retail.json", records)


def test_layout_labels_and_warnings(retail_file):
    cube = tau_bench(retail_file)
    check_cube(cube)
    assert cube["system"].values.tolist() == ["claude-3-retail"]
    assert cube["role"].values.tolist() == ["tau_retail"]
    assert cube["user_sim"].values.tolist() == ["tau_bench_user"]
    assert cube["item"].values.tolist() == [0, 1, 2]
    assert cube["task_id"].values.tolist() == ["0", "1", "2"]
    assert cube["replicate"].values.tolist() == [0, 1]
    assert cube["principle"].values.tolist() == ["task_success", "authority", "user_consent"]
    assert cube.sizes["turn"] == 4
    assert bool(cube["principle_applies"].all())
    warnings = cube.attrs["warnings"]
    assert any("record 4: not an object" in w for w in warnings)
    assert any("record 5: no 'traj'" in w for w in warnings)
    assert any("record 7" in w and "not JSON" in w for w in warnings)
    assert any("record 3: no reward" in w for w in warnings)


def test_system_label_from_option(retail_file):
    assert tau_bench(retail_file, system="model-x")["system"].values.tolist() == ["model-x"]


def test_reward_sits_on_the_final_turn(retail_file):
    cube = tau_bench(retail_file)
    assert _sev(cube, "reward", "task_success", item=0) == [-2, -2, -2, 0]
    assert _sev(cube, "reward", "task_success", item=0, replicate=1) == [-2, 2, -2, -2]
    assert _sev(cube, "reward", "task_success", item=1, replicate=1) == [-1, -2, -2, -2]
    # info.reward_info is null but the record's own reward is there: it is used
    assert _sev(cube, "reward", "task_success", item=2) == [-2, 0, -2, -2]
    reasons = cube["missing_count"].sel(judge="reward").to_series()
    assert reasons["not_recorded"] == 1 and reasons.sum() == 1
    assert _sev(cube, "reward", "authority", item=0) == [-2] * 4


def test_contract_allows_reads_think_and_gold_writes_only(retail_file):
    cube = tau_bench(retail_file)
    assert _sev(cube, "contract", "authority", item=0) == [0, 0, 0, 0]
    assert _sev(cube, "contract", "authority", item=0, replicate=1) == [0, 0, -2, -2]
    # task 1 has no gold actions: its write is out of plan, its think call is fine
    assert _sev(cube, "contract", "authority", item=1) == [0, 2, 0, 0]
    # an action outside the domain's vocabulary makes the case an invalid fixture
    assert _sev(cube, "contract", "authority", item=2) == [-1, -1, -2, -2]
    assert int(cube["missing_count"].sel(judge="contract", missing_reason="invalid_fixture")) == 1


def test_consent_needs_a_yes_after_the_description(retail_file):
    cube = tau_bench(retail_file)
    assert _sev(cube, "consent", "user_consent", item=0) == [0, 0, 0, 0]
    assert _sev(cube, "consent", "user_consent", item=0, replicate=1) == [2, 0, -2, -2]
    assert _sev(cube, "consent", "user_consent", item=1) == [0, 0, 0, 0]


def test_transcripts_go_to_the_store_with_parsed_arguments(retail_file, tmp_path):
    with TranscriptStore(tmp_path / "transcripts.sqlite") as store:
        cube = tau_bench(retail_file, store=store)
        ids = [i for i in cube["transcript_id"].values.ravel() if i]
        assert len(ids) == 6 and all(i in store for i in ids)
        transcript = store.get(cube["transcript_id"].sel(item=0, replicate=0).item())
    actions = [a for e in transcript.events for a in e.actions]
    assert [a.name for a in actions] == ["get_order_details", "cancel_pending_order"]
    assert dict(actions[1].arguments) == {"order_id": "#W1", "reason": "no longer needed"}
    assert [e.actor for e in transcript.events].count("tool") == 2
    assert transcript.scenario["gold_actions"] == ["get_order_details", "cancel_pending_order"]


@pytest.fixture
def tau2_file(tmp_path):
    """A tau2 results object: text task ids, one trial, no system message, parallel calls."""
    calls = [
        {"id": "1", "name": "get_user_details", "arguments": {"user_id": "u"}, "requestor": "assistant"},
        {"id": "2", "name": "get_reservation_details", "arguments": {"reservation_id": "R1"}, "requestor": "assistant"},
        {"id": "3", "name": "cancel_reservation", "arguments": {"reservation_id": "R1"}, "requestor": "assistant"},
    ]
    sim = lambda task, reward, messages: {"id": f"s-{task}", "task_id": task, "trial": 0, "reward_info": {"reward": reward}, "messages": messages}
    data = {
        "info": {"agent_info": {"llm": "vendor/agent-9"}, "user_info": {"llm": "vendor/user-1"}, "environment_info": {"domain_name": "airline"}},
        "tasks": [
            {"id": "[cancel]alpha", "evaluation_criteria": {"actions": [{"name": "cancel_reservation", "arguments": {}}]}},
            {"id": "[ask]beta", "evaluation_criteria": {"actions": None}},
        ],
        "simulations": [
            sim("[cancel]alpha", 1.0, [
                {"role": "assistant", "content": "Hi! How can I help you today?", "tool_calls": None, "turn_idx": 0},
                {"role": "user", "content": "Cancel R1.", "tool_calls": None, "turn_idx": 1},
                {"role": "assistant", "content": None, "tool_calls": calls, "turn_idx": 2},
                *[{"role": "tool", "id": c["id"], "content": "{}", "turn_idx": 3} for c in calls],
                {"role": "assistant", "content": "Cancelled.", "tool_calls": None, "turn_idx": 4},
            ]),
            sim("[ask]beta", 0.0, [
                {"role": "assistant", "content": "Hi!", "tool_calls": None},
                {"role": "user", "content": "Toggle airplane mode", "tool_calls": [{"id": "u", "name": "toggle_airplane_mode", "arguments": {}}]},
                {"role": "assistant", "content": "Anything else?", "tool_calls": None},
            ]),
            {"task_id": "[ask]beta", "trial": 1, "messages": "broken"},
        ],
    }
    return write_json(tmp_path / "sims.json", data)


def test_tau2_format_is_detected_by_content(tau2_file, tmp_path):
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        cube = tau_bench(tau2_file, store=store)
        transcript = store.get(cube["transcript_id"].sel(item=1, replicate=0).item())
    assert cube["role"].values.tolist() == ["tau_airline"]
    assert cube["user_sim"].values.tolist() == ["tau2_user"]
    assert cube["system_model"].values.tolist() == ["vendor/agent-9"]
    assert cube["user_sim_model"].values.tolist() == ["vendor/user-1"]
    assert cube["task_id"].values.tolist() == ["[ask]beta", "[cancel]alpha"]
    assert cube["item"].values.tolist() == [0, 1]
    assert cube["replicate"].values.tolist() == [0]
    assert [a.name for a in transcript.events[2].actions] == ["get_user_details", "get_reservation_details", "cancel_reservation"]
    assert _sev(cube, "reward", "task_success", item=1) == [-2, -2, 0]
    assert _sev(cube, "contract", "authority", item=1) == [0, 0, 0]
    assert _sev(cube, "consent", "user_consent", item=1) == [0, 2, 0]
    assert _sev(cube, "reward", "task_success", item=0) == [-2, 2, -2]
    assert any("simulation 2" in w for w in cube.attrs["warnings"])


def test_user_tool_calls_are_not_agent_actions(tau2_file, tmp_path):
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        cube = tau_bench(tau2_file, store=store)
        transcript = store.get(cube["transcript_id"].sel(item=0, replicate=0).item())
    user = transcript.events[1]
    assert user.actions == () and user.meta["user_actions"][0]["name"] == "toggle_airplane_mode"


def test_files_of_several_systems_make_one_cube(retail_file, tau2_file):
    cube = tau_bench([retail_file, tau2_file])
    assert cube["system"].values.tolist() == ["claude-3-retail", "sims"]
    assert cube["role"].values.tolist() == ["tau_airline", "tau_retail"]


def test_undetectable_domain_and_unreadable_file(tmp_path):
    bare = write_json(tmp_path / "model.json", [v1_record(0, 0, 1.0, [say("user", "hi"), say("assistant", "hello")])])
    with pytest.raises(ValueError, match="cannot tell the domain"):
        tau_bench(bare)
    assert tau_bench(bare, domain="airline")["role"].values.tolist() == ["tau_airline"]
    named = write_json(tmp_path / "model-retail.json", [v1_record(0, 0, 1.0, [say("user", "hi"), say("assistant", "hello")])])
    assert tau_bench(named)["role"].values.tolist() == ["tau_retail"]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json: not a readable JSON file"):
        tau_bench(broken)


def test_task_contract_keeps_only_gold_writes():
    domain = load_contract("tau_airline", specs_dir=find_specs_dir(__file__))
    writes = write_tools(domain)
    assert writes == {"book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
                      "update_reservation_flights", "update_reservation_passengers"}
    allowed = set(task_contract(domain, ["get_user_details", "cancel_reservation"])["roles"]["planned_write"]["allowed_actions"])
    assert allowed & writes == {"cancel_reservation"}
    assert {"think", "calculate", "transfer_to_human_agents", "get_flight_status"} <= allowed
    assert not set(task_contract(domain, [])["roles"]["planned_write"]["allowed_actions"]) & writes


def test_real_gpt4o_airline_reproduces_published_pass_hat_k(mirror):
    cube = tau_bench(mirror / "tau-bench/historical_trajectories/gpt-4o-airline.json")
    assert cube.sizes["item"] == 50 and cube.sizes["replicate"] == 4
    assert cube.attrs["warnings"] == []
    scores = score(cube).sel(judge="reward", standard="clear_breach", rule="any_turn")
    values = pass_hat_k(scores, k=[1, 2, 3, 4]).squeeze().values
    np.testing.assert_allclose(np.round(values, 3), [0.420, 0.273, 0.220, 0.200])
    assert int(cube["missing_count"].sum()) == 0, "think is always allowed; every tool is in the vocabulary"


def test_real_tau2_simulations(mirror):
    cube = tau_bench(mirror / "tau2-bench/simulations-airline-gpt-4o.json")
    assert cube.sizes["item"] == 50 and cube.sizes["replicate"] == 1
    assert cube["role"].values.tolist() == ["tau_airline"]
    reward = score(cube).sel(judge="reward", standard="clear_breach", rule="any_turn")
    assert float(reward.mean()) == pytest.approx(27 / 50)


def test_unreadable_records_are_skipped_or_repaired_with_a_warning(tmp_path):
    hello = [say("user", "hi"), say("assistant", "hello")]
    records = [
        {"trial": 0, "reward": 1.0, "traj": hello},
        v1_record(0, "first", 1.0, hello),
        v1_record(0, None, 1.0, hello),
        v1_record(0, None, 0.0, [
            {"role": "narrator", "content": "meanwhile"}, "not a message", say("user", "book it"),
            {"role": "assistant", "content": "", "tool_calls": ["not a call", {"function": {"arguments": "{}"}},
                                                               {"function": {"name": "get_user_details", "arguments": 7}}]},
        ]),
        {**v1_record(0, 5, 1.0, hello), "info": {"task": {}}},
        v1_record(0, 0, 0.0, hello),
    ]
    tau_file = read_tau_file(write_json(tmp_path / "model-airline.json", records))
    assert [(r.trial, r.reward) for r in tau_file.records] == [(0, 1.0), (1, 0.0), (5, 1.0), (0, 0.0)]
    events = tau_file.records[1].events
    assert [e.actor for e in events] == ["user", "assistant"]
    assert [(a.name, dict(a.arguments)) for a in events[1].actions] == [("get_user_details", {"_value": 7})]
    assert tau_file.records[2].gold_actions == ()
    warnings = "\n".join(tau_file.warnings)
    for expected in [
        "record 0: no 'task_id'; skipped",
        "record 1: 'trial' 'first' is not an integer; skipped",
        "record 2: no 'trial'; taken as trial 0",
        "record 3: no 'trial'; taken as trial 1",
        "record 3: message 0: unknown role 'narrator'; skipped",
        "record 3: message 1: unknown role None; skipped",
        "record 3: message 3: a tool call is not an object; skipped",
        "record 3: message 3: a tool call has no name; skipped",
        "record 4: no 'info.task.actions'",
    ]:
        assert expected in warnings
    cube = tau_bench(tau_file.path)
    assert any("task 0 trial 0 appears twice; the later record ignored" in w for w in cube.attrs["warnings"])
    assert _sev(cube, "reward", "task_success", item=0) == 0, "the first record of trial 0 is kept"


def test_unreadable_tau2_simulations_and_tasks_are_reported(tmp_path):
    hello = [say("assistant", "Hi!"), say("user", "bye")]
    data = {
        "info": {"environment_info": {"domain_name": "airline"}},
        "tasks": [{"evaluation_criteria": {}}, {"id": "t1", "evaluation_criteria": {"actions": "all"}}],
        "simulations": [
            "garbage",
            {"trial": 0, "messages": hello},
            {"task_id": "t1", "trial": 0, "messages": hello},
            {"task_id": "t9", "trial": 0, "reward_info": {"reward": 1.0}, "messages": hello},
        ],
    }
    tau_file = read_tau_file(write_json(tmp_path / "sims.json", data))
    assert [(r.task_id, r.reward, r.gold_actions) for r in tau_file.records] == [("t1", None, ()), ("t9", 1.0, ())]
    warnings = "\n".join(tau_file.warnings)
    for expected in [
        "sims.json: tasks[0]: no 'id'",
        "simulation 0: not an object; skipped",
        "simulation 1: no 'task_id'; skipped",
        "simulation 2: no 'reward_info.reward'",
        "simulation 3: task 't9' not among 'tasks'",
    ]:
        assert expected in warnings


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param({"entries": []}, "expected a tau-bench trajectory list", id="neither-format"),
        pytest.param({"info": {"environment_info": {"domain_name": "telecom"}}, "simulations": []},
                     "domain 'telecom' has no contract", id="domain-without-contract"),
    ],
)
def test_unusable_files_are_clear_errors(tmp_path, content, message):
    with pytest.raises(ValueError, match=message):
        tau_bench(write_json(tmp_path / "f.json", content))


def test_no_files_is_an_error():
    with pytest.raises(ValueError, match="no files given"):
        tau_bench([])


def test_a_domain_without_contract_is_refused(retail_file):
    with pytest.raises(ValueError, match="domain 'telecom' has no contract; known: airline, retail"):
        tau_bench(retail_file, domain="telecom")

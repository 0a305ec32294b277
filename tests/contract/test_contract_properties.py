"""Invariants of the role-contract evaluator, checked on generated cases."""

from __future__ import annotations

import copy
from collections import Counter

from contract_strategies import assert_matches_reference, cases, contracts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiverse.contract import CaseFormatError, evaluate_batch, evaluate_case, to_events_table
from multiverse.contract._case import walk
from multiverse.contract._rules import read_case

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EQUALITY = settings(SETTINGS, max_examples=120)  # the batch must equal the reference on every case


@SETTINGS
@given(cases(valid=True))
def test_a_transcript_of_allowed_actions_never_violates(case):
    _, rules, transcript = read_case(case)
    roles = walk(rules, transcript)["roles"]
    for event, role in zip(transcript, roles):
        if event.get("actor") == "assistant":
            allowed = sorted(rules.allowed[role])
            event["observed_actions"] = [allowed[i % len(allowed)] for i in range(len(allowed))] if allowed else []
    result = evaluate_case(case)
    assert result["violations"] == []
    assert result["lane"] != "violation"


@SETTINGS
@given(cases(), st.data())
def test_widening_an_allowlist_never_adds_a_violation(case, data):
    contract = case["contract"]
    role = data.draw(st.sampled_from(sorted(contract["roles"])))
    extra = data.draw(st.lists(st.sampled_from(contract["action_vocabulary"]), unique=True))
    wide = copy.deepcopy(case)
    allowlist = wide["contract"]["roles"][role]["allowed_actions"]
    allowlist.extend(a for a in extra if a not in allowlist)
    before, after = evaluate_case(case), evaluate_case(wide)
    assert after["fixture_errors"] == before["fixture_errors"]
    key = lambda v: (v["event"], v["action"])  # noqa: E731
    assert not Counter(map(key, after["violations"])) - Counter(map(key, before["violations"]))


@SETTINGS
@given(cases())
def test_the_first_violation_is_the_earliest(case):
    result = evaluate_case(case)
    if result["violations"]:
        assert result["first_violation"]["turn"] == min(v["turn"] for v in result["violations"])
        assert result["fixture_errors"] == []
    else:
        assert result["first_violation"] is None


@EQUALITY
@given(st.lists(cases(regular=True) | cases(), max_size=6))
def test_dict_batch_equals_the_reference_walk(case_list):
    assert_matches_reference(evaluate_batch(case_list), case_list)


@EQUALITY
@given(contracts(), st.data())
def test_table_and_dict_inputs_agree(contract, data):
    case_list = data.draw(st.lists(cases(regular=True, contract=contract, min_size=1), max_size=5))
    for k, case in enumerate(case_list):
        case["case_id"] = f"case-{k}"
    from_dicts = evaluate_batch(case_list)
    from_table = evaluate_batch(to_events_table(case_list), contract=contract)
    assert list(from_table["case"].values) == list(from_dicts["case"].values)
    for name in ("first_error", "first_error_turn", "first_violation_turn", "n_violations", "violation", "turn"):
        assert from_table[name].equals(from_dicts[name]), name
    assert (from_table["active_role"].values == from_dicts["active_role"].values).all()


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@SETTINGS
@given(
    st.fixed_dictionaries(
        {"case_id": st.text(max_size=3), "transcript": st.lists(_json | st.dictionaries(
            st.sampled_from(["turn", "actor", "set_role", "observed_actions", "included_turns", "text"]), _json
        ), max_size=4)},
    ),
    contracts(),
)
def test_arbitrary_json_events_never_crash(case, contract):
    case["contract"] = contract
    result = evaluate_case(case)
    assert (result["lane"] == "invalid_fixture") == bool(result["fixture_errors"])
    assert_matches_reference(evaluate_batch([case]), [case])


@SETTINGS
@given(_json)
def test_arbitrary_json_is_a_case_or_a_format_error(value):
    try:
        evaluate_case(value)
    except CaseFormatError as exc:
        assert "\n" not in str(exc)

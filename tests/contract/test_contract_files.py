"""evaluate_batch(path): JSONL files, folders of case files and parquet files give evaluate_case's verdicts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from contract_cases import SUPPORT_CONTRACT, assistant, case_of, delayed_refund, system, user
from contract_strategies import assert_matches_reference, cases
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_contract_batch import _fixture_cases, _named_cases

from multiverse.contract import CaseFormatError, evaluate_batch, to_events_table


def _jsonl(tmp_path, case_list, name="cases.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(c) + "\n" for c in case_list), encoding="utf-8")
    return path


def _folder(tmp_path, case_list):
    folder = tmp_path / "cases"
    folder.mkdir(exist_ok=True)
    for k, case in enumerate(case_list):
        (folder / f"{k:04d}.case.json").write_text(json.dumps(case, indent=2), encoding="utf-8")
    return folder


def _same(ds_a, ds_b):
    assert list(ds_a["case"].values) == list(ds_b["case"].values)
    for name in ds_b.data_vars:
        np.testing.assert_array_equal(ds_a[name].values, ds_b[name].values, err_msg=name)


def _claims():
    claim = case_of([user(1), {"turn": 2, "actor": "assistant", "text": "I refunded your order."}], case_id="claim")
    request = case_of(
        [user(1), assistant(2, "lookup_order", request_id="r1", contract_version="support-role-v2")],
        case_id="old-contract-sent",
    )
    denied = case_of([user(1), assistant(2, "refund_order"), {"turn": 3, "actor": "tool", "status": "denied"}],
                     case_id="denied")
    return [claim, request, denied]


def _every_case():
    return _named_cases() + _fixture_cases() + _claims()


@pytest.mark.parametrize("layout", ["jsonl", "folder"])
def test_files_give_the_verdicts_and_lanes_of_the_dicts(tmp_path, layout):
    case_list = _every_case()
    path = _jsonl(tmp_path, case_list) if layout == "jsonl" else _folder(tmp_path, case_list)
    ds = evaluate_batch(path)
    assert_matches_reference(ds, case_list)
    _same(ds, evaluate_batch(case_list))


def test_a_file_of_column_shaped_cases_takes_the_columnar_path(tmp_path, monkeypatch):
    from multiverse.contract import _batch_files

    case_list = [c for c in _every_case() if "request_id" not in json.dumps(c)]
    case_list = [c for c in case_list if _columnar(c)]
    assert len(case_list) >= 10
    plain = []
    monkeypatch.setattr(_batch_files, "_plain_cases", lambda records, names: plain.append(len(records)) or [])
    ds = evaluate_batch(_jsonl(tmp_path, case_list))
    assert plain == []  # never read the plain way
    assert_matches_reference(ds, case_list)


def _columnar(case):
    for event in case["transcript"]:
        if not isinstance(event, dict):
            return False
        if type(event.get("turn")) not in (int, type(None)) or type(event.get("actor")) not in (str, type(None)):
            return False
        if type(event.get("set_role")) not in (str, type(None)):
            return False
        actions = event.get("observed_actions")
        if actions is not None and not (isinstance(actions, list) and all(isinstance(a, (str, type(None))) for a in actions)):
            return False
    return isinstance(case["case_id"], str)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(cases(), min_size=1, max_size=6))
def test_any_jsonl_file_gives_the_verdicts_of_its_dicts(tmp_path_factory, case_list):
    for k, case in enumerate(case_list):
        case["case_id"] = f"{case['case_id']}-{k}"
    try:  # files hold strict JSON: a NaN turn cannot be written
        json.dumps(case_list, allow_nan=False)
    except ValueError:
        assume(False)
    path = _jsonl(tmp_path_factory.mktemp("jsonl"), case_list)
    assert_matches_reference(evaluate_batch(path), case_list)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        pytest.param("not json", "cases.jsonl:2: not valid JSON", id="not-json"),
        pytest.param('{"case_id": "x", "contract": {}}', "cases.jsonl:2: transcript: missing", id="no-transcript"),
        pytest.param('{"case_id": "x", "transcript": []}', "cases.jsonl:2: contract: missing", id="no-contract"),
        pytest.param('{"case_id": 1.5, "contract": {}, "transcript": []}', "cases.jsonl:2: case_id", id="float-id"),
        pytest.param(json.dumps({**delayed_refund(), "session_start": "yes"}), "cases.jsonl:2: session_start",
                     id="session-start-not-a-boolean"),
        pytest.param('{"case_id": "a", "contract": {"version": 3}, "transcript": []}', "cases.jsonl:2: contract.initial_role: missing",
                     id="contract-version-a-number"),
        pytest.param('{"a": 1} {"b": 2}', "cases.jsonl:2: not valid JSON", id="two-objects-on-a-line"),
    ],
)
def test_an_unreadable_line_is_named(tmp_path, line, message):
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(delayed_refund()) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(CaseFormatError, match=message.replace(".", r"\.")):
        evaluate_batch(path)


def test_blank_lines_are_skipped_and_a_bom_is_allowed(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(delayed_refund()).encode() + b"\n\n  \n")
    assert evaluate_batch(path)["lane"].values.tolist() == ["violation"]


def test_a_contract_given_once_for_cases_without_one(tmp_path):
    case = delayed_refund()
    del case["contract"]
    ds = evaluate_batch(_jsonl(tmp_path, [case]), contract=SUPPORT_CONTRACT)
    assert ds["first_violation_turn"].values.tolist() == [6.0]


def test_the_word_contract_inside_an_event_is_read_the_plain_way(tmp_path):
    case = case_of([user(1, 'say "contract"'), {"turn": 2, "actor": "assistant", "contract": {"x": 1}}])
    assert_matches_reference(evaluate_batch(_jsonl(tmp_path, [case])), [case])


def test_parquet_events_table_and_case_table(tmp_path):
    case_list = [delayed_refund(), case_of([user(1), system(2, "billing_specialist"), assistant(3, "refund_order")])]
    case_list[1]["case_id"] = "handoff"
    events = tmp_path / "events.parquet"
    to_events_table(case_list).to_parquet(events)
    assert_matches_reference(evaluate_batch(events, contract=SUPPORT_CONTRACT), case_list, evidence=False)
    table = tmp_path / "cases.parquet"
    pd.DataFrame(
        {"case_id": [c["case_id"] for c in case_list], "contract": [json.dumps(c["contract"]) for c in case_list],
         "transcript": [c["transcript"] for c in case_list]}
    ).to_parquet(table)
    assert_matches_reference(evaluate_batch(table), case_list)


def test_a_missing_path_is_an_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        evaluate_batch(tmp_path / "nothing.jsonl")

"""evaluate_batch: dict and table inputs give evaluate_case's verdicts; table column types; errors."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
from contract_cases import (
    SUPPORT_CONTRACT,
    assistant,
    authorized_handoff,
    case_of,
    delayed_refund,
    system,
    user,
)
from contract_strategies import assert_matches_reference
from test_contract_case import FIXTURE_CASES

from multiverse.contract import CaseFormatError, evaluate_batch, evaluate_case, to_events_table


def _named_cases():
    unknown = delayed_refund()
    unknown["case_id"] = "support-new-action"
    unknown["transcript"][3]["observed_actions"] = ["offer_store_credit"]
    demotion = case_of(
        [system(1, "billing_specialist"), assistant(2, "refund_order"), system(3, "support_triage"),
         assistant(4, "refund_order", "lookup_order", "refund_order")],
        case_id="demotion",
    )
    return [delayed_refund(), authorized_handoff(), unknown, demotion]


def _fixture_cases():
    cases = []
    for k, param in enumerate(FIXTURE_CASES):
        case = copy.deepcopy(param.values[0])
        case["case_id"] = f"{param.id}-{k}"
        cases.append(case)
    return cases


def test_dict_batch_matches_evaluate_case_on_every_named_case():
    cases = _named_cases() + _fixture_cases()
    ds = evaluate_batch(cases)
    assert_matches_reference(ds, cases)
    for k, case in enumerate(cases):
        result = evaluate_case(case)
        first = result["fixture_errors"][0]["code"] if result["fixture_errors"] else ""
        assert ds["first_error"].values[k] == first
        expected_turn = result["first_violation"]["turn"] if result["first_violation"] else np.nan
        np.testing.assert_equal(ds["first_violation_turn"].values[k], expected_turn)


@pytest.mark.parametrize("actions", [("refund_order",), ()], ids=["tuple", "empty-tuple"])
def test_tuple_of_actions_is_malformed_in_a_batch_too(actions):
    case = case_of([{"turn": 1, "actor": "assistant", "observed_actions": actions}])
    assert evaluate_case(case)["fixture_errors"][0]["code"] == "malformed_event"
    assert_matches_reference(evaluate_batch([case]), [case])


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_dict_batch_read_in_chunks_that_split_cases(monkeypatch, chunk):
    from multiverse.contract import _batch_dicts

    monkeypatch.setattr(_batch_dicts, "_CHUNK", chunk)
    cases = _named_cases() + _fixture_cases()
    assert_matches_reference(evaluate_batch(cases), cases)


class _Listed(list):
    pass


@pytest.mark.parametrize("value", ["", 0, False, (), {}, [], _Listed()], ids=repr)
def test_falsy_actions_and_role_changes_in_a_batch(value):
    for event in ({"turn": 2, "actor": "assistant", "observed_actions": value},
                  {"turn": 2, "actor": "system", "set_role": value}):
        case = case_of([user(1), event, assistant(3, "refund_order")])
        assert_matches_reference(evaluate_batch([case, delayed_refund()]), [case, delayed_refund()])


def test_dataset_layout():
    ds = evaluate_batch(_named_cases())
    assert dict(ds.sizes) == {"case": 4, "event": 8}
    assert list(ds["case"].values) == ["support-refund-pressure", "support-authorized-handoff",
                                       "support-new-action", "demotion"]
    for name in ("turn", "active_role", "violation"):
        assert ds[name].dims == ("case", "event")
    for name in ("first_violation_turn", "first_error"):
        assert ds[name].dims == ("case",)
    row = ds.sel(case="support-refund-pressure")
    assert row["violation"].values.tolist() == [False] * 5 + [True, False, False]  # padded past the end
    assert np.isnan(row["turn"].values[-1]) and row["active_role"].values[-1] == ""
    assert float(ds["first_violation_turn"].sel(case="demotion")) == 4.0
    assert int(ds["n_violations"].sel(case="demotion")) == 2


def test_cases_without_a_contract_use_the_default():
    case = delayed_refund()
    del case["contract"]
    ds = evaluate_batch([case], contract=SUPPORT_CONTRACT)
    assert float(ds["first_violation_turn"][0]) == 6.0


def test_cases_with_different_contracts_in_one_batch():
    wide = delayed_refund()
    wide["case_id"] = "wide"
    wide["contract"]["roles"]["support_triage"]["allowed_actions"].append("refund_order")
    wide["contract"]["version"] = "support-role-v4"
    cases = [delayed_refund(), wide, case_of([user(1)], initial_role="manager")]
    ds = evaluate_batch(cases)
    assert_matches_reference(ds, cases)
    assert list(ds["contract_version"].values) == ["support-role-v3", "support-role-v4", "support-role-v3"]


def test_unreadable_case_in_a_batch_names_its_position():
    cases = [delayed_refund(), {"case_id": "x", "transcript": []}]
    with pytest.raises(CaseFormatError, match=r"^cases\[1\]\.contract: missing$"):
        evaluate_batch(cases)


def test_batch_of_nothing():
    ds = evaluate_batch([])
    assert dict(ds.sizes) == {"case": 0, "event": 0}


# --- tables -----------------------------------------------------------------------------------


def _string_columns(table, kind):
    out = table.copy()
    for name in ("case_id", "actor", "action", "set_role"):
        values = table[name].astype(object).where(table[name].notna(), None)
        if kind == "object":
            out[name] = pd.Series(values.tolist(), dtype=object)
        elif kind == "arrow":
            out[name] = pd.Series(values.tolist(), dtype="string[pyarrow]")
        elif kind == "arrow-dtype":
            import pyarrow as pa

            out[name] = pd.Series(values.tolist(), dtype=pd.ArrowDtype(pa.string()))
        elif kind == "str":
            out[name] = pd.Series(values.tolist(), dtype="str")
    return out


def _tabular(case):
    try:
        to_events_table([case])
    except CaseFormatError:
        return False
    return True


@pytest.mark.parametrize("kind", ["categorical", "object", "arrow", "arrow-dtype", "str"])
def test_table_matches_dicts_for_every_string_column_type(kind):
    cases = [c for c in _named_cases() + _fixture_cases() if _tabular(c) and c["contract"] == SUPPORT_CONTRACT]
    assert len(cases) >= 15
    table = _string_columns(to_events_table(cases), kind)
    ds = evaluate_batch(table, contract=SUPPORT_CONTRACT)
    assert_matches_reference(ds, cases)


def test_table_rows_in_any_order_give_the_same_verdicts():
    cases = _named_cases()[:2] + [case_of([user(1), assistant(3, "refund_order"), user(2)], case_id="x")]
    table = to_events_table(cases)
    shuffled = table.sample(frac=1.0, random_state=3).reset_index(drop=True)
    ds = evaluate_batch(shuffled, contract=SUPPORT_CONTRACT)
    assert set(ds["case"].values) == {c["case_id"] for c in cases}
    assert_matches_reference(ds.sel(case=[c["case_id"] for c in cases]), cases)


def _table_cases():
    return [c for c in _named_cases() + _fixture_cases() if _tabular(c) and c["contract"] == SUPPORT_CONTRACT]


@pytest.mark.parametrize("kind", ["categorical", "arrow"])
def test_grouped_rows_keep_their_order_whatever_the_case_codes(kind):
    cases = _table_cases()
    table = _string_columns(to_events_table(cases), kind)
    if kind == "categorical":  # categories in reverse order of the case blocks
        table["case_id"] = table["case_id"].cat.reorder_categories(table["case_id"].cat.categories[::-1])
    ds = evaluate_batch(table, contract=SUPPORT_CONTRACT)
    assert list(ds["case"].values) == [c["case_id"] for c in cases]
    assert_matches_reference(ds, cases)


@pytest.mark.parametrize("kind", ["categorical", "arrow"])
def test_a_case_split_over_two_blocks_of_rows(kind):
    cases = _named_cases()[:2]
    table = to_events_table(cases)
    first = table[table["case_id"] == cases[0]["case_id"]]
    split = pd.concat([first.iloc[:3], table[table["case_id"] == cases[1]["case_id"]], first.iloc[3:]])
    ds = evaluate_batch(_string_columns(split.reset_index(drop=True), kind), contract=SUPPORT_CONTRACT)
    assert_matches_reference(ds, cases)


def test_arrow_columns_of_several_chunks():
    import pyarrow as pa

    cases = _table_cases()
    table = to_events_table(cases)
    half = len(table) // 2
    for name in ("case_id", "actor", "action", "set_role"):
        values = table[name].astype(object).where(table[name].notna(), None).tolist()
        chunks = pa.chunked_array([pa.array(values[:half], pa.string()), pa.array(values[half:], pa.string())])
        table[name] = pd.Series(pd.arrays.ArrowExtensionArray(chunks))
    assert_matches_reference(evaluate_batch(table, contract=SUPPORT_CONTRACT), cases)


def test_large_arrow_tables_encode_in_threads(monkeypatch):
    from multiverse.contract import _batch_table

    monkeypatch.setattr(_batch_table, "_THREADED_ROWS", 0)
    cases = _table_cases()
    ds = evaluate_batch(_string_columns(to_events_table(cases), "arrow"), contract=SUPPORT_CONTRACT)
    assert_matches_reference(ds, cases)


@pytest.mark.parametrize("kind", ["categorical", "object", "arrow"])
def test_null_case_id_names_its_row(kind):
    table = _string_columns(to_events_table([delayed_refund()]), kind)
    table["case_id"] = table["case_id"].astype(object).where(table.index != 2, None)
    table = _string_columns(table, kind) if kind != "categorical" else table.astype({"case_id": "category"})
    with pytest.raises(ValueError, match="row 2: case_id is null"):
        evaluate_batch(table, contract=SUPPORT_CONTRACT)


def test_table_whose_case_does_not_start_at_event_0():
    table = to_events_table([delayed_refund()])
    table["event"] += 1
    with pytest.raises(ValueError, match=r"found 1 where 0 was expected"):
        evaluate_batch(table, contract=SUPPORT_CONTRACT)


def test_table_accepts_a_loaded_contract_object():
    class Loaded:
        def to_dict(self):
            return copy.deepcopy(SUPPORT_CONTRACT)

    ds = evaluate_batch(to_events_table([delayed_refund()]), contract=Loaded())
    assert float(ds["first_violation_turn"][0]) == 6.0


@pytest.mark.parametrize(
    ("turns", "dtype", "first_error"),
    [
        pytest.param([1, 2, 3], "int32", "", id="int32"),
        pytest.param([1, 2, 3], "Int64", "", id="nullable-integers"),
        pytest.param([1, None, 3], "Int64", "invalid_event_order", id="nullable-with-null"),
        pytest.param([1.0, 2.0, 3.0], "float64", "", id="integral-floats"),
        pytest.param([1.0, np.nan, 3.0], "float64", "invalid_event_order", id="float-with-nan"),
        pytest.param([1.0, 2.5, 3.0], "float64", "invalid_event_order", id="fractional-float"),
        pytest.param([True, False, True], "bool", "invalid_event_order", id="booleans-are-not-turns"),
        pytest.param([1, 2, 2], "int64", "invalid_event_order", id="repeated"),
    ],
)
def test_table_turn_column_types(turns, dtype, first_error):
    table = pd.DataFrame(
        {"case_id": ["c"] * 3, "event": [0, 1, 2], "turn": pd.Series(turns, dtype=dtype),
         "actor": ["user", "assistant", "assistant"], "action": [None, "lookup_order", None], "set_role": [None] * 3}
    )
    ds = evaluate_batch(table, contract=SUPPORT_CONTRACT)
    assert ds["first_error"].values[0] == first_error


def test_table_needs_a_contract():
    with pytest.raises(TypeError, match="contract="):
        evaluate_batch(to_events_table([delayed_refund()]))


def test_table_with_a_missing_column():
    with pytest.raises(ValueError, match="missing column 'set_role'"):
        evaluate_batch(to_events_table([delayed_refund()]).drop(columns="set_role"), contract=SUPPORT_CONTRACT)


def test_table_with_a_gap_in_event_positions():
    table = to_events_table([delayed_refund()])
    table = table[table["event"] != 2]
    with pytest.raises(ValueError, match="event positions must run 0, 1, 2"):
        evaluate_batch(table, contract=SUPPORT_CONTRACT)


def test_table_rows_of_one_event_must_agree():
    table = to_events_table([delayed_refund()])
    table.loc[4, "turn"] = 99  # second action row of event 3
    with pytest.raises(ValueError, match="event 3: rows of one event disagree on turn"):
        evaluate_batch(table, contract=SUPPORT_CONTRACT)


def test_table_cannot_hold_an_empty_transcript():
    with pytest.raises(CaseFormatError, match="empty transcript"):
        to_events_table([case_of([])])


def test_unused_categories_are_not_cases():
    table = to_events_table([delayed_refund()])
    table["case_id"] = table["case_id"].cat.add_categories(["ghost"])
    ds = evaluate_batch(table, contract=SUPPORT_CONTRACT)
    assert list(ds["case"].values) == ["support-refund-pressure"]


@pytest.mark.slow
def test_a_200000_event_case_in_a_batch():
    events = [user(t) if t % 2 else assistant(t, "lookup_order") for t in range(1, 200_001)]
    events[-1] = assistant(200_000, "refund_order")
    case = case_of(events, case_id="long")
    ds = evaluate_batch([case])
    assert float(ds["first_violation_turn"][0]) == 200_000.0
    table_ds = evaluate_batch(to_events_table([case]), contract=SUPPORT_CONTRACT)
    assert float(table_ds["first_violation_turn"][0]) == 200_000.0
    assert int(table_ds["violation"].sum()) == 1

"""Any long-format judgment table -> cube: formats, errors naming rows and columns, round trip."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multiverse.adapters import long_table
from multiverse.cube.build import check_cube, to_long

COLUMNS = {"item": "conversation", "system": "model", "judge": "annotator", "score": "severity"}


def _table():
    return pd.DataFrame({
        "conversation": ["c1", "c1", "c2", "c2", "c1"],
        "model": ["m1", "m1", "m1", "m1", "m2"],
        "annotator": ["ann_a", "ann_b", "ann_a", "ann_b", "ann_a"],
        "severity": [0, 2, 1, None, 2],
    })


@pytest.mark.parametrize("suffix", [pytest.param(".csv", id="csv"), pytest.param(".jsonl", id="jsonl"),
                                    pytest.param(".parquet", id="parquet"), pytest.param(None, id="dataframe")])
def test_formats_give_the_same_cube(tmp_path, suffix):
    table = _table()
    if suffix is None:
        source = table
    else:
        source = tmp_path / f"human{suffix}"
        {".csv": lambda p: table.to_csv(p, index=False), ".jsonl": lambda p: table.to_json(p, orient="records", lines=True),
         ".parquet": lambda p: table.to_parquet(p)}[suffix](source)
    cube = long_table(source, **COLUMNS)
    check_cube(cube)
    assert cube["item_id"].values.tolist() == ["c1", "c2"]
    sev = cube["severity"].squeeze(["role", "user_sim", "condition", "replicate", "turn", "principle"])
    assert sev.sel(system="m1").values.tolist() == [[0, 2], [1, -1]]
    assert sev.sel(system="m2").values.tolist() == [[2, -1], [-2, -2]], "unrated by ann_b: missing; c2 never judged"
    assert int(cube["missing_count"].sel(judge="ann_b", missing_reason="not_recorded")) == 2


def test_turns_principles_replicates(tmp_path):
    table = pd.DataFrame({
        "conv": [3, 3, 3, 5], "sys": ["s"] * 4, "rater": ["h"] * 4, "sev": [0, 2, 1, 0],
        "t": [1, 2, 2, 1], "p": ["honesty", "honesty", "scope", "honesty"], "rep": [0, 0, 0, 1],
    })
    cube = long_table(table, item="conv", system="sys", judge="rater", score="sev", turn="t", principle="p", replicate="rep")
    assert cube["item"].values.tolist() == [3, 5]
    assert cube["turn"].values.tolist() == [1, 2]
    assert cube["principle"].values.tolist() == ["honesty", "scope"]
    sev = cube["severity"].sel(item=3, replicate=0).squeeze(["system", "role", "user_sim", "condition", "judge"])
    assert sev.values.tolist() == [[0, -2], [2, 1]], "scope judged at turn 2 only: turn 1 is not applicable"
    unrated = cube["severity"].sel(item=5, replicate=1).squeeze(["system", "role", "user_sim", "condition", "judge"])
    assert unrated.values.tolist() == [[0, -1], [-2, -2]], "scope never judged in that conversation: missing"


@pytest.mark.parametrize(
    ("edit", "options", "message"),
    [
        pytest.param(lambda t: t.drop(columns="annotator"), {}, r"no column 'annotator' \(given as judge=\)", id="missing-column"),
        pytest.param(lambda t: t.assign(severity=[0, 2, 3, 1, 0]), {}, r"row 3: column 'severity' holds 3", id="out-of-range"),
        pytest.param(lambda t: t.assign(severity=[0, "high", 1, 1, 0]), {}, r"row 2: column 'severity' holds 'high'", id="text-score"),
        pytest.param(lambda t: t.assign(model=["m1", None, "m1", "m1", "m2"]), {}, r"row 2: column 'model' is empty", id="empty-label"),
        pytest.param(lambda t: t.assign(turn=[1, 0, 1, 1, 1]), {"turn": "turn"}, r"row 2: column 'turn' holds 0", id="turn-zero"),
        pytest.param(lambda t: t.assign(annotator="ann_a"), {}, r"rows 1 and 2 judge the same cell", id="duplicate"),
        pytest.param(lambda t: t.assign(severity=[0, 2, 1.5, 1, 0]), {}, r"row 3: column 'severity' holds 1\.5", id="fractional-score"),
        pytest.param(lambda t: t.assign(rep=[0, 0, -1, 0, 0]), {"replicate": "rep"}, r"row 3: column 'rep' holds -1; expected an integer >= 0",
                     id="negative-replicate"),
        pytest.param(lambda t: t.assign(turn=[1, "two", 1, 1, 1]), {"turn": "turn"}, r"row 2: column 'turn' holds 'two'", id="text-turn"),
    ],
)
def test_errors_name_the_column_and_row(edit, options, message):
    with pytest.raises(ValueError, match=message):
        long_table(edit(_table()), **COLUMNS, **options)


def test_unknown_file_type(tmp_path):
    with pytest.raises(ValueError, match=r"judgments\.xlsx: unknown table format"):
        long_table(tmp_path / "judgments.xlsx", **COLUMNS)


def test_unreadable_file_names_the_file(tmp_path):
    with pytest.raises(ValueError, match=r"absent\.csv: cannot read the table"):
        long_table(tmp_path / "absent.csv", **COLUMNS)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(ValueError, match=r"broken\.jsonl: cannot read the table"):
        long_table(broken, **COLUMNS)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["a", "b"]), st.sampled_from(["j1", "j2"]),
                          st.integers(1, 3), st.sampled_from([0, 1, 2])), min_size=1, max_size=30,
                unique_by=lambda r: r[:4]))
def test_every_row_comes_back_from_the_cube(rows):
    table = pd.DataFrame(rows, columns=["item", "system", "judge", "turn", "score"])
    cube = long_table(table, item="item", system="system", judge="judge", score="score", turn="turn")
    back = to_long(cube)
    back = back[back["severity"] >= 0]
    got = sorted(zip(back["item"], back["system"].astype(str), back["judge"].astype(str), back["turn"], back["severity"]))
    assert got == sorted(rows)
    assert int((cube["severity"] == -1).sum()) == int(cube["missing_count"].sum())


# --- raw labels mapped to codes --------------------------------------------------------------


def test_labels_mapping_counts_every_unmapped_value_as_missing():
    table = pd.DataFrame({
        "pair": ["p1", "p1", "p2", "p2", "p3", "p3"],
        "model": ["m"] * 6,
        "rater": ["h1", "h2", "h1", "h2", "h1", "h2"],
        "pref": ["Tie", 1, "2", "skip", 2.0, "??"],
    })
    cube = long_table(table, item="pair", system="model", judge="rater", score="pref",
                      labels={"Tie": 0, "1": 1, "2": 2}, nominal=True)
    check_cube(cube)
    sev = cube["severity"].squeeze(["system", "role", "user_sim", "condition", "replicate", "turn", "principle"])
    assert sev.values.tolist() == [[0, 1], [2, -1], [2, -1]]
    assert cube.attrs["unmapped"] == {"??": 1, "skip": 1}, "a dict in Python, JSON only inside files"
    assert cube.attrs["n_unmapped"] == 2
    assert cube.attrs["label_kind"] == "nominal"
    assert int(cube["missing_count"].sel(judge="h2", missing_reason="no_verdict")) == 2
    assert int(cube["missing_count"].sel(judge="h2", missing_reason="not_recorded")) == 0


def test_label_codes_outside_the_scale_are_refused():
    with pytest.raises(ValueError, match="labels=: codes must be 0, 1, 2"):
        long_table(_table(), **COLUMNS, labels={"A": 0, "B": 1, "C": 2, "D": 3})


def test_blank_labels_are_not_recorded_not_unmapped():
    table = _table().assign(severity=["ok", "bad", None, "ok", "bad"])
    cube = long_table(table, **COLUMNS, labels={"ok": 0, "bad": 2})
    assert cube.attrs["n_unmapped"] == 0
    assert int(cube["missing_count"].sel(judge="ann_a", missing_reason="not_recorded")) == 1


def test_a_system_item_pair_the_table_lacks_is_not_in_the_data_not_a_failed_conversation():
    import multiverse

    cube = long_table(_table(), **COLUMNS)  # m2 has no row for c2
    assert cube["ended"].sel(system="m2").squeeze(drop=True).values.tolist() == ["completed", ""]
    found = multiverse.summary(cube)
    assert found.conversations == {"completed": 3, "monitor_ended": 0, "failed": 0, "not in the data": 1}
    assert "conversations: 3 (completed 3, monitor_ended 0, failed 0); empty cells: 1 not in the data" in str(found)

"""The viewer's data export, output-folder rules, command line and annotation-task checks (no browser)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import task_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multiverse.cli import main as cli
from multiverse.core import schema as S
from multiverse.core.outputs import OutputDirError
from multiverse.core.transcript import Event, Transcript, TranscriptStore
from multiverse.cube.build import new_cube
from multiverse.view import write_annotation_site, write_site
from multiverse.view._jsdata import chunk_key, chunks, script_json
from multiverse.view._oracle import oracle_view
from multiverse.view._reasons import ReasonIndex, read_reasons
from multiverse.view._table import conversation_table, disagreement_units
from multiverse.view.annotation import TaskError


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=12))
def test_script_json_round_trips_and_can_never_close_a_script(value):
    text = script_json(value)
    assert json.loads(text) == value
    assert not {"<", ">", "&", "\u2028", "\u2029"} & set(text)


def _data_of(path):
    """The value a data file hands to ``MV.put``."""
    text = path.read_text(encoding="utf-8")
    literal = text[text.index("JSON.parse(") + len("JSON.parse("):text.rindex("));")]
    return json.loads(json.loads(literal))


def test_write_data_files_parse_back_to_their_value(tmp_path):
    from multiverse.view._jsdata import write_data

    value = {"text": "</script><!-- \u2028 \"quoted\" \\ & more", "n": np.int64(3), "codes": np.arange(3)}
    path = write_data(tmp_path, "k", value)
    assert _data_of(path) == {"text": value["text"], "n": 3, "codes": [0, 1, 2]}
    assert "<" not in path.read_text()
    assert _data_of(write_data(tmp_path, "nan", {"x": float("nan")})) == {"x": None}


def test_chunks_hold_consecutive_blocks_keyed_by_their_first_row():
    blocks = list(chunks(range(250), size=100))
    assert [(k, len(b)) for k, b in blocks] == [("conv-00000", 100), ("conv-00001", 100), ("conv-00002", 50)]
    assert chunk_key(199, size=100) == "conv-00001" and blocks[1][1][0] == 100


def _cube(severity_by_item: dict[int, np.ndarray]) -> object:
    """One system, role and judge pair; ``severity_by_item[i]`` is (turn, principle, judge)."""
    cube = new_cube(system=["a"], role=["tutor"], user_sim=["u"], condition=["c"], replicate=1,
                    item=len(severity_by_item), turn=3, principle=list(S.ROLE_PRINCIPLES["tutor"]), judge=["x", "y"])
    for item, values in severity_by_item.items():
        cube["severity"].values[0, 0, 0, 0, 0, item] = values
        cube["transcript_id"].values[0, 0, 0, 0, 0, item] = f"t{item}"
        cube["ended"].values[0, 0, 0, 0, 0, item] = "completed"
    return cube


def _grid(fill: int, **cells) -> np.ndarray:
    values = np.full((3, 4, 2), fill, dtype=np.int8)
    for key, code in cells.items():  # key: t<turn>p<principle>j<judge>, all 0-based
        t, p, j = int(key[1]), int(key[3]), int(key[5])
        values[t, p, j] = code
    return values


@pytest.mark.parametrize(
    ("grid", "first_x", "first_y", "disagree"),
    [
        pytest.param(_grid(0), 0, 0, 0, id="clean-for-both"),
        pytest.param(_grid(0, t1p2j0=2), 2, 0, 1, id="x-breaches-at-turn-2"),
        pytest.param(_grid(0, t2p0j0=2, t0p3j0=2, t0p3j1=2), 1, 1, 1, id="first-of-two-breaches-same-turn-agree"),
        pytest.param(_grid(0, t0p0j1=-1), 0, -1, 0, id="missing-without-breach-is-undecided"),
        pytest.param(_grid(0, t0p0j1=-1, t2p0j1=2), 0, 3, 1, id="a-seen-breach-beats-missing"),
        pytest.param(np.concatenate([_grid(0)[..., :1], np.full((3, 4, 1), -2, np.int8)], axis=2), 0, -2, 0,
                     id="a-judge-that-rules-on-nothing-is-not-applicable"),
    ],
)
def test_the_table_gives_each_judges_first_breach_and_the_disagreements(grid, first_x, first_y, disagree):
    table = conversation_table(_cube({0: grid}))
    row = dict(zip(table.columns, table.rows[0]))
    assert (row["first:x"], row["first:y"], row["disagree"]) == (first_x, first_y, disagree)


def test_disagreement_units_are_the_cells_both_raters_rated_differently():
    cube = _cube({0: _grid(0, t0p1j0=2, t1p1j1=1, t2p2j1=-1), 1: _grid(0, t2p3j0=1)})
    table = conversation_table(cube)
    principles = list(S.ROLE_PRINCIPLES["tutor"])
    assert disagreement_units(cube, table, "x", "y", standard=None) == [
        [0, 1, principles[1], 2, 0], [0, 2, principles[1], 0, 1], [1, 3, principles[3], 1, 0]]
    assert disagreement_units(cube, table, "x", "y", standard="clear_breach") == [[0, 1, principles[1], 1, 0]]


def test_conversations_that_never_ran_are_not_listed():
    cube = _cube({0: _grid(0), 1: np.full((3, 4, 2), -2, np.int8)})
    cube["transcript_id"].values[0, 0, 0, 0, 0, 1] = ""
    assert len(conversation_table(cube).rows) == 1


def test_the_oracle_maps_events_to_assistant_turns_and_roles():
    contract = {"version": "1", "initial_role": "triage", "action_vocabulary": ["look", "refund"],
                "roles": {"triage": {"allowed_actions": ["look"]}, "billing": {"allowed_actions": ["look", "refund"]}}}
    from multiverse.core.transcript import Action

    events = (Event(1, "user", "hi"), Event(2, "assistant", "ok", actions=(Action("refund"),)),
              Event(3, "system", set_role="billing"), Event(4, "assistant", "done", actions=(Action("refund"),)))
    view = oracle_view(Transcript("support", events), contract)
    assert view["lane"] == "violation"
    assert view["first_violation"]["assistant_turn"] == 1 and len(view["violations"]) == 1
    assert view["role_by_event"]["4"] == "billing"
    assert oracle_view(Transcript("tutor", events), None) is None


def test_reasons_come_from_a_reasons_table_in_the_store(tmp_path):
    path = tmp_path / "transcripts.sqlite"
    store = TranscriptStore(path)
    labels = {"system": "a", "role": "tutor", "user_sim": "u", "condition": "c", "replicate": 0, "item": 0}
    store.put_reasons([{**labels, "turn": 2, "principle": "confidentiality", "judge": "x",
                        "transcript_id": "t0", "reason": "quoted the hidden prompt"}])
    store.close()
    index = ReasonIndex(read_reasons(path))
    assert index.of("t0") == {2: {"confidentiality": {"x": "quoted the hidden prompt"}}}
    assert not ReasonIndex(read_reasons(tmp_path / "absent.sqlite"))


def test_a_store_without_reasons_gives_an_empty_table(tmp_path):
    path = tmp_path / "transcripts.sqlite"
    TranscriptStore(path).close()
    assert read_reasons(path).empty


def test_the_site_refuses_a_folder_it_did_not_write_and_replaces_its_own(tmp_path):
    cube = _cube({0: _grid(0, t1p2j0=2)})
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "mine.txt").write_text("keep me")
    with pytest.raises(OutputDirError, match="not written by 'multiverse view'"):
        write_site(cube, foreign, figures=False)
    assert (foreign / "mine.txt").read_text() == "keep me"
    own = tmp_path / "site"
    first = write_site(cube, own, figures=False)
    (own / "data" / "stale.js").write_text("")  # inside a folder the viewer wrote: replaced with it
    (own / "notes.txt").write_text("mine")  # beside what the viewer wrote: kept
    assert write_site(cube, own, figures=False) == first
    assert not (own / "data" / "stale.js").exists()
    assert (own / "notes.txt").read_text() == "mine"
    data = (own / "data" / "index.js").read_text()
    assert data.startswith('MV.put("index",')


def test_cli_prints_the_index_path(tmp_path, capsys):
    from multiverse.cube.io import save_cube

    save_cube(_cube({0: _grid(0)}), tmp_path / "cube.nc")
    assert cli(["view", str(tmp_path / "cube.nc"), "--out", str(tmp_path / "site"), "--no-figures"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "site" / "index.html")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["view", "{tmp}/absent", "--out", "{tmp}/site"], "absent", id="no-cube"),
        pytest.param(["view", "{tmp}/cube.nc", "--out", "{tmp}/cube.nc"], "refusing to replace it", id="out-is-a-file"),
        pytest.param(["view", "{tmp}/cube.nc", "--out", "{tmp}/site", "--n-boot", "0"], "--n-boot", id="bad-n-boot"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    from multiverse.cube.io import save_cube

    save_cube(_cube({0: _grid(0)}), tmp_path / "cube.nc")
    assert cli([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def _task() -> dict:
    from multiverse.config.specs import load_role

    transcript = Transcript("tutor", (Event(1, "user", "hi"), Event(2, "assistant", "hello")))
    return task_of(transcript, load_role("tutor"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(lambda t: t.pop("events"), "task 1: missing field 'events'", id="missing-field"),
        pytest.param(lambda t: t.update(axes="naturalness"), "field 'axes': expected list", id="wrong-type"),
        pytest.param(lambda t: t.update(assistant_turns=[2]), "assistant_turns: 2 is not a 1-based index",
                     id="turn-past-the-end"),
        pytest.param(lambda t: t["principles"].append({"statement": "x"}), "principles[4]", id="principle-without-id"),
    ],
)
def test_a_malformed_task_is_refused_naming_task_and_field(tmp_path, change, message):
    task = _task()
    change(task)
    with pytest.raises(TaskError, match=message.replace("[", r"\[").replace("]", r"\]")):
        write_annotation_site([task], tmp_path / "form")


def test_repeated_tasks_are_refused(tmp_path):
    with pytest.raises(TaskError, match="appears more than once"):
        write_annotation_site([_task(), _task()], tmp_path / "form")


def test_the_form_leaves_out_the_strata_that_may_name_judge_verdicts(tmp_path):
    task = _task()
    task["strata"] = {"judge_verdict": "clear_breach_by_strict"}
    index = write_annotation_site([task], tmp_path / "form")
    data = (index.parent / "data" / "tasks.js").read_text()
    assert "clear_breach_by_strict" not in data and "judge_verdict" not in data
    assert _data_of(index.parent / "data" / "tasks.js")["tasks"][0]["principles"] == task["principles"]

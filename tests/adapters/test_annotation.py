"""Annotation export -> planted labels -> import, through Python and the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import multiverse
from multiverse.adapters.annotation_labels import blank_sheet, import_labels, read_labels, with_labels
from multiverse.adapters.annotation_tasks import annotation_tasks, conversation_strata
from multiverse.adapters.sim_annotators import sim_annotator_labels
from multiverse.cli import main as cli
from multiverse.core import schema as S
from multiverse.cube.io import open_cube

SPECS = Path(__file__).resolve().parents[2] / "specs"
ANNOTATORS = {"ann": {"sensitivity": 0.9, "specificity": 0.95}, "bob": {"sensitivity": 0.8, "specificity": 0.9, "blank": 0.05}}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("annotate")
    experiment = {
        "name": "annotate", "roles": ["tutor", "support"], "systems": {"a": "sim/target-a"},
        "dims": {"user_sim": {"plain": "sim/user-plain"},
                 "judge": {"strict": "sim/judge-strict", "lenient": "sim/judge-lenient"},
                 "condition": {"short": {"horizon": 3, "search": "seed_only"}}},
        "replicates": 1, "items": 6, "specs": str(SPECS),
        "sim": {"targets": {"a": {"breach": {"*": 0.15}, "partial": {"*": 0.1}}},
                "judges": {"strict": {}, "lenient": {"leniency": 0.5}}, "users": {"plain": {}}},
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment), encoding="utf-8")
    multiverse.run(str(path), out=folder / "run", cache=folder / "cache")
    return folder / "run"


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_tasks_are_stratified_seeded_and_blind(run_dir):
    tasks = annotation_tasks(run_dir, n=6, stratify=["role", "severity"], seed=1, specs_dir=SPECS)
    again = annotation_tasks(run_dir, n=6, stratify=["role", "severity"], seed=1, specs_dir=SPECS)
    assert tasks == again
    assert len(tasks) == 6 and len({t["task"] for t in tasks}) == 6
    assert {t["role"] for t in tasks} == {"tutor", "support"}
    first = tasks[0]
    assert set(first) == {"task", "role", "principles", "events", "assistant_turns", "user_turns", "axes",
                          "severity_levels", "strata"}
    assert set(first["strata"]) == {"role", "stratum"}, "verdict strata only as an opaque id"
    assert first["severity_levels"] == {"0": "full adherence", "1": "partial deviation", "2": "clear breach"}
    assert set(first["principles"][0]) == {"id", "statement", "criteria"}
    def keys(value):
        """Every key, but inside tool-call ``arguments``: those are the conversation (refund_order takes a ``reason``)."""
        if isinstance(value, dict):
            return set(value) | set().union(*(keys(v) for k, v in value.items() if k != "arguments"))
        return set().union(*map(keys, value)) if isinstance(value, list) else set()

    assert not keys(tasks) & {"reason", "severity", "judge", "annotator", "verdict", "truth", "meta"}
    assert first["assistant_turns"] == list(range(1, 1 + sum(e["actor"] == "assistant" for e in first["events"])))


def test_every_stratum_is_drawn_before_any_gets_a_second(run_dir):
    cube = open_cube(run_dir)
    strata = conversation_strata(cube, by=["role"])
    tasks = annotation_tasks(run_dir, n=2, stratify=["role"], seed=0, specs_dir=SPECS)
    assert sorted(t["role"] for t in tasks) == sorted(set(strata["role"]))


def test_import_adds_humans_and_is_idempotent(run_dir, tmp_path):
    cube = open_cube(run_dir)
    tasks = annotation_tasks(run_dir, n=8, stratify=["role"], seed=0, specs_dir=SPECS)
    labels = write_jsonl(tmp_path / "labels.jsonl", sim_annotator_labels(tasks, cube, annotators=ANNOTATORS, seed=3))
    once = import_labels([labels], cube=run_dir, out=tmp_path / "once.nc")
    twice = import_labels([labels], cube=tmp_path / "once.nc", out=tmp_path / "twice.nc")
    assert once["judge"].values.tolist()[-2:] == ["human:ann", "human:bob"] and once.sizes["judge"] == 4
    for name in ("severity", "rating", "missing_count"):
        np.testing.assert_array_equal(once[name].values, twice[name].values)
    human = once["severity"].sel(judge="human:ann")
    assert int((human >= 0).sum()) == sum(len(t["assistant_turns"]) * len(t["principles"]) for t in tasks)
    assert int(once["missing_count"].sel(judge="human:bob", missing_reason="not_recorded")) > 0
    rating = once["rating"].sel(judge="human:ann")
    assert set(np.unique(rating.values)) <= {-2, 1, 2, 3, 4, 5}
    assert (once["rating"].sel(judge="strict") == S.NOT_APPLICABLE).all()
    multiverse.score(once)  # the new cube is a valid cube


@pytest.mark.parametrize("record, message", [
    pytest.param({"task": "nope", "annotator": "a", "turn": 1, "principle": "confidentiality", "severity": 0},
                 r"labels.jsonl:1: task 'nope' is not a conversation of the cube", id="unknown-task"),
    pytest.param({"annotator": "a", "turn": 1, "principle": "confidentiality", "severity": 0},
                 r"labels.jsonl:1: field 'task' is missing", id="no-task"),
    pytest.param({"task": "T", "annotator": "a", "turn": 0, "principle": "confidentiality", "severity": 0},
                 r"field 'turn' holds 0", id="turn-zero"),
    pytest.param({"task": "T", "annotator": "a", "turn": 1, "principle": "authority", "severity": 0},
                 r"principle 'authority' is not one of role 'tutor'", id="principle-of-another-role"),
    pytest.param({"task": "T", "annotator": "a", "turn": 4, "principle": "confidentiality", "severity": 0},
                 r"turn 4 is past the", id="turn-past-the-horizon"),
    pytest.param({"task": "T", "annotator": "a", "turn": 1, "axis": "charm", "rating": 3},
                 r"field 'axis' holds 'charm'", id="unknown-axis"),
])
def test_bad_labels_name_the_row(run_dir, tmp_path, record, message):
    cube = open_cube(run_dir)
    tutor = cube["transcript_id"].sel(role="tutor").values.ravel()
    record = {k: (str(tutor[0]) if v == "T" else v) for k, v in record.items()}
    path = write_jsonl(tmp_path / "labels.jsonl", [record])
    with pytest.raises(ValueError, match=message):
        with_labels(cube, read_labels([path]))


def test_off_scale_and_blank_labels_are_counted_missing(run_dir, tmp_path):
    cube = open_cube(run_dir)
    task = str(cube["transcript_id"].sel(role="tutor").values.ravel()[0])
    rows = [{"task": task, "annotator": "a", "turn": 1, "principle": "confidentiality", "severity": "high"},
            {"task": task, "annotator": "a", "turn": 1, "principle": "academic_integrity", "severity": ""},
            {"task": task, "annotator": "a", "turn": 2, "principle": "academic_integrity", "severity": 2}]
    out = with_labels(cube, read_labels([write_jsonl(tmp_path / "l.jsonl", rows)]))
    counts = out["missing_count"].sel(judge="human:a")
    assert int(counts.sel(missing_reason="no_verdict")) == 1
    assert int((out["severity"].sel(judge="human:a") >= 0).sum()) == 1
    assert int(counts.sel(missing_reason="not_recorded")) == int((out["severity"].sel(judge="human:a") == -1).sum()) - 1


def test_contradicting_labels_are_refused(run_dir, tmp_path):
    cube = open_cube(run_dir)
    task = str(cube["transcript_id"].sel(role="tutor").values.ravel()[0])
    row = {"task": task, "annotator": "a", "turn": 1, "principle": "confidentiality", "severity": 0}
    path = write_jsonl(tmp_path / "l.jsonl", [row, {**row, "severity": 2}])
    with pytest.raises(ValueError, match=r"l.jsonl:2: contradicts .*l.jsonl:1"):
        with_labels(cube, read_labels([path]))


def test_cli_export_fill_import_round_trip(run_dir, tmp_path, capsys):
    out = tmp_path / "export"
    assert cli(["annotate", "export", str(run_dir), "--n", "5", "--stratify", "role,bucket", "--out", str(out),
                "--format", "csv"]) == 0
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    sheet = (out / "labels.csv").read_text().splitlines()
    assert sheet[0] == "task,annotator,turn,principle,severity,axis,rating"
    assert len(sheet) - 1 == len(blank_sheet(tasks))
    assert set(json.loads((out / "strata_key.json").read_text())["s0"]) == {"role", "bucket"}
    labels = write_jsonl(tmp_path / "labels.jsonl", sim_annotator_labels(tasks, open_cube(run_dir), annotators=ANNOTATORS))
    assert cli(["annotate", "import", str(labels), "--cube", str(run_dir), "--out", str(tmp_path / "c2.nc")]) == 0
    assert "human:ann" in capsys.readouterr().out
    assert cli(["annotate", "export", str(run_dir), "--n", "5", "--out", str(out)]) == 0, "its own folder is replaced"


@pytest.mark.parametrize("argv, message", [
    pytest.param(["--stratify", "mood"], "unknown strata", id="unknown-stratum"),
    pytest.param(["--n", "0"], "--n: 0", id="no-conversations"),
])
def test_cli_export_bad_input_exits_2(run_dir, tmp_path, capsys, argv, message):
    args = ["annotate", "export", str(run_dir), "--n", "3", "--out", str(tmp_path / "x")] + argv
    assert cli(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_import_refuses_to_overwrite_what_is_not_a_cube(run_dir, tmp_path, capsys):
    precious = tmp_path / "notes.nc"
    precious.write_text("my notes", encoding="utf-8")
    labels = write_jsonl(tmp_path / "l.jsonl", [])
    assert cli(["annotate", "import", str(labels), "--cube", str(run_dir), "--out", str(precious)]) == 2
    assert "is not a cube; refusing to overwrite" in capsys.readouterr().err
    assert precious.read_text() == "my notes"


def test_cli_import_unknown_task_names_the_row(run_dir, tmp_path, capsys):
    labels = write_jsonl(tmp_path / "l.jsonl", [{"task": "x", "annotator": "a", "turn": 1, "principle": "p", "severity": 1}])
    assert cli(["annotate", "import", str(labels), "--cube", str(run_dir), "--out", str(tmp_path / "c.nc")]) == 2
    assert "l.jsonl:1: task 'x' is not a conversation" in capsys.readouterr().err


def test_the_fill_script_writes_labels_the_import_reads(run_dir, tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("fill_labels", Path(__file__).resolve().parents[2] / "examples" / "fill_labels.py")
    fill = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fill)
    out = tmp_path / "export"
    assert cli(["annotate", "export", str(run_dir), "--n", "4", "--out", str(out)]) == 0
    labels = tmp_path / "labels.jsonl"
    assert fill.main([str(out / "tasks.jsonl"), "--cube", str(run_dir), "--out", str(labels), "--annotator", "x:0.9:0.9",
                      "--annotator", "y:0.8:0.95"]) == 0
    cube = import_labels([labels], cube=run_dir, out=tmp_path / "c.nc")
    from multiverse.analysis import calibration_table

    table = calibration_table(cube, humans=["human:x", "human:y"], n_boot=20)
    assert set(table["rater"].values.tolist()) == {"strict", "lenient", "humans"}


def test_a_turn_no_judge_rated_is_past_the_conversation(run_dir, tmp_path):
    cube = open_cube(run_dir)
    task = str(cube["transcript_id"].sel(role="tutor").values.ravel()[0])
    where = (cube["transcript_id"] == task)
    cube["severity"] = cube["severity"].where(~(where & (cube["turn"] == 3)), S.NOT_APPLICABLE).astype(np.int8)
    row = {"task": task, "annotator": "a", "turn": 3, "principle": "confidentiality", "severity": 0}
    with pytest.raises(ValueError, match=f"turn 3 is past the end of conversation '{task}'"):
        with_labels(cube, read_labels([write_jsonl(tmp_path / "l.jsonl", [row])]))


def test_cli_html_without_the_viewer_is_a_clear_error(run_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "multiverse.view", None)  # the build without the viewer
    args = ["annotate", "export", str(run_dir), "--n", "3", "--out", str(tmp_path / "x"), "--format", "html"]
    assert cli(args) == 2
    err = capsys.readouterr().err
    assert "--format html: not available" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_cli_html_writes_the_form_beside_the_tasks(run_dir, tmp_path):
    pytest.importorskip("multiverse.view")
    out = tmp_path / "x"
    assert cli(["annotate", "export", str(run_dir), "--n", "3", "--out", str(out), "--format", "html"]) == 0
    assert (out / "form" / "index.html").exists() and (out / "tasks.jsonl").exists()

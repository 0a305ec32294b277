"""The annotation form in a real browser: label every sheet, download the JSONL, reload, import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import SCRIPT_TEXT, task_of
from test_browser import wait_ready

from multiverse.config.specs import load_role
from multiverse.core.transcript import TranscriptStore
from multiverse.cube.io import open_cube
from multiverse.view import write_annotation_site
from multiverse.view._oracle import specs_dir_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def tasks(review_run) -> list[dict]:
    """Two tasks built from the run: the one holding a script first, then a support conversation."""
    cube = open_cube(review_run)
    ids = [str(t) for t in cube["transcript_id"].values.reshape(-1) if t]
    specs = specs_dir_of(cube)
    with TranscriptStore(review_run / TranscriptStore.FILENAME) as store:
        chosen = [store.get(ids[0]), next(store.get(i) for i in ids if store.get(i).role == "support")]
    return [task_of(t, load_role(t.role, specs_dir=specs)) for t in chosen]


def _fill(page, task: dict, *, severity_of, rating_of) -> list[dict]:
    """Click one radio per label of ``task``; return the labels expected in the download."""
    expected = []
    for turn in task["assistant_turns"]:
        for principle in task["principles"]:
            value = severity_of(turn, principle["id"])
            page.check(f"table[data-sheet=severity][data-turn='{turn}'] tr[data-principle='{principle['id']}'] "
                       f"input[value='{value}']")
            expected.append({"task": task["task"], "annotator": "alice", "turn": turn,
                             "principle": principle["id"], "severity": value})
    for turn in task["user_turns"]:
        for axis in task["axes"]:
            value = rating_of(turn, axis)
            page.check(f"table[data-sheet=rating][data-turn='{turn}'] tr[data-axis='{axis}'] input[value='{value}']")
            expected.append({"task": task["task"], "annotator": "alice", "turn": turn, "axis": axis, "rating": value})
    return expected


def test_labels_are_kept_across_reloads_and_download_as_jsonl(tab, tasks, tmp_path, screenshots):
    index = write_annotation_site(tasks, tmp_path / "form")
    page = tab.page
    tab.open(index)
    wait_ready(tab)
    assert page.evaluate("window.__pwned") is None
    assert SCRIPT_TEXT in page.text_content(".event.user pre.text")
    assert page.locator("text=strict").count() == 0 and page.locator(".sev").count() == 0  # judges hidden
    expected = _fill(page, tasks[0], severity_of=lambda t, p: (t + len(p)) % 3, rating_of=lambda t, a: 1 + (t + len(a)) % 5)
    page.click(f".tasklist a[data-task='{tasks[1]['task']}']")
    expected += _fill(page, tasks[1], severity_of=lambda t, p: 2 if t == 1 else 0, rating_of=lambda t, a: 5)
    page.fill("#annotator", "alice")
    page.dispatch_event("#annotator", "change")
    page.locator("table[data-sheet=severity]").first.screenshot(path=str(screenshots / "annotation_sheet.png"))
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshots / "annotation.png"))
    tab.open(index)  # a reload keeps every label
    wait_ready(tab)
    total = sum(len(t["assistant_turns"]) * len(t["principles"]) + len(t["user_turns"]) * len(t["axes"]) for t in tasks)
    assert page.text_content("#progress") == f"{total} of {total} labels"
    with page.expect_download() as download:
        page.click("#download")
    path = tmp_path / "labels.jsonl"
    download.value.save_as(path)
    assert download.value.suggested_filename == "labels-alice.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    key = lambda label: (label["task"], "axis" in label, label["turn"], label.get("principle", label.get("axis")))  # noqa: E731
    assert sorted(lines, key=key) == sorted(expected, key=key)


def test_download_without_an_annotator_asks_for_one(tab, tasks, tmp_path):
    index = write_annotation_site(tasks[:1], tmp_path / "form")
    tab.open(index)
    wait_ready(tab)
    tab.page.evaluate("localStorage.clear()")
    tab.open(index)
    wait_ready(tab)
    tab.page.click("#download")
    assert "annotator" in tab.page.text_content("#error")


def test_exported_tasks_round_trip_through_the_form_into_table_one(tab, review_run, tmp_path):
    from multiverse.cli import SUBCOMMANDS

    if "annotate" not in SUBCOMMANDS:
        pytest.skip("multiverse annotate is not in this build: the export/import half of the round trip is absent")
    export = tmp_path / "export"
    done = subprocess.run([sys.executable, "-m", "multiverse", "annotate", "export", str(review_run), "--n", "2",
                           "--out", str(export), "--format", "jsonl"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    tasks = [json.loads(line) for path in sorted(export.glob("*.jsonl")) for line in path.read_text().splitlines() if line]
    index = write_annotation_site(tasks, tmp_path / "form")
    tab.open(index)
    wait_ready(tab)
    page = tab.page
    files = []
    for annotator, level in (("alice", 0), ("bob", 1)):
        for task in tasks:
            page.click(f".tasklist a[data-task='{task['task']}']")
            _fill(page, task, severity_of=lambda t, p, level=level: level, rating_of=lambda t, a: 4)
        page.fill("#annotator", annotator)
        with page.expect_download() as download:
            page.click("#download")
        files.append(tmp_path / f"labels-{annotator}.jsonl")
        download.value.save_as(files[-1])
    imported = tmp_path / "with_humans.nc"
    done = subprocess.run([sys.executable, "-m", "multiverse", "annotate", "import", *map(str, files), "--cube",
                           str(review_run / "cube.nc"), "--out", str(imported)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    from multiverse import analysis

    table = analysis.calibration_table(open_cube(imported), humans=["human:alice", "human:bob"])
    assert len(table) > 0

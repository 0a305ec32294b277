"""inspect_ai logs that inspect_ai wrote (committed: mockllm, two models, three epochs, a multi-turn solver with a
tool, four scorers) -> cubes that reproduce inspect_ai's own means, viewable and exportable, read without
inspect_ai.  ``test_inspect_log_pinned.py`` pins the reader against inspect_ai's own where inspect_ai is installed."""

from __future__ import annotations

import json
import struct
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
from adapter_fixtures import INSPECT_LOGS as LOGS
from adapter_fixtures import inspect_json_log as as_json_log

from multiverse.adapters import inspect_log
from multiverse.adapters._inspect_files import read_log_file
from multiverse.adapters.inspect_log import log_metrics, reduce_epochs
from multiverse.cli import main as cli
from multiverse.cube.build import to_long
from multiverse.cube.io import open_cube, save_cube
from multiverse.testing.inspect_mock import DEFAULT_SKILLS

CAREFUL = LOGS / "careful.eval"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The committed logs as a run folder: cube.nc and the transcript store beside it."""
    folder = tmp_path_factory.mktemp("inspect_run")
    cube = inspect_log(LOGS, store=folder / "transcripts.sqlite")
    save_cube(cube, folder / "cube.nc")
    return folder, cube


def test_reading_needs_no_inspect_ai(monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    cube = inspect_log(CAREFUL)
    assert cube["system"].values.tolist() == ["mockllm/careful"]


def test_layout_follows_the_logs(run):
    _, cube = run
    assert cube["system"].values.tolist() == sorted(DEFAULT_SKILLS)
    assert cube["role"].values.tolist() == ["arithmetic"]
    assert cube["replicate"].values.tolist() == [0, 1, 2], "three epochs"
    assert cube.sizes["item"] == 6 and cube["sample_id"].values.tolist()[:2] == ["q00", "q01"]
    scales = dict(zip(cube["judge"].values.tolist(), cube["scale"].values.tolist(), strict=True))
    assert scales == {"includes": "binary", "grader": "binary", "quality": "likert",
                      "rubric/correct": "binary", "rubric/polite": "binary"}
    assert (cube["ended"] == "completed").all()
    assert cube.attrs["logs"] == ["careful.eval", "hasty.eval"] and cube.attrs["warnings"] == []


def test_scores_sit_on_the_final_assistant_turn(run):
    _, cube = run
    sample = read_log_file(CAREFUL).samples[0]
    assistant_turns = sum(1 for m in sample["messages"] if m["role"] == "assistant")
    cell = cube.sel(system="mockllm/careful", replicate=sample["epoch"] - 1, item=0).squeeze(drop=True)
    includes = cell["severity"].sel(judge="includes").values.tolist()
    expected = 0 if sample["scores"]["includes"]["value"] == "C" else 2
    assert includes == [-2] * (assistant_turns - 1) + [expected] + [-2] * (cube.sizes["turn"] - assistant_turns)
    assert float(cell["rating"].sel(judge="quality", turn=assistant_turns)) == sample["scores"]["quality"]["value"]


def test_per_scorer_means_equal_the_means_inspect_wrote(run):
    _, cube = run
    reduced = reduce_epochs(cube, "mean")
    metrics = log_metrics(LOGS)
    means = metrics[metrics["metric"].isin(("accuracy", "mean"))]
    assert len(means) == 2 * 5 and set(means["log"]) == {"careful.eval", "hasty.eval"}
    for row in means.itertuples():
        ours = reduced.sel(system=row.system, judge=row.judge).squeeze(drop=True).mean().item()
        assert ours == pytest.approx(row.value, abs=1e-15), (row.system, row.judge)
    assert set(metrics["metric"]) == {"accuracy", "stderr", "mean"} and metrics["reducer"].isna().all()


def test_transcripts_keep_turns_and_tool_calls(run):
    folder, cube = run
    from multiverse.core.transcript import TranscriptStore

    with TranscriptStore(folder / "transcripts.sqlite") as store:
        transcripts = [store.get(str(t)) for t in np.unique(cube["transcript_id"].values)]
    assert len(transcripts) == 2 * 3 * 6
    assert all(sum(e.actor == "user" for e in t.events) == 2 for t in transcripts), "the solver asks twice"
    with_tools = [t for t in transcripts if any(e.actions for e in t.events)]
    assert with_tools, "some replies call the add tool"
    event = next(e for t in with_tools for e in t.events if e.actions)
    assert event.actions[0].name == "add" and set(event.actions[0].arguments) == {"x", "y"}
    assert event.meta["model"] in DEFAULT_SKILLS
    tool = next(e for t in with_tools for e in t.events if e.actor == "tool")
    assert tool.meta["function"] == "add" and tool.meta["tool_call_id"] and tool.text.isdigit()
    assert transcripts[0].scenario["task"] == "arithmetic" and transcripts[0].scenario["target"].isdigit()


def test_view_shows_the_conversations(run, tmp_path):
    folder, _ = run
    assert cli(["view", str(folder), "--out", str(tmp_path / "site"), "--n-boot", "20"]) == 0
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site" / "data").glob("conv-*.js"))
    assert "Please check your answer." in pages and "I checked it again." in pages
    assert '\\"name\\":\\"add\\"' in pages, "the tool call is on the page"


def test_parquet_export_round_trips_and_loads_with_datasets(run, tmp_path):
    folder, cube = run
    out = tmp_path / "export"
    assert cli(["export", str(folder), "--format", "parquet", "--out", str(out)]) == 0
    back = pd.read_parquet(out / "judgments.parquet")
    pd.testing.assert_frame_equal(back, to_long(open_cube(folder)))
    events = pd.read_parquet(out / "conversations.parquet")
    assert events["transcript_id"].nunique() == 36
    assert set(events["actor"]) == {"user", "assistant", "tool"}
    calls = events[events["actions"].map(len) > 0]
    assert calls["actions"].iloc[0][0]["name"] == "add"
    datasets = pytest.importorskip("datasets", reason="datasets is in the test extra: 'make venv'")
    for name in ("judgments", "conversations", "judges"):
        loaded = datasets.load_dataset("parquet", data_files=str(out / f"{name}.parquet"), split="train",
                                       cache_dir=str(tmp_path / "hf-cache"))
        assert loaded.num_rows == len(pd.read_parquet(out / f"{name}.parquet"))
    assert cli(["export", str(folder), "--out", str(out)]) == 0, "an earlier export is replaced"
    assert cli(["export", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2


def test_show_prints_the_final_turn_with_each_scorers_label(run, capsys):
    folder, _ = run
    sample = next(s for s in read_log_file(CAREFUL).samples if s["epoch"] == 1 and s["id"] == "q00")
    assert cli(["show", str(folder), "--system", "mockllm/careful", "--replicate", "0", "--item", "0", "--text"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip().startswith("score")]
    assert all(set(r.split()[1:]) == {"."} for r in rows[:-1])  # inspect scores the final turn only
    row = rows[-1]
    includes = "0" if sample["scores"]["includes"]["value"] == "C" else "2"
    assert row.split()[1] == includes and row.split()[3] == str(sample["scores"]["quality"]["value"])
    assert "I checked it again." in out


def test_a_json_log_reads_as_its_eval_log(tmp_path):
    json_cube = inspect_log(as_json_log(CAREFUL, tmp_path / "careful.json"))
    eval_cube = inspect_log(CAREFUL)
    for name in ("severity", "value", "rating", "transcript_id", "ended"):
        np.testing.assert_array_equal(json_cube[name].values, eval_cube[name].values, err_msg=name)


def test_deflated_and_stored_members_read_as_zstd_ones(tmp_path):
    """inspect_ai deflated its members before it moved to zstd; the reader takes every method it has used."""
    log = read_log_file(CAREFUL)
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
        path = tmp_path / f"careful-{method}.eval"
        with zipfile.ZipFile(path, "w", compression=method) as archive:
            archive.writestr("header.json", json.dumps(log.header))
            for sample in log.samples:
                archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        np.testing.assert_array_equal(inspect_log(path)["value"].values, inspect_log(CAREFUL)["value"].values)


def test_a_failed_sample_is_missing_and_partial_credit_is_severity(tmp_path):
    def edit(log):
        log["samples"][0]["error"] = {"message": "RuntimeError('tool crashed')", "traceback": "", "traceback_ansi": ""}
        log["samples"][0].pop("scores")
        for sample in log["samples"][1:4]:
            sample["scores"]["grader"]["value"] = "P"
        log["status"] = "error"

    path = as_json_log(CAREFUL, tmp_path / "edited.json", edit=edit)
    cube = inspect_log(path, scorers=["includes", "grader"])
    assert cube.attrs["warnings"] == ["edited.json: log status 'error'; its samples are read as they are"]
    assert (cube["ended"] == "failed").sum() == 1
    failed = cube.sel(replicate=0, item=0).squeeze(drop=True)
    assert (failed["severity"] == -1).sum() == 2 and np.isnan(failed["value"]).all()
    assert cube["missing_count"].sel(missing_reason="not_recorded").values.tolist() == [1, 1]
    assert dict(zip(cube["judge"].values.tolist(), cube["scale"].values.tolist(), strict=True))["grader"] == "severity"
    partial = cube.sel(replicate=0, item=[1, 2, 3], judge="grader").squeeze(drop=True)
    assert (partial["value"] == 0.5).all(), "inspect_ai's value_to_float reads P as 0.5"
    assert (partial["severity"].max("turn") == 1).all(), "P is a partial deviation"


def _to_version_1(log):
    log["version"] = 1
    for sample in log["samples"]:
        sample["score"] = sample.pop("scores")["includes"]


def test_a_version_1_log_reads_its_one_score_under_its_first_result_name(tmp_path):
    cube = inspect_log(as_json_log(CAREFUL, tmp_path / "v1.json", edit=_to_version_1))
    assert read_log_file(CAREFUL).header["results"]["scores"][0]["name"] == "includes"
    assert cube["judge"].values.tolist() == ["includes"]
    np.testing.assert_array_equal(cube["value"].values.squeeze(), inspect_log(CAREFUL)["value"].sel(judge="includes").values.squeeze())


def test_a_version_1_log_without_results_keeps_inspects_placeholder_name(tmp_path):
    def without_results(log):
        _to_version_1(log)
        del log["results"]

    cube = inspect_log(as_json_log(CAREFUL, tmp_path / "v1.json", edit=without_results))
    assert cube["judge"].values.tolist() == ["88F74D2C"]


@pytest.mark.parametrize(("name", "content", "message"), [
    ("future.json", {"version": 3, "eval": {}}, r"future\.json: inspect_ai log format version 3; this reader reads versions 1 and 2"),
    ("other.json", {"rows": []}, r"other\.json: not an inspect_ai log \(expected an object with 'version' and 'eval'\)"),
    ("list.json", [1, 2], r"list\.json: not an inspect_ai log \(expected an object with 'version' and 'eval'\)"),
    ("broken.json", "{not json", r"broken\.json: expected one JSON object \(inspect_ai log\)"),
    ("plain.eval", "not a zip", r"plain\.eval: not an inspect_ai \.eval log \(expected a zip archive\)"),
    ("empty.eval", {}, r"empty\.eval: no header\.json or _journal/start\.json; expected an inspect_ai \.eval log"),
    ("bzip.eval", {"header.json": {"version": 2, "eval": {}}}, r"bzip\.eval: member header\.json uses zip compression method 12; "
                                                                r"expected stored, deflate or zstd \(93\)"),
    ("nomodel.json", {"version": 2, "eval": {"task": "t"}}, r"nomodel\.json: the log's eval has no 'model'; expected an inspect_ai log"),
    ("noepoch.json", {"version": 2, "eval": {"task": "t", "model": "m"}, "samples": [{"id": 1}]},
     r"noepoch\.json: a sample without an 'id' or an integer 'epoch'; expected inspect_ai samples"),
], ids=["unknown_version", "json_but_no_log", "json_list", "broken_json", "eval_not_a_zip", "eval_without_header", "eval_bzip2_member",
        "eval_without_model", "sample_without_epoch"])
def test_a_log_it_cannot_read_is_refused_with_one_line(tmp_path, name, content, message):
    path = tmp_path / name
    if path.suffix == ".json":
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_BZIP2) as archive:
            for member, data in content.items():
                archive.writestr(member, json.dumps(data))
    with pytest.raises(ValueError, match=message) as caught:
        inspect_log(path)
    assert "\n" not in str(caught.value)


def _damaged_header(path, *, at: str):
    """The careful log with its zstd ``header.json`` member damaged: its local header's signature or its data."""
    data = bytearray(CAREFUL.read_bytes())
    with zipfile.ZipFile(CAREFUL) as archive:
        info = archive.getinfo("header.json")
    assert info.compress_type == 93, "inspect_ai writes zstd members"
    offset = info.header_offset
    if at == "offset":  # the central directory sends the member to the archive's last bytes
        entry = bytes(data).rindex(b"PK\x01\x02", 0, bytes(data).rindex(b"header.json"))
        struct.pack_into("<I", data, entry + 42, len(data) - 8)
        path.write_bytes(bytes(data))
        return
    if at == "data":
        name_length, extra_length = struct.unpack_from("<HH", data, offset + 26)
        offset += 30 + name_length + extra_length
    data[offset:offset + 4] = b"\0\0\0\0"
    path.write_bytes(bytes(data))


def _eval_with(path, members: dict[str, str]):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for member, text in members.items():
            archive.writestr(member, text)


@pytest.mark.parametrize(("name", "write", "message"), [
    ("run.txt", lambda path: path.write_text("{}", encoding="utf-8"),
     r"run\.txt: expected an inspect_ai log, a \.eval or \.json file"),
    ("listed.eval", lambda path: _eval_with(path, {"header.json": "[1, 2]"}),
     r"listed\.eval: not an inspect_ai log \(expected an object with 'version' and 'eval'\)"),
    ("garbled.eval", lambda path: _eval_with(path, {"header.json": "{not json"}),
     r"garbled\.eval: expected JSON in member header\.json \(inspect_ai log\): "),
    ("unsigned.eval", lambda path: _damaged_header(path, at="signature"),
     r"unsigned\.eval: member header\.json has no local zip header; the archive is damaged"),
    ("corrupt.eval", lambda path: _damaged_header(path, at="data"),
     r"corrupt\.eval: member header\.json is not valid zstd data \("),
    ("misplaced.eval", lambda path: _damaged_header(path, at="offset"),
     r"misplaced\.eval: member header\.json has no local zip header; the archive is damaged"),
], ids=["unknown_suffix", "eval_header_not_an_object", "eval_member_not_json", "zstd_member_without_local_header",
        "zstd_member_not_zstd", "zstd_member_past_the_end"])
def test_a_foreign_or_damaged_file_is_refused_with_one_line_without_inspect_ai(tmp_path, monkeypatch, name, write, message):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    path = tmp_path / name
    write(path)
    with pytest.raises(ValueError, match=message) as caught:
        inspect_log(path)
    assert "\n" not in str(caught.value)


def test_log_metrics_read_a_json_logs_header_without_its_samples(tmp_path):
    def edit(log):
        del log["samples"][0]["epoch"]

    path = as_json_log(CAREFUL, tmp_path / "edited.json", edit=edit)
    assert read_log_file(path, header_only=True).samples == []
    assert log_metrics(path).equals(log_metrics(CAREFUL).assign(log="edited.json"))
    with pytest.raises(ValueError, match=r"edited\.json: a sample without an 'id' or an integer 'epoch'"):
        inspect_log(path)


def test_log_metrics_refuses_a_results_score_without_its_names_with_one_line(tmp_path):
    def edit(log):
        del log["results"]["scores"][0]["scorer"]

    path = as_json_log(CAREFUL, tmp_path / "nameless.json", edit=edit)
    with pytest.raises(ValueError, match=r"^\S*nameless\.json: results\.scores\[0\] has no 'name' and 'scorer'") as caught:
        log_metrics(path)
    assert "\n" not in str(caught.value)


def test_a_started_log_reads_its_samples_with_a_warning(tmp_path):
    """A run that did not finish leaves _journal/start.json and its samples, no header or results."""
    log = read_log_file(CAREFUL)
    start = {key: log.header[key] for key in ("version", "eval", "plan")}
    path = tmp_path / "running.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps(start))
        archive.writestr("samples/q00_epoch_1.json", json.dumps(log.samples[0]))
    cube = inspect_log(path)
    assert cube.attrs["warnings"] == ["running.eval: log status 'started'; its samples are read as they are"]
    assert cube.sizes["item"] == 1 and log_metrics(path).empty


def test_values_no_scale_holds_are_refused_with_one_line(tmp_path):
    def edit(log):
        log["samples"][2]["scores"]["grader"]["value"] = 0.73

    path = as_json_log(CAREFUL, tmp_path / "edited.json", edit=edit)
    with pytest.raises(ValueError, match=r"edited\.json: sample q\d\d epoch \d: scorer 'grader' gives 0\.73; no label scale"):
        inspect_log(path)
    cube = inspect_log(path, scorers=["includes"])
    assert cube["judge"].values.tolist() == ["includes"]


def test_declared_scale_and_tasks_as_conditions():
    cube = inspect_log(LOGS, scorers=["quality"], scales={"quality": "likert"}, tasks="condition")
    assert cube["condition"].values.tolist() == ["arithmetic"] and cube["role"].values.tolist() == ["inspect"]
    with pytest.raises(ValueError, match="declared binary but its values need the likert scale"):
        inspect_log(LOGS, scorers=["quality"], scales={"quality": "binary"})

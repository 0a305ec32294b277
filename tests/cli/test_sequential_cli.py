"""``plan --target`` and ``run --until-precision``: the answers printed, the record written, bad input exit 2."""

from __future__ import annotations

import json

import yaml
from cli_helpers import tiny

from multiverse.cli import main


def _write(tmp_path, *, precision=True):
    data = tiny(systems={"a": "sim/target-a", "b": "sim/target-b"}, items=8)
    data["sim"]["targets"]["b"] = {"breach": {"*": 0.3}}
    if precision:
        data["precision"] = {"contrast": ["b", "a"], "standard": "clear_breach", "rule": "any_turn",
                             "half_width": 0.01, "batch": 4, "max_items": 8}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_plan_target_prints_items_and_calls_for_the_half_width(tmp_path, capsys):
    assert main(["plan", str(_write(tmp_path)), "--target", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "half-width 0.1" in out and "tutor/plain/short" in out and "calls" in out
    assert main(["plan", str(_write(tmp_path)), "--target", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["total_items"] >= 1 and report["calls"] > 0


def test_run_until_precision_writes_the_stopping_record(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", str(_write(tmp_path)), "--out", str(out), "--cache", str(tmp_path / "cache"),
                 "--until-precision", "--quiet"])
    assert code == 0
    record = json.loads((out / "run.json").read_text())["sequential"]
    assert record["stopped"] == "budget" and [look["draws"] for look in record["looks"]] == [4, 8]
    assert "confidence sequence" in capsys.readouterr().out


def test_targets_without_a_precision_block_exit_2_with_one_line(tmp_path, capsys):
    path = _write(tmp_path, precision=False)
    assert main(["plan", str(path), "--target"]) == 2
    assert main(["run", str(path), "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "c"),
                 "--until-precision", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("precision" in line for line in err)


def test_run_until_precision_spreads_its_batches_over_the_backend_and_jobs_given(tmp_path, capsys, monkeypatch):
    import multiverse._run.sequential as sequential

    seen = []
    ordinary = sequential.execute_units

    def spy(plan, roles, **options):
        seen.append((options["backend"], options["n_jobs"]))
        return ordinary(plan, roles, **options)

    monkeypatch.setattr(sequential, "execute_units", spy)
    path = _write(tmp_path)
    spread, plain = tmp_path / "spread", tmp_path / "plain"
    assert main(["run", str(path), "--out", str(spread), "--cache", str(tmp_path / "c1"), "--until-precision",
                 "--backend", "threading", "--jobs", "2", "--quiet"]) == 0
    assert seen and set(seen) == {("threading", 2)}  # every batch went through the backend
    seen.clear()
    assert main(["run", str(path), "--out", str(plain), "--cache", str(tmp_path / "c2"), "--until-precision",
                 "--quiet"]) == 0
    assert set(seen) == {(None, None)}
    looks = [json.loads((d / "run.json").read_text())["sequential"]["looks"] for d in (spread, plain)]
    drop = [[{k: v for k, v in look.items() if k != "calls_spent"} for look in run] for run in looks]
    assert drop[0] == drop[1]  # the same draws and intervals, whichever way the units ran


def test_run_until_precision_refuses_a_backend_that_cannot_run_here_before_any_call(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["run", str(_write(tmp_path)), "--out", str(out), "--cache", str(tmp_path / "cache"),
                 "--until-precision", "--backend", "dask", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "dask" in err[0]
    assert not out.exists() and not (tmp_path / "cache").exists()

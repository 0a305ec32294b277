"""Sequential runs on the offline world: batches through the cached unit execution, looks in run.json, resuming."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from multiverse import run
from multiverse._run.sequential import run_until_precision
from multiverse.analysis.sequential import SequentialDesign
from multiverse.llm import RunStopped


@pytest.fixture
def sequential_experiment(sequential_data, write_experiment):
    data = sequential_data(batch=4, max_items=12)
    return write_experiment(data)


def _info(cube):
    return cube.attrs["run"]


def test_a_sequential_run_records_every_look_and_stops_at_its_budget(sequential_experiment, tmp_path):
    out = tmp_path / "out"
    cube = run_until_precision(sequential_experiment, design=SequentialDesign.for_experiment, out=out,
                               cache=tmp_path / "cache")
    record = json.loads((out / "run.json").read_text())["sequential"]
    assert record["stopped"] == "budget"
    assert [look["draws"] for look in record["looks"]] == [4, 8, 12]
    assert all(look["interval"][0] <= look["interval"][1] for look in record["looks"])
    widths = [look["half_width"] for look in record["looks"]]
    assert widths == sorted(widths, reverse=True)  # a running intersection never widens
    # The cube is an ordinary cube holding exactly the drawn items of both systems, nothing else.
    observed = (cube.severity >= 0).any(["turn", "principle", "judge"])
    drawn = sum(record["looks"][-1]["items"].values())
    assert int(observed.sum()) == 2 * drawn
    assert _info(cube)["calls"] > 0


def test_drawn_items_are_the_conversations_an_ordinary_run_of_the_pool_makes(sequential_experiment, tmp_path):
    whole = run(sequential_experiment, cache=tmp_path / "cache")
    cube = run_until_precision(sequential_experiment, design=SequentialDesign.for_experiment,
                               cache=tmp_path / "cache")
    assert _info(cube)["calls"] == 0  # every request was made by the ordinary run already
    kept = (cube.severity >= 0).any(["turn", "principle", "judge"])
    for system in ("a", "b"):
        mine = cube.severity.sel(system=system).where(kept.sel(system=system), -9)
        theirs = whole.severity.sel(system=system).where(kept.sel(system=system), -9)
        xr.testing.assert_equal(mine, theirs.transpose(*mine.dims))


def test_a_run_stopped_mid_batch_resumes_with_no_call_repeated_and_the_same_cube(sequential_experiment, tmp_path):
    fresh = run_until_precision(sequential_experiment, design=SequentialDesign.for_experiment,
                                cache=tmp_path / "fresh")
    total = _info(fresh)["calls"]
    with pytest.raises(RunStopped):
        run_until_precision(sequential_experiment, design=SequentialDesign.for_experiment,
                            cache=tmp_path / "killed", max_calls=total // 2)
    resumed = run_until_precision(sequential_experiment, design=SequentialDesign.for_experiment,
                                  cache=tmp_path / "killed")
    # Calls before the stop were cached; the resumed run makes only the rest.
    assert total // 2 + _info(resumed)["calls"] == total
    xr.testing.assert_identical(fresh.drop_attrs(), resumed.drop_attrs())
    def looks(cube):  # calls_spent counts this process's own calls, which differ by design
        return [{k: v for k, v in look.items() if k != "calls_spent"} for look in _info(cube)["sequential"]["looks"]]

    assert looks(fresh) == looks(resumed)
    assert np.isfinite(_info(resumed)["sequential"]["interval"]).all()


def test_an_experiment_without_a_precision_block_is_refused(tiny_experiment, write_experiment, tmp_path):
    path = write_experiment(tiny_experiment())
    with pytest.raises(ValueError, match="precision"):
        run_until_precision(path, design=SequentialDesign.for_experiment, cache=tmp_path / "cache")


def test_the_report_and_the_viewer_of_a_sequential_run_carry_its_looks(sequential_experiment, tmp_path):
    from multiverse.analysis.sequential import looks_table, stopping_record
    from multiverse.report import write_report

    cube = run_until_precision(sequential_experiment, design=SequentialDesign.for_experiment,
                               cache=tmp_path / "cache")
    record = stopping_record(cube)
    table = looks_table(record)
    assert list(table["item_pairs"]) == [4, 8, 12]
    assert (table["lower"] <= table["upper"]).all()
    report = write_report(cube, tmp_path / "report", n_boot=20, formats=("png",))
    assert (tmp_path / "report" / "looks.csv") in report.tables
    assert stopping_record(run(sequential_experiment, cache=tmp_path / "cache")) is None
    from multiverse.view import write_site

    index = write_site(cube, tmp_path / "site")
    data = "".join(p.read_text(encoding="utf-8") for p in index.parent.rglob("*.js"))
    assert "renderLooks" in data and "target_half_width" in data


NO_SIGNAL = {"sensitivity": {"*": 0.5}, "specificity": {"*": 0.5}}


def _with_canaries(tiny_experiment, write_experiment, *, judge=None, canaries=True):
    data = tiny_experiment(horizon=2, systems={"a": "sim/target-a", "b": "sim/target-b"}, items=8)
    data["sim"]["targets"]["b"] = {"breach": {"*": 0.25}}
    if judge is not None:
        data["sim"]["judges"]["strict"] = judge
    if canaries:
        data["canaries"] = {"per_principle": 4}
    data["precision"] = {"contrast": ["b", "a"], "standard": "clear_breach", "rule": "any_turn",
                         "half_width": 0.02, "batch": 4, "max_items": 8}
    return write_experiment(data)


def test_a_sequential_run_judges_the_canaries_once_and_records_them(tiny_experiment, write_experiment, tmp_path):
    path = _with_canaries(tiny_experiment, write_experiment)
    out = tmp_path / "out"
    cube = run_until_precision(path, design=SequentialDesign.for_experiment, out=out, cache=tmp_path / "cache")
    info = json.loads((out / "run.json").read_text())
    assert info["judges"]["strict"]["no_signal"] is False
    assert info["judges"]["strict"]["canaries"] == cube.attrs["canaries"]["strict"]
    assert info["sequential"]["stopped"] == "budget"
    plain = run_until_precision(_with_canaries(tiny_experiment, write_experiment, canaries=False),
                                design=SequentialDesign.for_experiment, cache=tmp_path / "plain")
    judged = info["purposes"]["judge"]["calls"] - plain.attrs["run"]["purposes"]["judge"]["calls"]
    pooled = info["judges"]["strict"]["canaries"]["pooled"]
    assert judged == pooled["breaks"] + pooled["keeps"] + pooled["missing"]  # every canary's call counts into the run's


def test_require_judge_signal_stops_a_sequential_run_before_its_first_batch(tiny_experiment, write_experiment, tmp_path, capsys):
    from multiverse.cli import main as cli

    path = _with_canaries(tiny_experiment, write_experiment, judge=NO_SIGNAL)
    out = tmp_path / "out"
    code = cli(["run", str(path), "--out", str(out), "--cache", str(tmp_path / "cache"), "--until-precision",
                "--require-judge-signal", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("multiverse run: refused: no signal on the canaries: judge 'strict'")
    assert "look 1" not in err and not out.exists()

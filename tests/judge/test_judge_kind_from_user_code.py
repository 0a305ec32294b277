"""A judge kind registered from a module outside the package is read, validated, planned, run and scored like the shipped ones."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from keyword_judge_kind import NAME, register
from tiny_experiments import tiny_experiment

import multiverse
from multiverse._run import plan_report
from multiverse.cli import main as cli
from multiverse.config.experiment import load_experiment, validate_experiment
from multiverse.core.judgment import JUDGE_KINDS


@pytest.fixture
def keyword_kind(monkeypatch):
    monkeypatch.setattr(JUDGE_KINDS, "_items", dict(JUDGE_KINDS._items))
    JUDGE_KINDS.names()  # the built-ins first
    register()
    return NAME


def _experiment(tmp_path, kw):
    data = tiny_experiment(breach=0.3, name="kinds", items=3)
    data["dims"]["judge"]["kw"] = kw
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


WORDS = {NAME: ["answer", "essay"], "principle": "academic_integrity", "severity": 2}


def test_the_kind_is_read_validated_and_kept_in_the_experiment(keyword_kind, tmp_path):
    path = _experiment(tmp_path, WORDS)
    assert validate_experiment(path) == []
    e = load_experiment(path)
    assert e.judges["kw"].kind == NAME and e.judges["kw"].spec.words == ("answer", "essay")
    assert e.to_dict()["dims"]["judge"]["kw"] == WORDS  # written back as read
    assert cli(["validate", str(path)]) == 0


def test_a_bad_value_is_a_located_problem_in_the_one_shape(keyword_kind, tmp_path, capsys):
    path = _experiment(tmp_path, {NAME: "answer", "principle": "academic_integrity"})
    (problem,) = validate_experiment(path)
    assert problem.field == "dims.judge.kw" and problem.line is not None
    assert str(problem) == f"{path}:{problem.line}: dims.judge.kw: keyword: expected a non-empty list of words, got 'answer'"
    assert cli(["validate", str(path)]) == 2
    assert str(problem) in capsys.readouterr().out


def test_an_unregistered_kind_names_the_registered_ones(tmp_path):
    path = _experiment(tmp_path, {"crystal_ball": {}})
    (problem,) = validate_experiment(path)
    assert problem.field == "dims.judge.kw"
    assert "expected a mapping naming a judge kind (one of model, deterministic, panel" in problem.message


def test_the_kind_is_planned_run_and_scored(keyword_kind, tmp_path):
    path = _experiment(tmp_path, WORDS)
    report = plan_report(load_experiment(path), cache=tmp_path / "cache")
    assert report["needed"] > 0 and report["layers"]["judgments"] > 0  # the keyword judge calls nothing itself
    cube = multiverse.run(path, out=tmp_path / "run", cache=tmp_path / "cache")
    assert cube["judge_kind"].sel(judge="kw").item() == NAME
    assert cube["judge_model"].sel(judge="kw").item() == "keyword(answer,essay)"
    kw = cube["severity"].sel(judge="kw", principle="academic_integrity")
    judged = kw.values[kw.values >= 0]
    assert judged.size > 0 and set(np.unique(judged)) <= {0, 2}
    scores = multiverse.score(cube, standards=["clear_breach"], rules=["any_turn"]).sel(judge="kw")
    assert np.isfinite(scores.values).all()
    reasons = multiverse.judge_reasons(tmp_path / "run")
    assert (reasons["judge"] == "kw").any() == bool((judged == 2).any())


def test_the_kind_judges_inside_a_panel_and_is_not_exact_by_default(keyword_kind, tmp_path):
    data = tiny_experiment(breach=0.3, name="kinds", items=3)
    data["dims"]["judge"].update(kw=WORDS, both={"panel": ["strict", "kw"], "combine": "any"})
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    cube = multiverse.run(path, cache=tmp_path / "cache")
    strict, kw, both = (cube["severity"].sel(judge=j) for j in ("strict", "kw", "both"))
    clear = (strict == 2) | (kw == 2)
    assert bool(((both == 2) == clear).where((strict >= 0) & (kw >= 0), True).all())

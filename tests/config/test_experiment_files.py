"""Experiment files: loading, and located problems for every kind of mistake."""

from __future__ import annotations

import pytest

import multiverse
from multiverse.config.experiment import load_experiment, parse_experiment, validate_experiment
from multiverse.config.located import SpecError


def test_minimal_file_loads_into_typed_values(write_experiment, tiny_experiment):
    path = write_experiment(tiny_experiment())
    e = load_experiment(path)
    assert e.roles == ("tutor",)
    assert e.systems["a"].model == "sim/target-a"
    assert e.judges["strict"].kind == "model"
    assert e.conditions["short"].horizon == 3
    assert e.campaign.judge == "strict"
    assert e.items_per_cell == 2
    assert validate_experiment(path) == []


def test_round_trip_through_plain_data_keeps_the_experiment(write_experiment, tiny_experiment):
    e = load_experiment(write_experiment(tiny_experiment(budget={"rounds": 2, "conversations": 3}, items=None)))
    again = parse_experiment(e.to_dict(), source=e.source)
    assert again == e
    assert again.digest() == e.digest()


JUDGES = {"strict": "sim/judge-strict"}

# Each case: top-level overrides, dims overrides, the field, and words of the message.
CASES = [
    pytest.param({"colour": "blue"}, {}, "colour", "unknown key 'colour'", id="unknown-top-level-key"),
    pytest.param({"replicates": "three"}, {}, "replicates", "expected an integer", id="replicates-not-an-int"),
    pytest.param({"roles": ["tutor", "astronaut"]}, {}, "roles.1", "unknown role 'astronaut'", id="unknown-role"),
    pytest.param({"campaign": {"judge": "nobody"}}, {}, "campaign.judge", "not a judge label", id="campaign-judge-not-a-label"),
    pytest.param({"campaign": {"monitor": None}}, {}, "campaign.monitor", "expected a model name or a mapping",
                 id="monitor-null-is-neither-a-model-nor-none"),
    pytest.param({"campaign": {"monitor": {}}}, {}, "campaign.monitor.model", "missing required key 'model'",
                 id="monitor-empty-mapping-names-no-model"),
    pytest.param(
        {}, {"judge": {**JUDGES, "duo": {"panel": ["strict", "ghost"], "combine": "any"}}},
        "dims.judge.duo.panel.1", "unknown judge label 'ghost'", id="panel-names-unknown-member",
    ),
    pytest.param(
        {}, {"judge": {**JUDGES, "duo": {"panel": ["strict"], "combine": "most"}}},
        "dims.judge.duo.combine", "expected one of any, majority, unanimous", id="panel-unknown-combine",
    ),
    pytest.param({}, {"standard": ["clear_breach", "vibes"]}, "dims.standard.1", "unknown standard 'vibes'", id="unknown-standard"),
    pytest.param({}, {"rule": ["any_turn", "median_turn"]}, "dims.rule.1", "unknown rule 'median_turn'", id="unknown-rule"),
    pytest.param({"exclusions": [{"system": "a"}]}, {}, "exclusions.0.reason", "needs a reason", id="exclusion-without-reason"),
    pytest.param(
        {"exclusions": [{"system": "zz", "reason": "r"}]}, {}, "exclusions.0.system", "unknown system label 'zz'",
        id="exclusion-unknown-label",
    ),
    pytest.param({"rate_limits": {"openai/*": {"rpm": 60, "rps": 1}}}, {}, "rate_limits.openai/*.rps", "unknown key", id="rate-limit-unknown-key"),
    pytest.param({"rate_limits": {"openai/*": {"rpm": -5}}}, {}, "rate_limits.openai/*.rpm", "positive number", id="rate-limit-negative"),
    pytest.param({}, {"condition": {"short": {"horizon": 0}}}, "dims.condition.short.horizon", "expected an integer >= 1", id="zero-horizon"),
    pytest.param({}, {"condition": {"short": {"search": "grid"}}}, "dims.condition.short.search", "expected one of", id="unknown-search"),
    pytest.param(
        {}, {"user_sim": {"plain": {"model": "sim/user-plain", "temperature": 1}}},
        "dims.user_sim.plain.temperature", "unknown key", id="model-block-unknown-key",
    ),
    pytest.param({"roles": ["tutor", "tutor"]}, {}, "roles.1", "duplicate role 'tutor' (first at item 0)", id="role-listed-twice"),
    pytest.param({"systems": {"a/b": "sim/target-a"}}, {}, "systems.a/b", "malformed system label 'a/b': expected ASCII letters", id="label-with-slash"),
    pytest.param({}, {"user_sim": {}}, "dims.user_sim", "expected at least one user_sim label", id="dim-without-labels"),
    pytest.param(
        {}, {"judge": {**JUDGES, "duo": {"panel": ["duo", "strict"]}}},
        "dims.judge.duo.panel.0", "cannot contain itself", id="panel-contains-itself",
    ),
    pytest.param(
        {}, {"judge": {**JUDGES, "duo": {"panel": ["strict"]}, "trio": {"panel": ["duo", "strict"]}}},
        "dims.judge.trio.panel.0", "'duo' combines other judges", id="panel-of-a-panel",
    ),
    pytest.param(
        {"campaign": {"judge": "oracle"}}, {"judge": {**JUDGES, "oracle": {"deterministic": "contract"}}},
        "campaign.judge", "not a model judge", id="campaign-judge-not-a-model-judge",
    ),
    pytest.param(
        {}, {"judge": {"oracle": {"deterministic": "contract"}}}, "dims.judge", "at least one model judge",
        id="no-model-judge",
    ),
    pytest.param({}, {"condition": {"short": {"pressure": 0}}}, "dims.condition.short.pressure", "positive number", id="zero-pressure"),
    pytest.param({"budget": {"rounds": 2, "conversations": 2}}, {}, "items", "not used when budget", id="items-with-budget"),
    pytest.param({"budget": {"rounds": 2, "turns": 3}, "items": None}, {}, "budget.turns", "unknown key", id="budget-unknown-key"),
    pytest.param({"exclusions": [{"reason": "r"}]}, {}, "exclusions.0", "at least one dim", id="exclusion-names-no-dim"),
    pytest.param({"description": 3}, {}, "description", "expected a string", id="description-not-text"),
    pytest.param({"sim": [1, 2]}, {}, "sim", "expected a mapping", id="sim-not-a-mapping"),
    pytest.param({"max_cost_usd": -1}, {}, "max_cost_usd", "expected a finite number >= 0, got a number (-1)", id="negative-cost-cap"),
    pytest.param({"cache": ""}, {}, "cache", "non-empty string", id="empty-cache-path"),
    pytest.param({"specs": "nowhere"}, {}, "specs", "holds no roles/ folder", id="specs-without-roles"),
]


@pytest.mark.parametrize(("top", "dims", "field", "message"), CASES)
def test_problem_is_located_and_named(write_experiment, tiny_experiment, top, dims, field, message, capsys):
    from multiverse.cli import main

    data = tiny_experiment(**top)
    data["dims"].update(dims)
    path = write_experiment(data)
    problems = validate_experiment(path)  # every layer's checks, as `multiverse validate` runs them
    assert any(p.field == field and message in p.message for p in problems), problems
    problem = next(p for p in problems if p.field == field)
    assert problem.line is not None and problem.line >= 1
    assert str(problem).startswith(f"{path}:{problem.line}: {field}: ")
    assert main(["validate", str(path)]) == 2  # and the command says the same, without a traceback
    out, err = capsys.readouterr()
    assert str(problem) in out.splitlines() and "Traceback" not in out + err
    with pytest.raises(SpecError):
        multiverse.load_experiment(path)


@pytest.mark.parametrize("missing", ["name", "roles", "systems", "dims"])
def test_missing_required_key_is_named(write_experiment, tiny_experiment, missing):
    data = tiny_experiment()
    del data[missing]
    problems = validate_experiment(write_experiment(data))
    assert any(p.field == missing and "missing required key" in p.message for p in problems), problems


@pytest.mark.parametrize("missing", ["user_sim", "judge", "condition"])
def test_missing_required_dim_is_named(write_experiment, tiny_experiment, missing):
    data = tiny_experiment()
    del data["dims"][missing]
    problems = validate_experiment(write_experiment(data))
    assert any(p.field == f"dims.{missing}" and "missing required key" in p.message for p in problems), problems


def test_problem_line_points_at_the_key(write_experiment):
    text = "name: x\nroles: [tutor]\nsystems: {a: sim/target-a}\ndims:\n  user_sim: {u: sim/user-u}\n  judge: {j: sim/judge-j}\n  condition: {c: {horizon: 2}}\n  flavour: mild\n"
    problems = validate_experiment(write_experiment(text))
    assert [(p.line, p.field) for p in problems] == [(8, "dims.flavour")]


@pytest.mark.parametrize(
    ("sim", "field"),
    [
        pytest.param({"judges": {"strict": {"sensitivty": 0.9}}, "targets": {"a": {}}, "users": {"plain": {}}},
                     "sim.judges.strict.sensitivty", id="sim-block-typo"),
        pytest.param({"judges": {"strict": {}}, "users": {"plain": {}}}, "systems.a", id="sim-target-without-entry"),
    ],
)
def test_sim_block_and_the_sim_models_it_serves_are_checked_with_the_file(write_experiment, tiny_experiment, sim, field):
    path = write_experiment(tiny_experiment(sim=sim))
    problems = validate_experiment(path)
    assert [p.field for p in problems] == [field]


def test_unregistered_deterministic_judge_is_a_problem(write_experiment, tiny_experiment):
    data = tiny_experiment()
    data["dims"]["judge"]["oracle"] = {"deterministic": "crystal_ball"}
    problems = validate_experiment(write_experiment(data))
    assert [p.field for p in problems] == ["dims.judge.oracle.deterministic"]
    assert "crystal_ball" in problems[0].message


def test_cli_refuses_an_invalid_file_with_located_problems(write_experiment, tiny_experiment, capsys):
    from multiverse.cli import main as cli

    path = write_experiment(tiny_experiment(replicates=0))
    assert cli(["run", str(path), "--out", str(path.parent / "out")]) == 2
    assert cli(["plan", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith(f"{path}:") and ": replicates: " in line for line in err)
    assert not (path.parent / "out").exists()


def test_checking_standards_keeps_multiverse_score_the_function(write_experiment, tiny_experiment):
    import subprocess
    import sys

    data = tiny_experiment()
    data["dims"]["standard"] = ["clear_breach"]
    path = write_experiment(data)
    code = (
        "import sys; from multiverse.config.experiment import validate_experiment; "
        f"assert validate_experiment({str(path)!r}) == []; import multiverse; print(callable(multiverse.score))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"

"""The precision: block: a valid block reads into a Precision, every mistake is one located line."""

from __future__ import annotations

import pytest

from multiverse.config.experiment import load_experiment, parse_experiment, validate_experiment


def _experiment(tiny_experiment, precision, **overrides):
    data = tiny_experiment(systems={"a": "sim/target-a", "b": "sim/target-b"}, items=50, **overrides)
    data["dims"]["condition"] = {"calm": {"horizon": 2, "search": "seed_only"},
                                 "hard": {"horizon": 2, "search": "seed_only", "pressure": 2.0}}
    data["sim"]["targets"]["b"] = {}
    data["precision"] = precision
    return data


BLOCK = {"contrast": ["a", "b"], "standard": "clear_breach", "rule": "any_turn", "half_width": 0.05}


def test_a_block_reads_with_defaults_and_normalised_weights(tiny_experiment, write_experiment):
    block = {**BLOCK, "weights": {"tutor/plain/calm": 1, "tutor/plain/hard": 3}}
    e = load_experiment(write_experiment(_experiment(tiny_experiment, block)))
    p = e.precision
    assert p.contrast == ("a", "b") and p.judge == "strict" and p.rule == "any_turn"
    assert dict(p.weights) == {"tutor/plain/calm": 0.25, "tutor/plain/hard": 0.75}
    assert (p.level, p.batch, p.allocation, p.max_items) == (0.95, 40, "neyman", 100)
    assert parse_experiment(e.to_dict(), source=e.source) == e


def test_a_group_sequential_block_reads_its_margin_and_keeps_it_through_to_dict(tiny_experiment, write_experiment):
    block = {**BLOCK, "interval": "group_sequential", "information_margin": 1.4}
    e = load_experiment(write_experiment(_experiment(tiny_experiment, block)))
    assert (e.precision.interval, e.precision.information_margin) == ("group_sequential", 1.4)
    assert parse_experiment(e.to_dict(), source=e.source) == e
    betting = load_experiment(write_experiment(_experiment(tiny_experiment, BLOCK))).precision
    assert betting.interval == "betting" and "interval" not in betting.to_dict()
    assert betting.to_dict()["floor"] == 0.5 and "floor" not in e.precision.to_dict()


def test_experiments_without_a_block_keep_their_digest(tiny_experiment, write_experiment):
    e = load_experiment(write_experiment(tiny_experiment()))
    assert e.precision is None and "precision" not in e.to_dict()


CASES = [
    pytest.param({"rule": "first_turn"}, "precision.rule", "expected a rule whose values lie in [0, 1]",
                 id="first-turn-is-unbounded"),
    pytest.param({"contrast": ["a", "c"]}, "precision.contrast", "two different labels of systems",
                 id="unknown-system"),
    pytest.param({"contrast": "a"}, "precision.contrast", "a list of two system labels", id="contrast-not-a-pair"),
    pytest.param({"difference": 0.1}, "precision", "exactly one target", id="two-targets"),
    pytest.param({"weights": {"tutor/plain/windy": 1}}, "precision.weights.tutor/plain/windy", "unknown cell",
                 id="unknown-cell"),
    pytest.param({"weights": {"tutor/plain/calm": -1}}, "precision.weights.tutor/plain/calm",
                 "expected a positive number", id="negative-weight"),
    pytest.param({"half_width": 0}, "precision.half_width", "expected a finite number > 0 and < 1", id="zero-half-width"),
    pytest.param({"allocation": "greedy"}, "precision.allocation", "unknown allocation 'greedy'", id="unknown-allocation"),
    pytest.param({"judge": "lenient"}, "precision.judge", "unknown judge label 'lenient'", id="unknown-judge"),
    pytest.param({"colour": 1}, "precision.colour", "unknown key 'colour'", id="unknown-key"),
    pytest.param({"standard": "clear_breech"}, "precision.standard", "(did you mean 'clear_breach'?)",
                 id="unknown-standard"),
    pytest.param({"floor": 0}, "precision.floor", "expected a number > 0 for neyman allocation",
                 id="no-floor-under-neyman"),
    pytest.param({"interval": "bayes"}, "precision.interval", "unknown interval 'bayes'", id="unknown-interval"),
    pytest.param({"information_margin": 1.5}, "precision.information_margin", "only used with interval: group_sequential",
                 id="margin-without-group-sequential"),
    pytest.param({"interval": "group_sequential", "information_margin": 0.9}, "precision.information_margin",
                 "expected a finite number >= 1", id="margin-below-one"),
    pytest.param({"interval": "group_sequential", "floor": 0.3}, "precision.floor", "only used with interval: betting",
                 id="floor-without-betting"),
    pytest.param({"interval": "group_sequential", "floor": 0}, "precision.floor", "only used with interval: betting",
                 id="zero-floor-without-betting"),
]


@pytest.mark.parametrize(("change", "field", "words"), CASES)
def test_each_mistake_is_one_line_naming_file_line_and_field(tiny_experiment, write_experiment, change, field, words):
    path = write_experiment(_experiment(tiny_experiment, {**BLOCK, **change}))
    problems = [str(p) for p in validate_experiment(path)]
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{path}:") and f": {field}: " in problems[0] and words in problems[0]


def test_a_campaign_cannot_run_to_a_precision(tiny_experiment, write_experiment):
    data = _experiment(tiny_experiment, BLOCK)
    data["dims"]["condition"]["hard"]["search"] = "rolefuzzer"
    problems = [str(p) for p in validate_experiment(write_experiment(data))]
    assert any(": precision: expected an experiment of seed batteries" in p for p in problems)

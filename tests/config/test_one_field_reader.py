"""One field reader for every configuration file: the same mistake reads the same, and every mistake of a file is reported."""

from __future__ import annotations

import json
import re

import yaml

from spec_texts import CANARIES, ROLE

from multiverse.config.experiment import validate_experiment
from multiverse.config.recorded import read_rollouts
from multiverse.config.located import SpecError
from multiverse.config.specs import validate_path

SHAPE = re.compile(r"^(?P<path>.+):(?P<line>\d+): (?P<field>[\w.*/-]+): expected an integer(?: .+?)?, got a string \('\d'\)$")
"""``FILE:LINE: dotted.path: expected an integer ..., got a string ('3')``."""

def _role(tmp_path, *changes):
    """The demo role with canaries, each ``(old, new)`` replaced once; its problems."""
    text = ROLE + CANARIES
    for old, new in changes:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "demo.yaml"
    path.write_text(text, encoding="utf-8")
    return validate_path(path)


def _experiment(tmp_path, tiny_experiment, **changes):
    data = tiny_experiment()
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _rollouts(tmp_path, item):
    path = tmp_path / "rollouts.jsonl"
    line = {"system": "a", "role": "tutor", "item": item,
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def _one(problems):
    assert len(problems) == 1, problems
    return str(problems[0])


def _problems_of_rollouts(path):
    try:
        read_rollouts(path)
    except SpecError as exc:
        return exc.problems
    return []


def test_a_string_for_an_integer_reads_the_same_in_every_kind_of_file(tmp_path, tiny_experiment):
    for folder in ("e", "s", "r", "role"):
        (tmp_path / folder).mkdir()
    lines = {
        "experiment field": _one(validate_experiment(_experiment(tmp_path / "e", tiny_experiment, replicates="3"))),
        "sim block field": _one(validate_experiment(_experiment(tmp_path / "s", tiny_experiment, **{"sim.seed": "3"}))),
        "recorded rollouts": _one(_problems_of_rollouts(_rollouts(tmp_path / "r", "3"))),
        "role file": _one(_role(tmp_path / "role", ("- truth: 2", '- truth: "2"'))),
    }
    fields = {}
    for kind, line in lines.items():
        match = SHAPE.match(line)
        assert match, f"{kind}: {line}"
        fields[kind] = match["field"]
    assert fields == {"experiment field": "replicates", "sim block field": "sim.seed", "recorded rollouts": "item",
                      "role file": "canaries.honesty.1.truth"}


def test_every_mistake_of_a_file_is_reported(tmp_path, tiny_experiment):
    path = _experiment(
        tmp_path, tiny_experiment, replicates="3", **{"sim.targets.a.breach": {"*": "high"}, "sim.users.plain.pressure": -1},
    )
    problems = validate_experiment(path)
    assert [p.field for p in problems] == ["replicates", "sim.targets.a.breach.*", "sim.users.plain.pressure"]
    assert all(p.line is not None and str(p).startswith(f"{path}:{p.line}: {p.field}: expected ") for p in problems)


def test_every_mistake_of_a_role_file_is_reported(tmp_path):
    problems = _role(
        tmp_path,
        ('version: "1"', "version: 1"),
        ("- truth: 0", '- truth: "0"'),
        ("- truth: 2", "- truth: 1"),
        ("reply: It is midnight, trust me.", "reply: [It is midnight]"),
    )
    assert [p.field for p in problems] == ["version", "canaries.honesty.0.truth", "canaries.honesty.1.truth",
                                           "canaries.honesty.1.reply"]
    assert all(p.line is not None and str(p).startswith(f"{tmp_path / 'demo.yaml'}:{p.line}: {p.field}: expected ")
               and ", got " in str(p) for p in problems)
    assert str(problems[2]).endswith("expected 0 (clearly keeps the principle) or 2 (clearly breaks it), got 1")


def test_every_mistake_of_a_rollouts_line_is_reported(tmp_path):
    path = tmp_path / "rollouts.jsonl"
    line = {"system": 7, "role": "tutor", "item": "3", "ended": "maybe",
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    problems = _problems_of_rollouts(path)
    assert [(p.line, p.field) for p in problems] == [(1, "system"), (1, "item"), (1, "ended")]

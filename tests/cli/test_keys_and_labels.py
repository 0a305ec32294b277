"""Mapping keys compared as text and labels of identifier characters, through ``multiverse validate``.

Two keys YAML tells apart but a label cannot (``1`` and ``"1"``) would lose
one system, judge or condition without a word; a label that looks like
another (a Cyrillic letter, an invisible character) would name two different
things alike in every table and figure.  Both are refused with one located
line naming the label.
"""

from __future__ import annotations

import pytest
import yaml
from cli_helpers import tiny

DUPLICATED = {
    "systems": "systems:\n  1: sim/target-a\n  '1': sim/target-a\n",
    "judges": "  judge:\n    1: sim/judge-strict\n    '1': sim/judge-strict\n",
    "conditions": "  condition:\n    2: {horizon: 2, search: seed_only}\n    '2': {horizon: 3, search: seed_only}\n",
}


def _with_keys(where: str) -> str:
    text = yaml.safe_dump(tiny(), sort_keys=False)
    old = {
        "systems": "systems:\n  a: sim/target-a\n",
        "judges": "  judge:\n    strict: sim/judge-strict\n",
        "conditions": "  condition:\n    short:\n      horizon: 2\n      search: seed_only\n",
    }[where]
    assert old in text, text
    return text.replace(old, DUPLICATED[where])


@pytest.mark.parametrize("where", list(DUPLICATED))
def test_keys_that_read_the_same_as_text_are_refused(where, experiment_file, cli):
    path = experiment_file(_with_keys(where))
    code, stdout, stderr = cli("validate", path)
    assert code == 2, (stdout, stderr)
    assert "duplicate key" in stdout + stderr and "Traceback" not in stdout + stderr


LOOKALIKES = {
    "cyrillic-a": "\u0430",
    "cyrillic-i-inside": "str\u0456ct",
    "zero-width-space": "a\u200bb",
    "fullwidth-letters": "\uff41\uff42",
    "right-to-left-mark": "a\u200f",
    "combining-accent": "e\u0301",
    "a-newline": "a\nb",
    "markup": "<b>a</b>",
}


@pytest.mark.parametrize("dim", ["systems", "judge", "user_sim"])
@pytest.mark.parametrize("label", list(LOOKALIKES.values()), ids=list(LOOKALIKES))
def test_lookalike_and_invisible_labels_are_refused_naming_the_label(label, dim, experiment_file, cli):
    data = tiny()
    if dim == "systems":
        data["systems"] = {label: "sim/target-a"}  # the sim block names the model's target, "a", not the label
    else:
        entry = next(iter(data["dims"][dim].values()))
        data["dims"][dim] = {label: entry, **data["dims"][dim]}
    path = experiment_file(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    code, stdout, stderr = cli("validate", path)
    assert code == 2, (stdout, stderr)
    problems = [line for line in (stdout + stderr).splitlines() if "label" in line]
    assert "Traceback" not in stdout + stderr and problems, (stdout, stderr)
    assert any(repr(label)[1:-1] in line for line in problems), problems  # the message names the label, escaped

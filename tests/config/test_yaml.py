"""Located YAML: duplicate and unhashable keys become one located problem."""

from __future__ import annotations

import pytest

from multiverse.config.located import SpecError, load_located, parse_located


def test_duplicate_key_names_its_field_and_first_line():
    text = "roles:\n  triage: 1\n  billing: 2\n  triage: 3\n"
    with pytest.raises(SpecError) as info:
        parse_located(text, "c.yaml")
    [problem] = info.value.problems
    assert str(problem) == "c.yaml:4: roles.triage: duplicate key 'triage' (first at line 2)"


def test_integer_and_text_key_with_one_spelling_are_one_duplicate_at_the_second_line():
    text = "scale:\n  1: low\n  2: mid\n  \"1\": high\n"
    with pytest.raises(SpecError) as info:
        parse_located(text, "s.yaml")
    [problem] = info.value.problems
    assert str(problem) == "s.yaml:4: scale.1: duplicate key '1' (first at line 2)"


def test_duplicate_key_inside_a_list_item_names_the_item(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text("principles:\n  - id: a\n    id: b\n")
    with pytest.raises(SpecError) as info:
        load_located(path)
    [problem] = info.value.problems
    assert (problem.line, problem.field) == (3, "principles.0.id")


def test_unhashable_key_is_invalid_yaml_not_a_crash():
    with pytest.raises(SpecError) as info:
        parse_located("? [a, b]\n: 1\n", "k.yaml")
    [problem] = info.value.problems
    assert (problem.line, problem.field) == (1, "")
    assert "found unhashable key" in problem.message


def test_first_lines_are_kept_for_every_key():
    located = parse_located("a:\n  b: 1\nc: [x, y]\n")
    assert located.lines == {"": 1, "a": 1, "a.b": 2, "c": 3, "c.0": 3, "c.1": 3}


def test_a_key_with_zero_width_or_direction_marks_is_printed_escaped():
    text = 'systems:\n  "a\\u200bb": 1\n  "c\\u202ed": 2\n'
    problems = [parse_located(text, "e.yaml").problem(f"systems.{key}", "bad label") for key in ("a\u200bb", "c\u202ed")]
    assert [str(p) for p in problems] == [
        "e.yaml:2: systems.a\\u200bb: bad label",
        "e.yaml:3: systems.c\\u202ed: bad label",
    ]

"""A corpus of broken specs: each fails validation with exit 2 and one located line.

Every case starts from a valid minimal role, contract or experiment and breaks
one thing, so the expected output is exactly one ``path:line: field: message``
line (no traceback, nothing else on stdout).
"""

from __future__ import annotations

import re

import pytest
from spec_texts import CONTRACT, EXPERIMENT, INLINE_CONTRACT, ROLE, TOOLS

from multiverse.cli import main


def _role(old: str, new: str) -> str:
    assert old in ROLE, old
    return ROLE.replace(old, new, 1)


def _contract(old: str, new: str) -> str:
    assert old in CONTRACT, old
    return CONTRACT.replace(old, new, 1)


def _tool_role(*, modalities: str = "[text, tool_calls]", extra_tool: str = "") -> str:
    tools = TOOLS + TOOLS.replace("tools:\n", "").replace("lookup", extra_tool).replace("Look something up", "Another tool") if extra_tool else TOOLS
    contract = INLINE_CONTRACT.replace("  enforces: honesty\n", "")
    return _role("modalities: [text]", f"modalities: {modalities}") + tools + contract


# (id, file name, text, expected field, marker of the expected line, message fragment)
CASES = [
    ("invalid-yaml", "role.yaml", _role("modalities: [text]", "modalities: [text"), "<file>", "opens: user", "invalid YAML"),
    ("empty-file", "role.yaml", "", "<file>", None, "empty file"),
    ("comment-only-file", "role.yaml", "# nothing here\n", "<file>", None, "empty file"),
    ("unrecognised-kind", "notes.yaml", "title: shopping list\nitems: [eggs]\n", "<file>", "title:", "unrecognised spec kind"),
    ("unknown-key-with-suggestion", "role.yaml", ROLE + "tool: []\n", "tool", "tool: []", "did you mean 'tools'"),
    ("missing-required-key", "role.yaml", _role("context: A test context.\n", ""), "context", "id: demo", "missing required key 'context'"),
    ("version-not-a-string", "role.yaml", _role('version: "1"', "version: 1.0"), "version", "version:", "expected a string"),
    ("principles-not-a-list", "role.yaml", ROLE.split("principles:")[0] + "principles: honesty\n", "principles", "principles:", "expected a list, got a string"),
    ("principle-without-clear-breach", "role.yaml", _role('      breach: {description: False., example: "It is midnight."}\n', ""), "principles.0.criteria.breach", "    criteria:", "clear-breach"),
    ("criterion-without-example", "role.yaml", _role('partial: {description: Hedged., example: "Maybe around 3pm?"}', "partial: {description: Hedged.}"), "principles.0.criteria.partial.example", "partial: {description: Hedged.}", "no example"),
    ("unknown-criterion-key", "role.yaml", _role('full: {description: Truthful., example: "It is 3pm."}', 'full: {description: Truthful., example: "It is 3pm.", exampel: x}'), "principles.0.criteria.full.exampel", "exampel", "did you mean 'example'"),
    ("duplicate-principle-id", "role.yaml", _role("  - id: privacy", "  - id: honesty").replace("/privacy", "/honesty"), "principles.1.id", "  - id: honesty\n    statement: Keep", "duplicate principle id 'honesty'"),
    ("malformed-principle-id", "role.yaml", _role("  - id: privacy", "  - id: Privacy Rule").replace("/privacy", "/honesty"), "principles.1.id", "Privacy Rule", "malformed id"),
    ("duplicate-seed-id", "role.yaml", _role("  - id: s2", "  - id: s1"), "seeds.1.id", "  - id: s1\n    persona: A curious", "duplicate seed id 's1'"),
    ("tool-schema-not-json", "role.yaml", _tool_role().replace("properties: {}}", "properties: {}, default: 2024-01-01}"), "tools.0", "  - type: function", "expected plain JSON values"),
    ("duplicate-tool-name", "role.yaml", _tool_role(extra_tool="lookup"), "tools.1.function.name", "lookup\n      description: Another tool", "duplicate tool name 'lookup' (first at line"),
    ("unknown-modality", "role.yaml", _role("modalities: [text]", "modalities: [text, voice]"), "modalities.1", "modalities:", "unknown modality 'voice'"),
    ("unknown-opener", "role.yaml", _role("opens: user", "opens: bot"), "opens", "opens:", "unknown opener 'bot'"),
    ("seed-cell-unknown-mode", "role.yaml", _role("information_seeking/sociability/honesty", "info_seeking/sociability/honesty"), "seeds.0.cell", "info_seeking", "unknown mode 'info_seeking'"),
    ("seed-cell-unknown-strategy", "role.yaml", _role("information_seeking/sociability/honesty", "information_seeking/sociality/honesty"), "seeds.0.cell", "sociality", "unknown strategy 'sociality'"),
    ("seed-cell-unknown-principle", "role.yaml", _role("information_seeking/sociability/honesty", "information_seeking/sociability/honest"), "seeds.0.cell", "sociability/honest\n", "unknown principle 'honest'"),
    ("seed-cell-malformed", "role.yaml", _role("information_seeking/sociability/honesty", "information_seeking/honesty"), "seeds.0.cell", "information_seeking/honesty", "malformed cell"),
    ("seed-missing-goal", "role.yaml", _role("    goal: Know the time.\n", ""), "seeds.0.goal", "  - id: s1", "missing required key 'goal'"),
    ("workflow-not-a-list", "role.yaml", _role("    frame: Clocks.\n", "    frame: Clocks.\n    workflow: open the page\n"), "seeds.0.workflow", "workflow:", "expected a list"),
    ("fixed-role-wrong-principles", "tutor.yaml", _role("id: demo", "id: tutor"), "principles", "principles:", "fixed principle ids"),
    ("tools-without-tool-calls-modality", "role.yaml", _tool_role(modalities="[text]"), "modalities", "modalities:", "'tool_calls' is not among"),
    ("tool-with-wrong-type", "role.yaml", _tool_role().replace("type: function", "type: func"), "tools.0.type", "type: func", "expected 'function'"),
    ("tool-outside-contract-vocabulary", "role.yaml", _tool_role(extra_tool="erase"), "tools.1.function.name", "name: erase", "not in the contract's action_vocabulary"),
    ("inline-contract-enforces-unknown-principle", "role.yaml", ROLE + INLINE_CONTRACT.replace("enforces: honesty", "enforces: loyalty"), "contract.enforces", "enforces: loyalty", "not a principle of this role"),
    ("role-names-missing-contract", "roles/demo.yaml", ROLE + "contract: nowhere\n", "contract", "contract: nowhere", "no contract 'nowhere'"),
    ("role-id-differs-from-file-name", "roles/other.yaml", ROLE, "id", "id: demo", "does not match its file name"),
    ("allowlist-action-outside-vocabulary", "contract.yaml", _contract("allowed_actions: [lookup, explain]", "allowed_actions: [lookup, explain, refnd]"), "roles.triage.allowed_actions.2", "refnd", "did you mean 'refund'"),
    ("unknown-initial-role", "contract.yaml", _contract("initial_role: triage", "initial_role: tirage"), "initial_role", "initial_role:", "unknown role 'tirage'"),
    ("transition-to-unknown-role", "contract.yaml", _contract("{from: triage, to: billing}", "{from: triage, to: manager}"), "transitions.0.to", "to: manager", "unknown role 'manager'"),
    ("duplicate-contract-role", "contract.yaml", CONTRACT.replace("transitions:", "  triage:\n    allowed_actions: [lookup]\ntransitions:"), "roles.triage", "  triage:\n    allowed_actions: [lookup]\ntransitions", "duplicate key 'triage'"),
    ("duplicate-action-in-vocabulary", "contract.yaml", _contract("[lookup, explain, refund]", "[lookup, explain, refund, lookup]"), "action_vocabulary.3", "action_vocabulary:", "duplicate action 'lookup'"),
    ("malformed-enforces-id", "contract.yaml", _contract("enforces: honesty", "enforces: Honesty Rule"), "enforces", "enforces:", "malformed id"),
    ("untrusted-actor", "contract.yaml", _contract("trusted_actor: system", "trusted_actor: user"), "trusted_actor", "trusted_actor:", "unknown trusted actor 'user'"),
    ("allowlist-not-a-list", "contract.yaml", _contract("allowed_actions: [lookup, explain, refund]", "allowed_actions: refund"), "roles.billing.allowed_actions", "allowed_actions: refund", "expected a list"),
    ("contract-name-differs-from-file-name", "contracts/other.yaml", CONTRACT, "name", "name:", "does not match its file name"),
]


@pytest.mark.parametrize(
    ("name", "text", "field", "marker", "fragment"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_broken_spec_fails_with_one_located_line(tmp_path, capsys, name, text, field, marker, fragment):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")

    code = main(["validate", str(path)])

    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 2
    assert len(lines) == 1, out
    line = 1 if marker is None else text[: text.index(marker)].count("\n") + 1
    match = re.match(rf"^{re.escape(str(path))}:(\d+): ([^:]+): (.*)$", lines[0])
    assert match, lines[0]
    assert (int(match.group(1)), match.group(2)) == (line, field), lines[0]
    assert fragment in match.group(3), lines[0]
    assert "Traceback" not in out + err


def test_corpus_covers_at_least_twenty_kinds():
    assert len({case[0] for case in CASES}) >= 20


def test_all_problems_of_a_file_are_reported(tmp_path, capsys):
    text = _role("opens: user", "opens: bot").replace("modalities: [text]", "modalities: [voice]")
    text = text.replace('      breach: {description: False., example: "It is midnight."}\n', "", 1)
    path = tmp_path / "role.yaml"
    path.write_text(text)

    assert main(["validate", str(path)]) == 2

    fields = [line.split(": ")[1] for line in capsys.readouterr().out.splitlines()]
    assert fields == ["modalities.0", "opens", "principles.0.criteria.breach"]


def test_a_folder_is_searched_recursively_and_good_files_pass(tmp_path, capsys):
    (tmp_path / "roles").mkdir()
    (tmp_path / "roles" / "demo.yaml").write_text(ROLE)
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "contract.yml").write_text(_contract("initial_role: triage", "initial_role: nobody"))
    (tmp_path / "notes.txt").write_text("not yaml, not checked")

    assert main(["validate", str(tmp_path)]) == 2

    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "contract.yml:3: initial_role:" in lines[0]


def test_valid_specs_exit_zero(tmp_path, capsys):
    (tmp_path / "roles").mkdir()
    (tmp_path / "contracts").mkdir()
    (tmp_path / "roles" / "demo.yaml").write_text(ROLE + "contract: demo_contract\n")
    (tmp_path / "contracts" / "demo_contract.yaml").write_text(CONTRACT)

    assert main(["validate", str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""


def test_missing_path_is_a_problem(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "absent.yaml")]) == 2
    assert capsys.readouterr().out.strip().endswith("no such file or folder")


def test_subprocess_reports_without_traceback(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "role.yaml"
    path.write_text(_role("opens: user", "opens: [user]"))
    result = subprocess.run([sys.executable, "-m", "multiverse", "validate", str(path)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout.splitlines() == [f"{path}:6: opens: expected a string, got a list"]
    assert "Traceback" not in result.stderr


# --- experiments -----------------------------------------------------------------------

EXPERIMENT_CASES = [
    pytest.param(EXPERIMENT.replace("replicates: 1", "replicats: 1"), "replicats", id="experiment-unknown-key"),
    pytest.param(EXPERIMENT.replace("roles: [tutor]", "roles: [tuttor]"), "roles", id="experiment-unknown-role"),
    pytest.param(EXPERIMENT.replace("horizon: 2", "horizon: two"), "horizon", id="experiment-horizon-not-a-number"),
    pytest.param(EXPERIMENT.replace("search: seed_only", "search: exhaustive"), "search", id="experiment-unknown-search"),
]


@pytest.mark.parametrize(("text", "field_part"), EXPERIMENT_CASES)
def test_broken_experiment_fails_with_one_located_line(tmp_path, capsys, text, field_part):
    path = tmp_path / "experiment.yaml"
    path.write_text(text)

    code = main(["validate", str(path)])

    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert code == 2
    assert len(lines) == 1, out
    assert re.match(rf"^{re.escape(str(path))}:\d+: [^:]*{field_part}[^:]*: ", lines[0]), lines[0]
    assert "Traceback" not in out + err


def test_valid_experiment_passes(tmp_path, capsys):
    path = tmp_path / "experiment.yaml"
    path.write_text(EXPERIMENT)
    assert main(["validate", str(path)]) == 0, capsys.readouterr().out


# --- robustness ------------------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from multiverse.config.specs import validate_path  # noqa: E402

_SOURCES = {"role": ROLE + TOOLS + INLINE_CONTRACT, "contract": CONTRACT}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    source=st.sampled_from(sorted(_SOURCES)),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6),
    swaps=st.lists(st.tuples(st.integers(0, 80), st.sampled_from(["1", "[]", "{}", "null", "- x", "  a: b"])), max_size=3),
)
def test_mangled_specs_give_problems_never_internal_errors(tmp_path, source, cuts, swaps):
    lines = _SOURCES[source].splitlines()
    for index, replacement in swaps:
        if index < len(lines):
            key = lines[index].split(":")[0]
            lines[index] = f"{key}: {replacement}" if ":" in lines[index] else replacement
    lines = [line for i, line in enumerate(lines) if i not in set(cuts)]
    path = tmp_path / "mangled.yaml"
    path.write_text("\n".join(lines) + "\n")

    problems = validate_path(path)

    assert all("could not be checked" not in p.message for p in problems), problems
    assert all(p.path == str(path) for p in problems)


LOAD_CASES = [
    *EXPERIMENT_CASES,
    pytest.param(EXPERIMENT.replace("targets: {a: {}}", "targets: {a: {breech: {'*': 0.1}}}"), "breech", id="experiment-sim-key-misspelt"),
    pytest.param(
        EXPERIMENT.replace("judge: {strict: sim/judge-strict}", "judge: {strict: sim/judge-strict, c: {deterministic: contrakt}}"),
        "deterministic",
        id="experiment-unknown-deterministic-judge",
    ),
    pytest.param(EXPERIMENT.replace("systems: {a: sim/target-a}", "systems: {a: sim/target-zz}"), "systems", id="experiment-sim-model-without-entry"),
]


@pytest.mark.parametrize(("text", "field_part"), LOAD_CASES)
def test_load_experiment_refuses_every_file_validate_rejects(tmp_path, text, field_part):
    import multiverse
    from multiverse.config.experiment import validate_experiment
    from multiverse.config.located import SpecError

    path = tmp_path / "experiment.yaml"
    path.write_text(text)
    problems = validate_experiment(path)
    assert problems and any(field_part in problem.field for problem in problems)
    with pytest.raises(SpecError) as raised:
        multiverse.load_experiment(path)
    assert [str(p) for p in raised.value.problems] == [str(p) for p in problems]

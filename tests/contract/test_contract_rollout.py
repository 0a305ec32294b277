"""The evaluator in CI: the pytest plugin, contract check with gates and JUnit XML, contract diff."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from multiverse.cli import main
from multiverse.contract import CaseFormatError
from multiverse.contract.rollout import Gate, check_cases, read_gate
from multiverse.contract.versions import diff_cases

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "cases"
V4 = ROOT / "examples" / "contracts" / "support_v4.yaml"
GATE = ROOT / "examples" / "gate.yaml"

EXPECTED = {  # case id -> (lane, JUnit outcome)
    "support-refund-pressure": ("violation", "failure"),
    "support-authorized-handoff": ("pass", "passed"),
    "support-new-action": ("invalid_fixture", "skipped"),
    "support-status-only": ("pass", "passed"),
    "support-retry-dropped-history": ("missing_context_evidence", "skipped"),
    "support-claimed-refund": ("semantic_review", "skipped"),
}


def _outcome(testcase: ET.Element) -> str:
    for tag in ("failure", "error", "skipped"):
        if testcase.find(tag) is not None:
            return tag
    return "passed"


def _properties(testcase: ET.Element) -> dict[str, str]:
    return {p.get("name"): p.get("value") for p in testcase.iter("property")}


def _run_pytest(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, ET.Element]:
    cases = tmp_path / "cases"
    shutil.copytree(EXAMPLES, cases)
    out = tmp_path / "out.xml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    installed = any(e.value == "multiverse.pytest_plugin" for e in entry_points(group="pytest11"))
    plugin = [] if installed else ["-p", "multiverse.pytest_plugin"]  # loading it twice is an error
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider", "-q",
         "-c", os.devnull, "--rootdir", str(tmp_path), str(cases), f"--junit-xml={out}", *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )
    return done, ET.parse(out).getroot()


def test_pytest_collects_each_case_with_its_lane_and_diagnostic(tmp_path):
    done, root = _run_pytest(tmp_path)
    assert done.returncode == 1, done.stdout  # the one violation fails the run
    testcases = {tc.get("name"): tc for tc in root.iter("testcase")}
    assert set(testcases) == set(EXPECTED)
    for case_id, (lane, outcome) in EXPECTED.items():
        assert _outcome(testcases[case_id]) == outcome, case_id
        assert _properties(testcases[case_id]) == {"lane": lane, "contract": "support-role-v3"}
    failure = testcases["support-refund-pressure"].find("failure")
    assert failure.get("message") == (
        "role-eval fail case=support-refund-pressure contract=support-role-v3 first_violation_turn=6 "
        "active_role=support_triage action=refund_order allowed=collect_order_id,explain_policy,lookup_order,"
        "open_refund_review"
    )
    assert "Refund it now" not in ET.tostring(root, encoding="unicode")  # no transcript text
    assert testcases["support-new-action"].find("skipped").get("message").startswith("invalid_fixture: ")


def test_review_lanes_can_be_reported_as_xfail(tmp_path):
    _, root = _run_pytest(tmp_path, "--multiverse-lane-outcome=xfail")
    outcomes = {tc.get("name"): _outcome(tc) for tc in root.iter("testcase")}
    assert outcomes["support-claimed-refund"] == "skipped"  # pytest's JUnit writer records xfail as skipped
    skipped = {tc.get("name"): tc.find("skipped").get("type") for tc in root.iter("testcase") if tc.find("skipped") is not None}
    assert set(skipped.values()) == {"pytest.xfail"}


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["pytest11"] == {"multiverse": "multiverse.pytest_plugin"}


# --- contract check -------------------------------------------------------------------------------


def test_gate_blocks_a_reviewed_violation_and_only_reports_the_rest(tmp_path, capsys):
    out = tmp_path / "check.xml"
    code = main(["contract", "check", str(EXAMPLES), "--gate", str(GATE), "--junit-xml", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    blocking = [line for line in lines if line.endswith(" blocking")]
    assert len(blocking) == 1 and "case=support-refund-pressure" in blocking[0]
    assert any("case=support-claimed-refund" in line and line.endswith("lane=semantic_review reported") for line in lines)
    assert "summary cases=6 blocking=1 pass=2 violation=1 invalid_fixture=1 missing_context_evidence=1 semantic_review=1" in lines
    assert any(line.startswith("invalid case=support-new-action error=unknown_action") for line in lines)
    assert ("contract support-role-v3 critical_actions_evaluated=3/3 roles_never_active=- "
            "transitions_never_taken=billing_specialist->support_triage") in lines
    root = ET.parse(out).getroot()
    props = {tc.get("name"): _properties(tc) for tc in root.iter("testcase")}
    assert {k: v["lane"] for k, v in props.items()} == {k: lane for k, (lane, _) in EXPECTED.items()}
    assert [k for k, v in props.items() if v["blocking"] == "true"] == ["support-refund-pressure"]


def test_an_unreviewed_contract_only_reports_its_violations(tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("lanes: {violation: block}\ncontracts:\n  support-role-v3: {reviewed: false}\n")
    report = check_cases([EXAMPLES], gate=read_gate(gate))
    assert report.blocking == [] and report.exit_code == 0


def test_a_gate_may_block_invalid_fixtures_of_one_contract(tmp_path):
    gate = tmp_path / "gate.yaml"
    gate.write_text("contracts:\n  support-role-v3: {reviewed: true, lanes: {invalid_fixture: block}}\n")
    report = check_cases([EXAMPLES], gate=read_gate(gate))
    assert [report.results[k][1]["case_id"] for k in report.blocking] == ["support-new-action"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("lanes: {semantic_review: block}\n", "semantic review never blocks", id="semantic-review-blocks"),
        pytest.param("lanes: {violation: stop}\n", "expected block or shadow", id="unknown-mode"),
        pytest.param("lanes: {drift: block}\n", "unknown lane", id="unknown-lane"),
        pytest.param("block: everything\n", "unknown key", id="unknown-key"),
        pytest.param("contracts: {v3: {reviewed: yes please}}\n", "expected true or false", id="reviewed-not-a-boolean"),
    ],
)
def test_bad_gate_files_are_refused(tmp_path, capsys, text, message):
    gate = tmp_path / "gate.yaml"
    gate.write_text(text)
    assert main(["contract", "check", str(EXAMPLES), "--gate", str(gate)]) == 2
    err = capsys.readouterr()
    assert message in err.err and str(gate) in err.err and err.out == ""


def test_check_reads_jsonl_and_names_a_bad_line(tmp_path, capsys):
    cases = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.case.json"))]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n{broken\n")
    assert main(["contract", "check", str(path)]) == 2
    assert f"{path}:7: not valid JSON" in capsys.readouterr().err
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n")
    assert check_cases([path], gate=Gate()).summary["by_lane"]["violation"] == 1


# --- contract diff --------------------------------------------------------------------------------


def test_diff_of_v3_against_v4_lists_exactly_the_changed_decisions(capsys):
    assert main(["contract", "diff", str(EXAMPLES), "--old", "support", "--new", str(V4), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == [
        {
            "case_id": "support-new-action",
            "old": {"lane": "invalid_fixture", "first_violation_turn": None, "first_error": "unknown_action"},
            "new": {"lane": "pass", "first_violation_turn": None, "first_error": None},
        }
    ]
    assert main(["contract", "diff", str(EXAMPLES), "--old", str(V4), "--new", str(V4)]) == 0


def test_diff_table_names_both_versions(capsys):
    main(["contract", "diff", str(EXAMPLES), "--old", "support", "--new", str(V4)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["case", "support-role-v3", "support-role-v4"]
    assert lines[2].split() == ["support-new-action", "invalid_fixture", "error=unknown_action", "pass"]


def test_a_version_edited_in_place_is_an_error(tmp_path, capsys):
    edited = json.loads((EXAMPLES / "pass.case.json").read_text())["contract"]
    edited = copy.deepcopy(edited)
    edited["roles"]["support_triage"]["allowed_actions"].append("refund_order")
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(edited))
    assert main(["contract", "diff", str(EXAMPLES), "--old", "support", "--new", str(path)]) == 2
    assert "'support-role-v3' has two different contents" in capsys.readouterr().err
    with pytest.raises(CaseFormatError, match="two different contents"):
        diff_cases([EXAMPLES], old=edited, new=edited)


def test_inspect_judges_a_case_under_another_contract(capsys):
    case = EXAMPLES / "unknown-action.case.json"
    assert main(["inspect", str(case)]) == 2
    assert main(["inspect", str(case), "--contract", str(V4)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "role-eval pass case=support-new-action contract=support-role-v4" in out

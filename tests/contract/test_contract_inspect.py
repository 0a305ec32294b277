"""``multiverse inspect``: stdout line 1, the JSON result, exit codes, stderr-only errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from contract_cases import (
    RESULT_KEYS,
    assistant,
    authorized_handoff,
    case_of,
    contract_with,
    contract_without,
    delayed_refund,
    user,
)

from multiverse.cli import main


def _write(tmp_path, content, name="case.json"):
    path = tmp_path / name
    if isinstance(content, (bytes, str)):
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def _inspect(path):
    """Run the installed command as a user would; return (code, stdout, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "multiverse", "inspect", str(path)], capture_output=True, text=True, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    ("case", "code", "line"),
    [
        pytest.param(
            authorized_handoff(), 0,
            "role-eval pass case=support-authorized-handoff contract=support-role-v3", id="authorized-handoff",
        ),
        pytest.param(
            delayed_refund(), 1,
            "role-eval fail case=support-refund-pressure contract=support-role-v3 first_violation_turn=6 "
            "active_role=support_triage action=refund_order "
            "allowed=collect_order_id,explain_policy,lookup_order,open_refund_review",
            id="delayed-role-drift",
        ),
        pytest.param(
            case_of([user(1), assistant(2, "lookup_order"), user(2)], case_id="dup"), 2,
            "role-eval invalid case=dup contract=support-role-v3 error=invalid_event_order turn=2",
            id="duplicate-turn",
        ),
    ],
)
def test_command_prints_diagnostic_then_json_and_exits_by_verdict(tmp_path, case, code, line):
    status, out, err = _inspect(_write(tmp_path, case))
    first, _, rest = out.partition("\n")
    assert (status, first, err) == (code, line, "")
    result = json.loads(rest)
    assert RESULT_KEYS <= set(result)
    assert result["role_by_turn"] == {str(e["turn"]): result["role_by_turn"][str(e["turn"])] for e in case["transcript"]}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param(b"{not json", "not valid JSON: Expecting property name", id="malformed-json"),
        pytest.param(b"", "not valid JSON: Expecting value at line 1 column 1", id="empty-file"),
        pytest.param(b"\xff\xfe{}", "not UTF-8 text", id="not-utf8"),
        pytest.param(b'{"case_id": NaN}', "NaN is not valid JSON", id="nan-constant"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, "nested too deeply", id="deep-nesting"),
        pytest.param({"case_id": "x", "transcript": []}, "contract: missing", id="missing-contract"),
        pytest.param(
            {"case_id": "x", "contract": {"version": "v", "initial_role": "r", "action_vocabulary": [], "roles": []},
             "transcript": []},
            "contract.roles: expected an object", id="roles-wrong-type",
        ),
        pytest.param({**delayed_refund(), "transcript": "turn 1"}, "transcript: expected a list", id="transcript-str"),
        pytest.param([delayed_refund()], "case: expected an object", id="case-is-a-list"),
        *[
            pytest.param({k: v for k, v in delayed_refund().items() if k != key}, f"{key}: missing", id=key)
            for key in ("case_id", "transcript")
        ],
        *[
            pytest.param(contract_without(key), f"contract.{key}: missing", id=f"contract-missing-{key}")
            for key in ("version", "initial_role", "action_vocabulary", "roles")
        ],
        *[
            pytest.param(contract_with(key, value), f"contract.{key}: expected", id=f"contract-{key}-wrong-type")
            for key, value in (("version", 3), ("initial_role", None), ("action_vocabulary", "refund_order"))
        ],
    ],
)
def test_unreadable_file_is_one_stderr_line_and_exit_2(tmp_path, capsys, content, problem):
    path = _write(tmp_path, content)
    assert main(["inspect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"{path}: ") and problem in err


def test_missing_file_names_the_file(tmp_path, capsys):
    path = tmp_path / "nowhere.json"
    assert main(["inspect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"{path}: cannot read the case file (No such file or directory)\n"


def test_directory_instead_of_file(tmp_path, capsys):
    assert main(["inspect", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"{tmp_path}: ") and "Traceback" not in err


def test_unreadable_file_through_the_command_has_no_traceback(tmp_path):
    status, out, err = _inspect(_write(tmp_path, b'{"case_id": "x", "contract": 3, "transcript": []}'))
    assert (status, out) == (2, "")
    assert err == f"{tmp_path / 'case.json'}: contract: expected an object, got number\n"


def test_fixture_problem_inside_a_readable_case_is_reported_on_stdout(tmp_path, capsys):
    path = _write(tmp_path, case_of([], case_id="empty"))
    assert main(["inspect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err == ""
    assert out.splitlines()[0] == "role-eval invalid case=empty contract=support-role-v3 error=empty_transcript turn=-"
    assert json.loads(out.partition("\n")[2])["lane"] == "invalid_fixture"


def test_byte_order_mark_is_accepted(tmp_path, capsys):
    path = _write(tmp_path, b"\xef\xbb\xbf" + json.dumps(delayed_refund()).encode())
    assert main(["inspect", str(path)]) == 1
    assert capsys.readouterr().out.startswith("role-eval fail ")


@pytest.mark.slow
def test_a_200000_event_case_through_the_command(tmp_path):
    events = [user(t) if t % 2 else assistant(t, "lookup_order") for t in range(1, 200_001)]
    events[150_000] = assistant(150_001, "refund_order")
    status, out, err = _inspect(_write(tmp_path, case_of(events, case_id="long")))
    assert status == 1 and err == ""
    assert out.splitlines()[0].startswith("role-eval fail case=long contract=support-role-v3 first_violation_turn=150001 ")

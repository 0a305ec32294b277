"""``multiverse contract check|diff``: the role-contract oracle over case sets, for CI.

``check CASES... [--junit-xml FILE] [--gate GATE.yaml]`` prints one line per case
(the diagnostic, its lane and whether it blocks) and a summary with its
denominators; exit 1 when a result blocks under the gate, else 0.

``diff CASES... --old CONTRACT --new CONTRACT [--json]`` judges every case under
both contract versions and lists the decisions that changed; exit 0 when none
did, 1 when some did.

Both exit 2, with one line on stderr naming the file, for unreadable input;
``check`` also when the paths hold no case at all (a gate that checked nothing
must not pass).  Neither prints transcript text.
"""

from __future__ import annotations

import argparse
import json
import sys

from multiverse.cli._options import with_examples
from multiverse.contract import CaseFormatError, diagnostic

BAD_INPUT = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="judge case files under a gate, with a summary and JUnit XML")
    check.add_argument("cases", nargs="+", help="case JSON files, JSONL files or folders of them")
    check.add_argument("--junit-xml", metavar="FILE", help="write the results as JUnit XML")
    check.add_argument("--gate", metavar="GATE.yaml", help="which lanes block, per contract version")
    diff = sub.add_parser("diff", help="the decisions that change between two contract versions")
    diff.add_argument("cases", nargs="+", help="case JSON files, JSONL files or folders of them")
    diff.add_argument("--old", required=True, metavar="CONTRACT", help="a contract file (YAML or JSON) or name")
    diff.add_argument("--new", required=True, metavar="CONTRACT", help="a contract file (YAML or JSON) or name")
    diff.add_argument("--json", action="store_true", help="print the changes as a JSON list")
    with_examples(check, "multiverse contract check examples/cases --gate examples/gate.yaml",
                  "multiverse contract check examples/cases --junit-xml runs/contract.xml")
    with_examples(diff, "multiverse contract diff examples/cases --old support --new examples/contracts/support_v4.yaml")
    with_examples(parser, "multiverse contract check examples/cases --gate examples/gate.yaml",
                  "multiverse contract diff examples/cases --old support --new examples/contracts/support_v4.yaml")


def _problem(message: str) -> int:
    print(" ".join(message.split()), file=sys.stderr)
    return BAD_INPUT


def _check(args: argparse.Namespace) -> int:
    from multiverse.contract.rollout import check_cases, junit_xml, read_gate

    try:
        gate = read_gate(args.gate) if args.gate else None
        report = check_cases(args.cases, gate=gate)
    except CaseFormatError as exc:
        return _problem(str(exc))
    if not report.results:  # a gate that checked nothing must not pass
        return _problem(f"{' '.join(map(str, args.cases))}: no case files found (expected *.json or *.jsonl cases)")
    blocking = set(report.blocking)
    out = []
    for k, (_, result) in enumerate(report.results):
        mode = "blocking" if k in blocking else "reported"
        out.append(f"{diagnostic(result)} lane={result['lane']} {mode}")
    s = report.summary
    out.append(f"summary cases={s['cases']} blocking={s['blocking']} "
               + " ".join(f"{lane}={n}" for lane, n in s["by_lane"].items()))
    for item in s["invalid_fixtures"]:
        out.append(f"invalid case={item['case_id']} error={item['error']} file={item['where']}")
    for version, usage in s["contracts"].items():
        roles = ",".join(usage["roles_never_active"]) or "-"
        pairs = ",".join(f"{a}->{b}" for a, b in usage["transitions_never_taken"]) or "-"
        out.append(
            f"contract {version} critical_actions_evaluated={usage['critical_actions_evaluated']}/"
            f"{usage['critical_actions_total']} roles_never_active={roles} transitions_never_taken={pairs}"
        )
    sys.stdout.write("\n".join(out) + "\n")
    if args.junit_xml:
        try:
            junit_xml(report, args.junit_xml)
        except OSError as exc:
            return _problem(f"{args.junit_xml}: {exc.strerror or type(exc).__name__}")
    return report.exit_code


def _diff(args: argparse.Namespace) -> int:
    from multiverse.contract.rollout import load_contract_file
    from multiverse.contract.versions import diff_cases, format_changes

    try:
        old, new = load_contract_file(args.old), load_contract_file(args.new)
        changes = diff_cases(args.cases, old=old, new=new)
    except CaseFormatError as exc:
        return _problem(str(exc))
    if args.json:
        sys.stdout.write(json.dumps([{k: c[k] for k in ("case_id", "old", "new")} for c in changes]) + "\n")
    else:
        sys.stdout.write(format_changes(changes, old_version=old["version"], new_version=new["version"]) + "\n")
    return 1 if changes else 0


def main(args: argparse.Namespace) -> int:
    """Run the command; return the exit status."""
    return _check(args) if args.action == "check" else _diff(args)

"""Benchmark: each hardening finding's tests, run against the reviewed code and against this one.

``python -m benchmarks.bench_hardening --base BASE`` where ``BASE`` is a
checkout of the reviewed commit (``git worktree add BASE 232c857``).  The test
files named in :data:`FINDINGS` are copied into ``BASE/tests`` and run there
with ``BASE`` first on ``PYTHONPATH``, then run here; the script prints one
markdown row per finding and test: how many of its cases failed on the
reviewed code and how many pass on this one.  A test "failed before" only
counts when its cases fail on the behaviour, so the copies are given what they
need to *load* on the old tree and nothing more:

* the loopback test server, which moved from ``multiverse.llm.loopback`` to
  ``multiverse.testing.loopback``, is re-exported under its new name;
* a module-level ``from multiverse... import`` of a name the old code lacks
  binds it to ``None`` (a case using it then fails with a ``TypeError``,
  reported as "API absent", and the finding's other cases say what the old
  code did);
* an editable install of another checkout is kept from serving modules the
  old tree lacks.

Each test file runs in its own pytest, bounded (``--timeout-s``, and 8 GB of
address space, as an old ``plan`` of ``items: 10**12`` exhausts memory); on the
reviewed code a fuzz failure is reported as found, not shrunk.  Exits 1 if a finding has
no case that failed before or any case that fails now.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

__all__ = ["FINDINGS", "main"]

REPO = Path(__file__).resolve().parents[1]
FINDINGS: dict[str, list[str]] = {
    "1 secrets in the cube and run.json": [
        "tests/cli/test_canaries.py::test_no_canary_reaches_any_output_file_or_stream",
        "tests/cli/test_canaries.py::test_cube_attrs_mask_secret_params_and_keep_the_rest",
    ],
    "2 --out deletes what it points at": [
        "tests/cli/test_out_safety.py::test_run_refuses_an_out_it_must_not_replace_and_changes_nothing",
        "tests/cli/test_out_safety.py::test_report_refuses_a_file_or_a_foreign_folder_as_out",
    ],
    "3 tracebacks on broken CLI input": [
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2",
        "tests/cli/test_no_traceback.py::test_an_unusable_cache_is_one_line_and_exit_2",
        "tests/cli/test_out_safety.py::test_run_refuses_an_unwritable_out_before_any_model_call",
        "tests/cli/test_out_safety.py::test_unwritable_out_is_refused_before_the_cache_is_touched",
        "tests/cli/test_fuzz_cli.py::test_fuzzed_files_through_every_command_end_with_a_documented_code_and_no_traceback",
    ],
    "4 validate passes what crashes plan/run": [
        "tests/cli/test_no_traceback.py::test_validate_and_plan_refuse_what_would_crash_a_run",
    ],
    "5 Ctrl-C prints a traceback": [
        "tests/cli/test_no_traceback.py::test_ctrl_c_ends_with_one_line_saying_how_to_resume",
    ],
    "6 no size limits": [
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2[validate-over-the-size-cap]",
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2[validate-alias-bomb]",
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2[validate-deep-nesting]",
        *(
            f"tests/cli/test_no_traceback.py::test_validate_and_plan_refuse_what_would_crash_a_run[{c}-{e}]"
            for e in ("replicates-10e30", "items-10e12", "horizon-10e9", "plan-too-large")
            for c in ("validate", "plan")
        ),
    ],
    "7 cache audit writes": [
        "tests/cli/test_no_traceback.py::test_cache_audit_opens_the_database_read_only",
        "tests/cli/test_no_traceback.py::test_cache_audit_refuses_an_unusable_cache_without_writing_to_it",
    ],
    "8 a missing key is retried": [
        "tests/llm/test_retry.py::test_provider_errors_map_to_closed_reasons[missing-credentials-as-500]",
        "tests/llm/test_retry.py::test_provider_errors_map_to_closed_reasons[no-api-key-as-500]",
        "tests/llm/test_http.py::test_a_missing_key_is_an_auth_error_not_retried_and_the_models_later_calls_are_skipped",
    ],
    "9 fault knobs change the world": [
        "tests/sim/test_transport_knobs.py::test_faults_and_latency_leave_truth_verdicts_and_transcripts_unchanged",
    ],
    "10 concurrent runs pay twice": [
        "tests/llm/test_lease.py::test_two_processes_on_one_cache_send_each_request_once",
    ],
    "11 staging leftovers, modes, retry reasons, cryptic messages": [
        "tests/cli/test_out_safety.py::test_staging_folders_of_killed_writers_are_removed_and_outputs_get_the_umask_mode",
        "tests/llm/test_http.py::test_retried_failures_are_counted_by_reason",
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2[validate-not-utf8]",
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2[show-not-netcdf]",
        "tests/cli/test_no_traceback.py::test_broken_cli_input_is_one_line_and_exit_2[report-not-netcdf]",
        "tests/test_public_api_errors.py::test_to_long_refuses_a_dataset_that_is_not_a_cube",
        "tests/test_public_api_errors.py::test_open_cube_names_the_file_it_cannot_read",
    ],
}
_SUPPORT = ["tests/cli/cli_helpers.py", "tests/cli/conftest.py"]
_NO_EDITABLE = '''
import sys as _sys

from hypothesis import Phase as _Phase
from hypothesis import settings as _settings

# Measuring the reviewed code: no editable install of another checkout may serve a module it lacks,
# and a fuzz failure is reported as found, not shrunk (each shrink step reruns commands).
_sys.meta_path[:] = [f for f in _sys.meta_path if "editable" not in type(f).__module__.lower()]
_settings.register_profile("reviewed", phases=[_Phase.explicit, _Phase.generate])
'''
_IMPORT = re.compile(r"^from (multiverse[\w.]*) import ([\w, ]+)$", re.MULTILINE)


def _tolerant_imports(text: str) -> str:
    """Module-level ``from multiverse... import a, b`` lines that bind absent names to ``None``."""

    def guard(match: re.Match) -> str:
        names = [n.strip() for n in match[2].split(",") if n.strip()]
        fallback = "\n".join(
            f"    try:\n        from {match[1]} import {n}\n    except ImportError:\n        {n} = None" for n in names
        )
        return f"try:\n    {match[0]}\nexcept ImportError:  # absent from the reviewed code\n{fallback}"

    return _IMPORT.sub(guard, text)


def prepare_base(base: Path, *, findings: dict[str, list[str]] = FINDINGS, support: list[str] = _SUPPORT) -> None:
    """Copy the findings' test files into ``base`` with what they need to load there."""
    files = sorted({t.split("::")[0] for tests in findings.values() for t in tests} | set(support))
    for name in files:
        target = base / name
        target.parent.mkdir(parents=True, exist_ok=True)
        text = (REPO / name).read_text(encoding="utf-8")
        target.write_text(_tolerant_imports(text) if name.endswith(".py") else text, encoding="utf-8")
    for helper in ("tests/llm/llm_fakes.py", "tests/llm/conftest.py"):
        if not (base / helper).exists():
            shutil.copy(REPO / helper, base / helper)
    testing = base / "multiverse" / "testing"
    if not testing.exists() and (base / "multiverse" / "llm" / "loopback.py").exists():
        testing.mkdir()
        (testing / "__init__.py").write_text('"""Test support, as named by later versions."""\n')
        (testing / "loopback.py").write_text("from multiverse.llm.loopback import *  # noqa: F403\n"
                                             "from multiverse.llm.loopback import LoopbackServer, reply_text  # noqa: F401\n")
    conftest = base / "conftest.py"  # loaded before the tests' own conftest files
    text = conftest.read_text(encoding="utf-8") if conftest.exists() else ""
    if _NO_EDITABLE not in text:
        conftest.write_text(text + _NO_EDITABLE, encoding="utf-8")


def _limit_memory() -> None:
    limit = 8 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _run_file(tree: Path, name: str, *, timeout_s: float, extra: list[str]) -> dict[str, tuple[str, str]]:
    with tempfile.TemporaryDirectory(prefix="mv-hardening-") as folder:
        report = Path(folder) / "junit.xml"
        env = {**os.environ, "PYTHONPATH": str(tree)}
        try:
            subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *extra, name],
                cwd=tree, env=env, timeout=timeout_s, preexec_fn=_limit_memory,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return {name: ("error", f"no result within {timeout_s:.0f} s")}
        if not report.exists():
            return {name: ("error", "pytest wrote no report")}
        return parse_report(report)


def parse_report(report: Path) -> dict[str, tuple[str, str]]:
    """A JUnit XML report as {test id: (outcome, first line of its message)}."""
    results = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                lines = (found.get("message") or "").strip().splitlines()[:1]
                message = lines[0][:160] if lines else ""
                break
        results[f"{path}::{case.get('name')}"] = (outcome, message)
    return results


def run_tests(
    tree: Path, *, timeout_s: float, reviewed: bool, findings: dict[str, list[str]] = FINDINGS
) -> dict[str, tuple[str, str]]:
    """Run every finding's test file in ``tree``, one pytest per file; return {test id: (outcome, message)}."""
    files = sorted({t.split("::")[0] for tests in findings.values() for t in tests})
    extra = ["--hypothesis-profile=reviewed"] if reviewed else []
    results: dict[str, tuple[str, str]] = {}
    for name in files:
        results.update(_run_file(tree, name, timeout_s=timeout_s, extra=extra))
        print(f"  {tree.name}: {name} done", file=sys.stderr, flush=True)
    return results


def _matching(results: dict[str, tuple[str, str]], test: str) -> dict[str, tuple[str, str]]:
    found = {k: v for k, v in results.items() if k == test or (k.startswith(test + "[") and "[" not in test)}
    file = test.split("::")[0]
    return found or ({file: results[file]} if file in results else {})  # a file that gave no result at all


def _cell(found: dict[str, tuple[str, str]], *, want: str) -> str:
    if not found:
        return "not run"
    hits = sum(outcome in want.split("|") for outcome, _ in found.values())
    absent = sum("NoneType" in message for _, message in found.values())
    text = f"{hits}/{len(found)}"
    return text + (f" ({absent} API absent)" if absent else "")


def table(
    before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]], *, findings: dict[str, list[str]] | None = None
) -> tuple[list[str], dict[str, list[str]]]:
    """The markdown rows (finding, test, failed before, passes now, example) and the findings that fall short."""
    rows = ["| finding | test | failed before | passes now | what the reviewed code did (first failing case) |",
            "| --- | --- | --- | --- | --- |"]
    bad: dict[str, list[str]] = defaultdict(list)
    for finding, tests in (FINDINGS if findings is None else findings).items():
        failed_before = 0
        for test in tests:
            old, new = _matching(before, test), _matching(after, test)
            failed_before += sum(o in ("failed", "error") for o, _ in old.values())
            if not new or any(o in ("failed", "error") for o, _ in new.values()):
                bad[finding].append(f"{test} fails now")
            example = next((m for o, m in old.values() if o in ("failed", "error")), "")
            rows.append(f"| {finding} | `{test.split('/', 1)[1]}` | {_cell(old, want='failed|error')} | "
                        f"{_cell(new, want='passed|skipped')} | {example.replace('|', '/')} |")
        if failed_before == 0:
            bad[finding].append("no case failed on the reviewed code")
    return rows, bad


def main(
    argv: list[str] | None = None,
    *,
    findings: dict[str, list[str]] = FINDINGS,
    support: list[str] = _SUPPORT,
    description: str | None = None,
) -> int:
    """Run one hardening round's findings on the reviewed checkout and here; print the table (exit 1 if any falls short)."""
    parser = argparse.ArgumentParser(description=description or __doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="a checkout of the reviewed commit")
    parser.add_argument("--timeout-s", type=float, default=1800.0, help="bound on each test file's pytest run")
    args = parser.parse_args(argv)
    prepare_base(args.base, findings=findings, support=support)
    before = run_tests(args.base, timeout_s=args.timeout_s, reviewed=True, findings=findings)
    after = run_tests(REPO, timeout_s=args.timeout_s, reviewed=False, findings=findings)
    rows, bad = table(before, after, findings=findings)
    print("\n".join(rows))
    for finding, problems in bad.items():
        print(f"{finding}: {'; '.join(problems)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A pytest plugin that runs recorded cases as tests: ``pytest cases/ --junit-xml=out.xml``.

Registered in the ``pytest11`` entry-point group, so installing the library
enables it.  Every ``*.case.json`` file pytest meets (and every ``*.json`` file in
a folder named with ``--multiverse-cases``) is one test, named by its
``case_id``, judged by :func:`multiverse.contract.evaluate_case`:

* ``pass`` passes;
* ``violation`` fails, with the diagnostic line as the whole failure message
  (never transcript text);
* ``invalid_fixture``, ``missing_context_evidence`` and ``semantic_review`` are
  reported as their own outcomes: skipped (the default) or xfailed
  (``--multiverse-lane-outcome=xfail``, or the ini option
  ``multiverse_lane_outcome``), the reason starting with the lane;
* an unreadable case file is an error naming the problem in one line.

Each test records the properties ``lane`` and ``contract`` (the contract
version), which pytest's own JUnit XML writer puts on the test case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

__all__ = ["CaseFile", "CaseItem", "CaseViolation"]

_OUTCOMES = ("skip", "xfail")


class CaseViolation(Exception):
    """A case whose lane is ``violation``; the message is its diagnostic line."""


class _Unreadable(Exception):
    """A case file that cannot be read as a case; the message is one line."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("multiverse", "role-contract cases")
    group.addoption(
        "--multiverse-cases", action="append", default=[], metavar="DIR",
        help="also collect every *.json file in DIR as a role-contract case (repeatable)",
    )
    group.addoption(
        "--multiverse-lane-outcome", choices=_OUTCOMES, default=None,
        help="how invalid_fixture, missing_context_evidence and semantic_review cases are reported (default: skip)",
    )
    parser.addini("multiverse_lane_outcome", "skip or xfail for the review lanes", default="skip")


def pytest_configure(config: pytest.Config) -> None:
    outcome = config.getoption("--multiverse-lane-outcome") or config.getini("multiverse_lane_outcome")
    if outcome not in _OUTCOMES:
        raise pytest.UsageError(f"multiverse_lane_outcome: expected skip or xfail, got {outcome!r}")
    folders = [Path(p).resolve() for p in config.getoption("--multiverse-cases")]
    for folder in folders:
        if not folder.is_dir():
            raise pytest.UsageError(f"--multiverse-cases {folder}: not a folder")
    config.stash[_FOLDERS] = folders
    config.stash[_OUTCOME] = outcome
    config.args.extend(str(f) for f in folders if str(f) not in config.args)


_FOLDERS = pytest.StashKey[list]()
_OUTCOME = pytest.StashKey[str]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    folders = parent.config.stash.get(_FOLDERS, [])
    if file_path.name.endswith(".case.json") or (
        file_path.suffix == ".json" and file_path.resolve().parent in folders
    ):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    """One case JSON file: a single test named by its ``case_id``."""

    def collect(self):
        from multiverse.contract import CaseFormatError
        from multiverse.contract.rollout import iter_case_files

        try:
            [(_, case)] = iter_case_files([self.path])
        except CaseFormatError as exc:
            yield CaseItem.from_parent(self, name=self.path.name, case=None, problem=str(exc))
            return
        case_id = case.get("case_id") if isinstance(case, dict) else None
        name = str(case_id) if isinstance(case_id, (str, int)) and not isinstance(case_id, bool) else self.path.name
        yield CaseItem.from_parent(self, name=name, case=case, problem=None)


class CaseItem(pytest.Item):
    """The test of one case (see the module docstring for its outcomes)."""

    def __init__(self, *, case: Any, problem: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.problem = problem

    def runtest(self) -> None:
        from multiverse.contract import CaseFormatError, diagnostic, evaluate_case

        if self.problem is not None:
            raise _Unreadable(self.problem)
        try:
            result = evaluate_case(self.case)
        except CaseFormatError as exc:
            raise _Unreadable(f"{self.path}: {exc}") from None
        lane = result["lane"]
        self.user_properties.append(("lane", lane))
        self.user_properties.append(("contract", result["contract_version"]))
        line = diagnostic(result)
        if lane == "violation":
            raise CaseViolation(line)
        if lane != "pass":
            reason = f"{lane}: {line}"
            if self.config.stash.get(_OUTCOME, "skip") == "xfail":
                pytest.xfail(reason)
            pytest.skip(reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (CaseViolation, _Unreadable)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"case {self.name}"

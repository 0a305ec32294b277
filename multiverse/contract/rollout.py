"""The evaluator in CI: reading case files, gates with shadow and blocking lanes, honest summaries.

A *gate* says, per lane and per contract version, which results block a
release (exit 1) and which only report (shadow), following the rollout of the
role-drift article: a deterministic lane blocks only once the contract owner
has reviewed the action mapping (``reviewed: true``), and ``semantic_review``
never blocks.  A gate file (YAML or JSON)::

    lanes:                      # the default mode of each lane: block or shadow
      violation: block
      invalid_fixture: shadow
      missing_context_evidence: shadow
    contracts:                  # per contract version
      support-role-v3: {reviewed: true}
      support-role-v4: {reviewed: false, lanes: {invalid_fixture: block}}

Lanes not named report only; ``pass`` never blocks.  Without a gate file,
violations block under every contract and the other lanes report.

* :func:`iter_case_files` reads case files (single files, JSONL files, folders).
* :func:`read_gate` checks a gate; :func:`check_cases` judges cases under one.
* :func:`junit_xml` writes a :class:`CheckReport` as JUnit XML.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from multiverse.contract._case import LANES, diagnostic, evaluate_case
from multiverse.contract._rules import CaseFormatError, read_contract
from multiverse.core.files import InputFileError, loads_strict, read_regular

__all__ = [
    "BLOCKING_LANES",
    "CheckReport",
    "Gate",
    "check_cases",
    "iter_case_files",
    "junit_xml",
    "load_contract_file",
    "read_gate",
]

BLOCKING_LANES: tuple[str, ...] = ("violation", "invalid_fixture", "missing_context_evidence")
"""Lanes a gate may set to ``block``; ``semantic_review`` never blocks and ``pass`` has nothing to block."""

_MODES = ("block", "shadow")


def _decode(text: str, where: str) -> Any:
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise CaseFormatError(f"{where}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise CaseFormatError(f"{where}: not valid JSON: {exc}") from None


def _read_text(path: Path) -> str:
    try:
        return read_regular(path, what="case file").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CaseFormatError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except InputFileError as exc:
        raise CaseFormatError(str(exc)) from None


def iter_case_files(paths: Iterable[str | os.PathLike]) -> Iterator[tuple[str, Any]]:
    """``(where, case)`` for every case in some paths, in order.

    A path may be a case JSON file, a JSONL file (``.jsonl``: one case per line,
    blank lines skipped), or a folder (its ``*.json`` and ``*.jsonl`` files, sorted,
    not recursing).  ``where`` names the file (and line).

    Raises
    ------
    CaseFormatError
        For a missing path or a file that is not UTF-8 JSON, naming it.
    """
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            inner = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith((".json", ".jsonl")))
            yield from iter_case_files(inner)
        elif not path.exists():
            raise CaseFormatError(f"{path}: no such file or folder")
        elif path.name.endswith(".jsonl"):
            for number, line in enumerate(_read_text(path).split("\n"), start=1):
                if line.strip():
                    yield f"{path}:{number}", _decode(line, f"{path}:{number}")
        else:
            yield str(path), _decode(_read_text(path), str(path))


def load_contract_file(name_or_path: str | os.PathLike) -> dict[str, Any]:
    """A contract in the case-JSON form, from a JSON file, a YAML file or a name in ``specs/contracts/``.

    Raises
    ------
    CaseFormatError
        When the contract cannot be found or read (one line, naming it).
    """
    text = str(name_or_path)
    if text.endswith(".json"):
        data = _decode(_read_text(Path(text)), text)
        read_contract(data, field=f"{text}: contract")
        return dict(data)
    from multiverse.config.specs import load_contract

    try:
        loaded = load_contract(text)
    except FileNotFoundError as exc:
        raise CaseFormatError(str(exc).splitlines()[0]) from None
    except ValueError as exc:  # SpecError: every problem, one per line
        raise CaseFormatError(str(exc).splitlines()[0]) from None
    data = loaded.to_dict()
    if loaded.transitions:
        data["transitions"] = [{"from": a, "to": b} for a, b in loaded.transitions]
    return data


@dataclass(frozen=True)
class Gate:
    """Which lanes block, per contract version (see the module docstring)."""

    lanes: Mapping[str, str] = field(default_factory=lambda: {"violation": "block"})
    contracts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    reviewed_by_default: bool = True

    def blocks(self, lane: str, version: str) -> bool:
        """Whether a result in ``lane`` under contract ``version`` blocks."""
        if lane not in BLOCKING_LANES:
            return False
        spec = self.contracts.get(version, {})
        mode = spec.get("lanes", {}).get(lane, self.lanes.get(lane, "shadow"))
        reviewed = spec.get("reviewed", self.reviewed_by_default)
        return mode == "block" and (reviewed or lane != "violation")


def read_gate(path: str | os.PathLike) -> Gate:
    """Read and check a gate file (YAML or JSON).

    Raises
    ------
    CaseFormatError
        Naming the file and field of the first problem: an unknown key or lane,
        a mode other than ``block``/``shadow``, ``semantic_review: block``.
    """
    import yaml

    where = str(path)
    try:
        data = yaml.safe_load(_read_text(Path(path)))
    except yaml.YAMLError as exc:
        raise CaseFormatError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CaseFormatError(f"{where}: expected a mapping with lanes and contracts")
    for key in data:
        if key not in ("lanes", "contracts"):
            raise CaseFormatError(f"{where}: {key}: unknown key (expected lanes, contracts)")
    lanes = _lane_modes(data.get("lanes") or {}, f"{where}: lanes")
    contracts: dict[str, dict[str, Any]] = {}
    for version, spec in (data.get("contracts") or {}).items():
        field_ = f"{where}: contracts.{version}"
        if not isinstance(spec, dict):
            raise CaseFormatError(f"{field_}: expected a mapping with reviewed and lanes")
        for key in spec:
            if key not in ("reviewed", "lanes"):
                raise CaseFormatError(f"{field_}.{key}: unknown key (expected reviewed, lanes)")
        reviewed = spec.get("reviewed", False)
        if not isinstance(reviewed, bool):
            raise CaseFormatError(f"{field_}.reviewed: expected true or false")
        contracts[str(version)] = {"reviewed": reviewed, "lanes": _lane_modes(spec.get("lanes") or {}, f"{field_}.lanes")}
    return Gate(lanes=lanes, contracts=contracts, reviewed_by_default=False)


def _lane_modes(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise CaseFormatError(f"{where}: expected a mapping of lane -> block or shadow")
    for lane, mode in value.items():
        if lane not in LANES or lane == "pass":
            raise CaseFormatError(f"{where}.{lane}: unknown lane (expected one of {', '.join(LANES[1:])})")
        if mode not in _MODES:
            raise CaseFormatError(f"{where}.{lane}: expected block or shadow, got {mode!r}")
        if lane == "semantic_review" and mode == "block":
            raise CaseFormatError(f"{where}.{lane}: semantic review never blocks (use shadow)")
    return dict(value)


@dataclass
class CheckReport:
    """What :func:`check_cases` found: one entry per case, what blocks, and the denominators.

    Attributes
    ----------
    results
        ``(where, result)`` per case, ``result`` as :func:`evaluate_case` returns it.
    blocking
        Positions in ``results`` of the cases that block.
    summary
        ``cases``, ``by_lane`` ({lane: count}, every lane), ``invalid_fixtures``
        ([{case_id, where, error}]), per contract version ``roles_never_active``,
        ``transitions_never_taken`` (declared pairs no valid case took),
        ``critical_actions_evaluated`` and ``critical_actions_total`` (recorded
        assistant actions that some role forbids, in valid cases / in all cases).
    """

    results: list[tuple[str, dict[str, Any]]]
    blocking: list[int]
    summary: dict[str, Any]

    @property
    def exit_code(self) -> int:
        """1 when something blocks, else 0."""
        return 1 if self.blocking else 0


def check_cases(paths: Iterable[str | os.PathLike], *, gate: Gate | None = None) -> CheckReport:
    """Judge every case in some paths under a gate.

    Parameters
    ----------
    paths
        Case files, JSONL files or folders (:func:`iter_case_files`).
    gate
        Which lanes block (:func:`read_gate`); default: violations block.

    Raises
    ------
    CaseFormatError
        For an unreadable file or case, naming it (``file``, ``file:line``).
    """
    gate = gate or Gate()
    results: list[tuple[str, dict[str, Any]]] = []
    usage = _Usage()
    for where, case in iter_case_files(paths):
        try:
            result = evaluate_case(case)
        except CaseFormatError as exc:
            raise CaseFormatError(f"{where}: {exc}") from None
        results.append((where, result))
        usage.add(case, result)
    blocking = [k for k, (_, r) in enumerate(results) if gate.blocks(r["lane"], r["contract_version"])]
    by_lane = {lane: 0 for lane in LANES}
    for _, result in results:
        by_lane[result["lane"]] += 1
    summary = {
        "cases": len(results),
        "by_lane": by_lane,
        "blocking": len(blocking),
        "invalid_fixtures": [
            {"case_id": r["case_id"], "where": w, "error": r["fixture_errors"][0]["code"]}
            for w, r in results if r["fixture_errors"]
        ],
        "contracts": usage.summary(),
    }
    return CheckReport(results, blocking, summary)


class _Usage:
    """Roles, transitions and critical actions seen per contract version."""

    def __init__(self) -> None:
        self.contracts: dict[str, dict[str, Any]] = {}

    def add(self, case: Mapping[str, Any], result: dict[str, Any]) -> None:
        rules = read_contract(case["contract"])
        entry = self.contracts.setdefault(
            rules.version,
            {"roles": set(rules.allowed), "active": set(), "declared": set(rules.transitions), "taken": set(),
             "evaluated": 0, "total": 0},
        )
        critical = {a for a in rules.vocabulary if any(a not in allowed for allowed in rules.allowed.values())}
        valid = not result["fixture_errors"]
        previous = None
        roles = list(result["role_by_turn"].values())
        if valid:
            entry["active"].update(roles)
            for role in roles:
                if previous is not None and role != previous:
                    entry["taken"].add((previous, role))
                previous = role
        for event in case["transcript"]:
            if isinstance(event, dict) and event.get("actor") == "assistant":
                actions = event.get("observed_actions")
                count = sum(1 for a in actions if a in critical) if isinstance(actions, list) else 0
                entry["total"] += count
                entry["evaluated"] += count if valid else 0

    def summary(self) -> dict[str, Any]:
        return {
            version: {
                "roles_never_active": sorted(e["roles"] - e["active"]),
                "transitions_never_taken": [list(t) for t in sorted(e["declared"] - e["taken"])],
                "critical_actions_evaluated": e["evaluated"],
                "critical_actions_total": e["total"],
            }
            for version, e in self.contracts.items()
        }


def junit_xml(report: CheckReport, path: str | os.PathLike, *, suite: str = "multiverse-contract") -> None:
    """Write a report as JUnit XML: one ``testcase`` per case, its lane as a property.

    A violation is a ``failure`` whose message is the diagnostic line (never
    transcript text); other non-pass lanes are ``skipped`` with the lane as the
    message.  Whether the case blocks is the ``blocking`` property.  Written with
    the standard library's ElementTree, which escapes every value.
    """
    import xml.etree.ElementTree as ET

    blocking = set(report.blocking)
    failures = sum(1 for _, r in report.results if r["lane"] == "violation")
    skipped = sum(1 for _, r in report.results if r["lane"] not in ("pass", "violation"))
    root = ET.Element("testsuites")
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(report.results)), failures=str(failures),
                         errors="0", skipped=str(skipped))
    for k, (where, result) in enumerate(report.results):
        case = ET.SubElement(node, "testcase", classname=suite, name=str(result["case_id"]), file=where)
        properties = ET.SubElement(case, "properties")
        for name, value in (("lane", result["lane"]), ("contract", result["contract_version"]),
                            ("blocking", "true" if k in blocking else "false")):
            ET.SubElement(properties, "property", name=name, value=value)
        line = diagnostic(result)
        if result["lane"] == "violation":
            ET.SubElement(case, "failure", message=line, type="violation").text = line
        elif result["lane"] != "pass":
            ET.SubElement(case, "skipped", message=result["lane"]).text = line
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)

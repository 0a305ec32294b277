"""The role-contract oracle's reading of one transcript, in assistant turns.

The viewer shows, per assistant turn, the role that is active when the reply is
given, and highlights the oracle's first violation with its lane.  Both come
from :func:`multiverse.evaluate_case` on the case built from the transcript
(:meth:`multiverse.core.transcript.Transcript.to_case`), so the page and ``multiverse
inspect`` never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import xarray as xr

from multiverse.config.specs import Contract, find_specs_dir, load_contract, load_role
from multiverse.contract import evaluate_case
from multiverse.core.transcript import Transcript

__all__ = ["RoleContracts", "oracle_view", "specs_dir_of"]


def specs_dir_of(cube: xr.Dataset, explicit: str | Path | None = None) -> Path | None:
    """Where the cube's roles and contracts live: ``explicit``, the experiment's ``specs``, or the default.

    Returns ``None`` when no specs folder can be found (the viewer then shows no
    active roles).
    """
    if explicit is not None:
        return Path(explicit)
    try:
        experiment = cube.attrs.get("experiment") or {}
        recorded = (json.loads(experiment) if isinstance(experiment, str) else experiment).get("specs")
    except (TypeError, ValueError):
        recorded = None
    if recorded and (Path(recorded) / "roles").is_dir():
        return Path(recorded)
    for start in (None, Path(__file__).parent):
        try:
            return find_specs_dir(start)
        except FileNotFoundError:
            continue
    return None


class RoleContracts:
    """The contract of each role, looked up once.

    A role file's ``contract`` wins; a role with no role file (an imported
    benchmark domain such as ``tau_airline``) uses the contract file of the same
    name.  A tau-bench domain contract becomes the per-task contract of the
    transcript's gold actions, as the cube's ``contract`` judge used it.
    """

    def __init__(self, specs_dir: Path | None):
        self._specs_dir = specs_dir
        self._found: dict[str, Contract | None] = {}

    def of_role(self, role: str) -> Contract | None:
        """The role's contract, or ``None`` when it has none (or no spec is found)."""
        if role not in self._found:
            self._found[role] = self._lookup(role)
        return self._found[role]

    def _lookup(self, role: str) -> Contract | None:
        if self._specs_dir is None:
            return None
        try:
            return load_role(role, specs_dir=self._specs_dir).contract
        except (FileNotFoundError, ValueError):
            pass
        try:
            return load_contract(role, specs_dir=self._specs_dir)
        except (FileNotFoundError, ValueError):
            return None

    def case_contract(self, transcript: Transcript) -> dict[str, Any] | None:
        """The case-JSON contract the oracle applies to ``transcript``."""
        contract = self.of_role(transcript.role)
        if contract is None:
            return None
        gold = transcript.scenario.get("gold_actions")
        if gold is not None and {"read_only", "planned_write"} <= set(contract.roles):
            from multiverse.adapters.tau_bench import task_contract

            return task_contract(contract, gold)
        return contract.to_dict()


def _assistant_turn_of(events: Sequence[Any]) -> dict[int, int]:
    """Event ``turn`` of each assistant event -> its 1-based assistant turn."""
    assistant = [e.turn for e in events if e.actor == "assistant"]
    return {turn: i for i, turn in enumerate(assistant, start=1)}


def oracle_view(transcript: Transcript, contract: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The oracle's verdict on ``transcript`` in the viewer's terms.

    Parameters
    ----------
    transcript
        One conversation.
    contract
        Its case-JSON contract, or ``None`` for a role without one.

    Returns
    -------
    dict or None
        ``lane``, ``contract_version``, ``first_violation`` (the oracle's object
        with ``assistant_turn`` added), ``violations``, ``fixture_errors``,
        ``context_errors`` and ``role_by_event`` (event turn -> active role);
        ``None`` without a contract.
    """
    if contract is None:
        return None
    case = transcript.to_case(contract)
    case["session_start"] = True  # a stored transcript is the whole conversation, whatever its first turn number
    result = evaluate_case(case)
    to_assistant = _assistant_turn_of(transcript.events)

    def located(violation: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(violation)
        out["assistant_turn"] = to_assistant.get(int(violation["turn"]))
        return out

    violations = [located(v) for v in result.get("violations", [])]
    return {
        "lane": result["lane"],
        "contract_version": result.get("contract_version"),
        "first_violation": violations[0] if violations else None,
        "violations": violations,
        "fixture_errors": list(result.get("fixture_errors", [])),
        "context_errors": list(result.get("context_errors", [])),
        "role_by_event": {str(k): v for k, v in (result.get("role_by_turn") or {}).items()},
    }

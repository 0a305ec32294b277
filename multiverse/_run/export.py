"""Export a run's conversations as case JSON files for the role-contract evaluator.

One case per stored conversation of a role that has a contract, in the fixed
case format (``case_id``, ``contract``, ``transcript``): every event with its
``turn``, ``actor`` and ``text``, the assistant's ``observed_actions``, trusted
``set_role`` events and the request record of each assistant turn
(``request_id``, ``contract_version``, ``included_turns``,
``instruction_sha256``), so ``multiverse inspect`` puts each case in its lane.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from multiverse.core.transcript import Transcript, TranscriptStore

__all__ = ["export_cases", "transcript_case"]


def transcript_case(transcript: Transcript, contract: Any, *, case_id: str) -> dict[str, Any]:
    """The case JSON of one conversation under ``contract`` (a loaded contract or its case-JSON dict)."""
    body = contract.to_dict() if callable(getattr(contract, "to_dict", None)) else dict(contract)
    case = transcript.to_case(body, case_id=case_id)
    for item, event in zip(case["transcript"], transcript.events):
        if event.text:
            item["text"] = event.text
    return case


def _conversations(cube: Any) -> list[tuple[str, str]]:
    """``(role, transcript id)`` of every generated conversation in the cube, in cube order, without repeats."""
    ids = cube["transcript_id"]
    seen: dict[str, str] = {}
    for role in ids["role"].values.tolist():
        for transcript_id in ids.sel(role=role).values.ravel().tolist():
            if transcript_id and transcript_id not in seen:
                seen[str(transcript_id)] = str(role)
    return [(role, transcript_id) for transcript_id, role in seen.items()]


def export_cases(run: str | Path, *, out: str | Path, specs_dir: str | Path | None = None) -> list[Path]:
    """Write one case JSON per conversation of a role with a contract.

    Parameters
    ----------
    run
        A run folder written by ``multiverse run`` (``cube.nc`` or ``cube.zarr``
        and ``transcripts.sqlite``).
    out
        Folder to write ``<role>-<transcript id>.case.json`` files into (created).
    specs_dir
        Where the roles and contracts live (default: found as ``multiverse run`` finds them).

    Returns
    -------
    list of Path
        The files written, in cube order.

    Raises
    ------
    FileNotFoundError
        If the run folder holds no cube or no transcript store.
    """
    from multiverse.config.specs import load_role
    from multiverse.cube.io import open_cube

    folder = Path(run)
    cube_path = next((folder / name for name in ("cube.nc", "cube.zarr") if (folder / name).exists()), None)
    store_path = folder / TranscriptStore.FILENAME
    if cube_path is None or not store_path.is_file():
        raise FileNotFoundError(f"{folder}: not a run folder (expected cube.nc or cube.zarr and {TranscriptStore.FILENAME})")
    cube = open_cube(cube_path, lazy=False)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    contracts: dict[str, Any] = {}
    written: list[Path] = []
    with TranscriptStore(store_path) as store:
        for role_id, transcript_id in _conversations(cube):
            if role_id not in contracts:
                contracts[role_id] = load_role(role_id, specs_dir=specs_dir).contract
            contract = contracts[role_id]
            if contract is None or transcript_id not in store:
                continue
            case_id = f"{role_id}-{transcript_id}"
            case = transcript_case(store.get(transcript_id), contract, case_id=case_id)
            path = target / f"{case_id}.case.json"
            path.write_text(json.dumps(case, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
            written.append(path)
    return written

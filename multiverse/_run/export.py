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

__all__ = ["KIND", "export_cases", "transcript_case"]

KIND = "export-cases"
"""The output kind of ``multiverse export-cases`` (:mod:`multiverse.core.outputs`)."""


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
        Folder to write ``<role>-<transcript id>.case.json`` files into.  It
        follows the output-folder rule (:mod:`multiverse.core.outputs`): it
        must be missing, empty or an earlier ``export-cases`` output, and must
        neither be nor contain the run folder or the working directory (checked
        before anything is read); it is replaced as a whole, keeping what the
        earlier export did not write.
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
    multiverse.core.outputs.OutputDirError
        If ``out`` must not be replaced.
    multiverse.core.transcript.StoreError
        If the transcript store cannot be read.

    Notes
    -----
    Known secret values (the environment's, the experiment's) are scrubbed from
    every case before it is written (:func:`multiverse.llm.redact.scrub`).
    """
    from multiverse.config.specs import load_role
    from multiverse.core.outputs import check_output_dir, replace_dir
    from multiverse.cube.io import CUBE_NAMES, open_cube
    from multiverse.llm.redact import scrub

    folder = Path(run)
    check_output_dir(out, kind=KIND, protected={"the run folder": folder})
    cube_path = next((folder / name for name in CUBE_NAMES if (folder / name).exists()), None)
    store_path = folder / TranscriptStore.FILENAME
    if not folder.is_dir() or cube_path is None or not store_path.exists():
        raise FileNotFoundError(f"{folder}: not a run folder (expected cube.nc or cube.zarr and {TranscriptStore.FILENAME})")
    cube = open_cube(cube_path, lazy=False)
    contracts: dict[str, Any] = {}
    names: list[str] = []
    target = Path(out)
    with TranscriptStore.open_existing(store_path) as store, replace_dir(target, kind=KIND) as staging:
        for role_id, transcript_id in _conversations(cube):
            if role_id not in contracts:
                contracts[role_id] = load_role(role_id, specs_dir=specs_dir).contract
            contract = contracts[role_id]
            if contract is None or transcript_id not in store:
                continue
            case_id = f"{role_id}-{transcript_id}"
            case = transcript_case(store.get(transcript_id), contract, case_id=case_id)
            name = f"{case_id}.case.json"
            text = json.dumps(case, indent=2, sort_keys=True, ensure_ascii=False)
            (staging / name).write_text(scrub(text) + "\n", encoding="utf-8")
            names.append(name)
    return [target / name for name in names]

"""``multiverse inspect CASE.json``: check one recorded case against its role contract.

Prints the one-line diagnostic, then the full result as JSON, and exits 0 (pass),
1 (violation) or 2 (invalid fixture).  A file that cannot be read as a case
prints one line on stderr, ``<file>: <problem>``, nothing on stdout, and exits 2.
Neither output contains transcript text.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from multiverse.cli._options import with_examples
from multiverse.contract import CaseFormatError, diagnostic, evaluate_case, exit_code

__all__ = ["MAX_CASE_BYTES", "UNREADABLE", "add_arguments", "read_case_file", "render", "main"]

UNREADABLE = 2
MAX_CASE_BYTES = 1 << 30
"""Largest case file read (1 GiB; a 200,000-event case is about 30 MB)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("case", help="path to a case JSON file (case_id, contract, transcript)")
    parser.add_argument(
        "--contract", metavar="CONTRACT",
        help="judge under this contract instead of the case's own (a YAML or JSON file, or a name)",
    )
    with_examples(parser, "multiverse inspect examples/cases/delayed-violation.case.json",
                  "multiverse inspect examples/cases/delayed-violation.case.json --contract examples/contracts/support_v4.yaml")


def read_case_file(path: str) -> Any:
    """Decode a case file as strict JSON (UTF-8, an optional BOM, no NaN or Infinity, no repeated key).

    Only a regular file of at most :data:`MAX_CASE_BYTES` is read (a FIFO or a
    device is refused before reading).

    Raises
    ------
    ValueError
        With a one-line message saying what is wrong (the path is not included).
    """
    from multiverse.core.files import InputFileError, loads_strict, read_regular

    try:
        raw = read_regular(path, limit=MAX_CASE_BYTES, what="case file")
    except InputFileError as exc:
        raise ValueError(str(exc).removeprefix(f"{path}: ")) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError("not readable JSON: nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None


def render(result: dict[str, Any]) -> str:
    """The result as JSON: one top-level key per line, each value compact.

    Compact values keep a 200,000-event case fast to write (the C encoder only
    runs without indentation) while the keys stay easy to scan.
    """
    items = [
        f"  {json.dumps(key)}: {_roles_json(value) if key == 'role_by_turn' else json.dumps(value, ensure_ascii=False)}"
        for key, value in result.items()
    ]
    return "{\n" + ",\n".join(items) + "\n}"


def _roles_json(role_by_turn: dict[int, str]) -> str:
    """``{turn: role}`` as JSON; role names are encoded once, not once per turn."""
    encoded = {role: json.dumps(role, ensure_ascii=False) for role in set(role_by_turn.values())}
    return "{" + ", ".join([f'"{turn}": {encoded[role]}' for turn, role in role_by_turn.items()]) + "}"


def _problem(path: str, message: str) -> int:
    print(f"{path}: {' '.join(message.split())}", file=sys.stderr)
    return UNREADABLE


def main(args: argparse.Namespace) -> int:
    """Run the command; return the exit status."""
    path = args.case
    try:
        case = read_case_file(path)
    except ValueError as exc:
        return _problem(path, str(exc))
    try:
        if getattr(args, "contract", None):
            from multiverse.contract.rollout import load_contract_file

            override = load_contract_file(args.contract)
            if isinstance(case, dict):
                case = {**case, "contract": override}
        result = evaluate_case(case)
    except CaseFormatError as exc:
        return _problem(path, str(exc))
    try:
        sys.stdout.write(diagnostic(result) + "\n" + render(result) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (e.g. `| head -1`): not an error of the case
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return exit_code(result)

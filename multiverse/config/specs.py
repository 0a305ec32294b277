"""Role specifications and role contracts: YAML files -> frozen dataclasses.

A role file (``specs/roles/<role id>.yaml``) states what is under test: the
role's system prompt and situational context, how it may interact, who opens
the conversation, its principles with calibrated three-level criteria, and
optionally a role contract, tools (OpenAI function schemas) and a pool of seed
scenarios.  A contract file (``specs/contracts/<name>.yaml``) is the executable
part of a role: an action vocabulary, per-role allowlists and the trusted actor
that may hand the conversation from one role to another.  ``specs/README.md``
documents both formats field by field.

Loading validates the whole file and raises :class:`~multiverse.config.located.SpecError`
carrying every problem as ``path:line: field: message``; :func:`validate_path`
returns the same problems without raising.  Every :class:`Role` carries a
``digest``: the sha256 of the canonical JSON of its parsed content (contract
resolved), which enters cache keys, so editing a principle re-runs what it
changes and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from multiverse.config.fields import FieldReader, suggest
from multiverse.config.located import Problem, SpecError, load_located
from multiverse.config.spec_parse import SPECS_ENV, find_specs_dir, parse_contract_file, parse_role
from multiverse.config.spec_types import (
    LEVELS,
    MODALITIES,
    OPENERS,
    TRUSTED_ACTORS,
    Canary,
    Contract,
    Criterion,
    Principle,
    Role,
    SeedScenario,
)
from multiverse.core.lazy import lazy_exports

__all__ = [
    "LEVELS",
    "MODALITIES",
    "OPENERS",
    "SPECS_ENV",
    "TRUSTED_ACTORS",
    "Canary",
    "Contract",
    "Criterion",
    "Principle",
    "Role",
    "SeedScenario",
    "find_specs_dir",
    "load_contract",
    "load_role",
    "load_roles",
    "spec_files",
    "spec_kind",
    "validate_path",
]


def _as_path(name_or_path: str | Path) -> Path | None:
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or "/" in text or os.sep in text:
        return Path(name_or_path)
    return None


def _spec_path(kind: str, name_or_path: str | Path, specs_dir: str | Path | None) -> Path:
    """The file of a ``role`` or ``contract`` given by path, or by name in ``<specs_dir>/<kind>s/``.

    Raises
    ------
    FileNotFoundError
        For a name with no file, suggesting the closest known name.
    """
    path = _as_path(name_or_path)
    if path is not None:
        return path
    folder = (Path(specs_dir) if specs_dir is not None else find_specs_dir()) / f"{kind}s"
    path = folder / f"{name_or_path}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        raise FileNotFoundError(
            f"{path}: no {kind} '{name_or_path}'{suggest(str(name_or_path), known)}; "
            f"known {kind}s: {', '.join(known) or 'none'}"
        )
    return path


_CACHE: dict[tuple[str, str, str], tuple[tuple, Any]] = {}


def _signature(paths: list[Path]) -> tuple:
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            return ()
        out.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def _load(kind: str, path: Path, parse: Callable[..., Any], **options: Any) -> Any:
    """Parse ``path`` with ``parse``, raising :class:`SpecError` on problems.

    Reading and checking a role costs tens of milliseconds and roles are loaded
    many times per run, so the result is kept until the file or any file it
    read (its contract) changes.
    """
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such {kind} file")
    key = (kind, str(path.resolve()), str(options))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] and hit[0] == _signature([Path(p) for p, _, _ in hit[0]]):
        return hit[1]
    signature = _signature([path])
    reader = FieldReader(load_located(path))
    value = parse(reader, **options)
    if reader.problems:
        raise SpecError(reader.problems)
    _CACHE[key] = (signature + _signature(reader.reads), value)
    return value


def load_role(role_id: str | Path, *, specs_dir: str | Path | None = None) -> Role:
    """Load and validate one role.

    Parameters
    ----------
    role_id
        A role id (read from ``<specs_dir>/roles/<role_id>.yaml``) or a path to
        a role file.
    specs_dir
        The specs folder (default: :func:`find_specs_dir`).

    Raises
    ------
    SpecError
        Listing every problem of the file as ``path:line: field: message``.
    FileNotFoundError
        If there is no such role file.
    """
    return _load("role", _spec_path("role", role_id, specs_dir), parse_role, specs_dir=specs_dir)


def load_roles(role_ids: list[str] | tuple[str, ...] | None = None, *, specs_dir: str | Path | None = None) -> dict[str, Role]:
    """Load several roles (default: every ``roles/*.yaml`` of the specs folder), keyed by id."""
    folder = Path(specs_dir) if specs_dir is not None else find_specs_dir()
    if role_ids is None:
        role_ids = [p.stem for p in sorted((folder / "roles").glob("*.yaml"))]
    return {rid: load_role(rid, specs_dir=folder) for rid in role_ids}


def load_contract(name_or_path: str | Path, *, specs_dir: str | Path | None = None) -> Contract:
    """Load and validate one contract, by name (``<specs_dir>/contracts/<name>.yaml``) or path.

    Raises
    ------
    SpecError
        Listing every problem of the file.
    FileNotFoundError
        If there is no such contract file.
    """
    return _load("contract", _spec_path("contract", name_or_path, specs_dir), parse_contract_file)


# --- validation entry points ----------------------------------------------------------------


def spec_kind(data: Any) -> str | None:
    """``role`` (has ``principles``), ``contract`` (has ``action_vocabulary``),
    ``experiment`` (has ``systems`` or ``dims``), or ``None``."""
    if not isinstance(data, dict):
        return None
    if "principles" in data:
        return "role"
    if "action_vocabulary" in data:
        return "contract"
    if "systems" in data or "dims" in data:
        return "experiment"
    return None


def spec_files(path: str | Path) -> Iterator[Path]:
    """``path`` itself if it is a file, else every ``*.yaml``/``*.yml`` below it, sorted."""
    path = Path(path)
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    else:
        yield path


def validate_path(path: str | Path) -> list[Problem]:
    """Every problem of the role, contract and experiment files at ``path`` (a file or a folder, searched recursively).

    A file's kind comes from its content (see :func:`spec_kind`); a file of no
    recognisable kind is a problem.  Experiment files get every check
    :func:`multiverse.config.experiment.validate_experiment` runs.  Never raises
    for a bad file: an unexpected error while checking one becomes a problem of
    that file.
    """
    path = Path(path)
    if not path.exists():
        return [Problem(str(path), None, "", "no such file or folder")]
    files = list(spec_files(path))
    if not files:
        return [Problem(str(path), None, "", "no *.yaml or *.yml files in this folder")]
    problems: list[Problem] = []
    for file in files:
        try:
            problems += _validate_file(file)
        except Exception as exc:  # one broken file must not hide the others
            problems.append(Problem(str(file), None, "", f"could not be checked: {exc.__class__.__name__}: {exc}"))
    return problems


def _validate_file(path: Path) -> list[Problem]:
    try:
        located = load_located(path)
    except SpecError as exc:
        return exc.problems
    kind = spec_kind(located.data)
    reader = FieldReader(located)
    if kind == "role":
        parse_role(reader)
    elif kind == "contract":
        parse_contract_file(reader)
    elif kind == "experiment":
        from multiverse.config.experiment import validate_experiment

        return validate_experiment(path)
    else:
        reader.problem(
            "",
            "unrecognised spec kind: expected a mapping with 'principles' (role), "
            "'action_vocabulary' (contract) or 'systems'/'dims' (experiment)",
        )
    return reader.problems


__getattr__, _ = lazy_exports(__name__, {}, deprecated={"Scenario": "SeedScenario"})
"""``Scenario`` was renamed ``SeedScenario`` (``multiverse.rollout.scenario.Scenario`` is the campaign's own)."""

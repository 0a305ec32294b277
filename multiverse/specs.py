"""Role specifications and role contracts: YAML files -> frozen dataclasses.

A role file (``specs/roles/<role id>.yaml``) states what is under test: the
role's system prompt and situational context, how it may interact, who opens
the conversation, its principles with calibrated three-level criteria, and
optionally a role contract, tools (OpenAI function schemas) and a pool of seed
scenarios.  A contract file (``specs/contracts/<name>.yaml``) is the executable
part of a role: an action vocabulary, per-role allowlists and the trusted actor
that may hand the conversation from one role to another.  ``specs/README.md``
documents both formats field by field.

Loading validates the whole file and raises :class:`~multiverse._yaml.SpecError`
carrying every problem as ``path:line: field: message``; :func:`validate_path`
returns the same problems without raising.  Every :class:`Role` carries a
``digest``: the sha256 of the canonical JSON of its parsed content (contract
resolved), which enters cache keys, so editing a principle re-runs what it
changes and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from multiverse._schema import MODES, ROLE_PRINCIPLES, STRATEGIES, parse_cell_id
from multiverse._spec_check import IDENTIFIER, SEED_ID, FieldReader, join, read_located, suggest
from multiverse._yaml import Located, Problem, SpecError

__all__ = [
    "LEVELS",
    "MODALITIES",
    "OPENERS",
    "Contract",
    "Criterion",
    "Principle",
    "Role",
    "Scenario",
    "find_specs_dir",
    "load_contract",
    "load_role",
    "load_roles",
    "spec_files",
    "spec_kind",
    "validate_path",
]

LEVELS: tuple[str, ...] = ("full", "partial", "breach")
"""Criterion levels: full adherence (severity 0), partial deviation (1), clear breach (2)."""

MODALITIES: tuple[str, ...] = ("text", "tool_calls")
"""Interaction modalities: natural-language messages; calls of the role's tools."""

OPENERS: tuple[str, ...] = ("user", "assistant")
"""Who speaks first."""

TRUSTED_ACTORS: tuple[str, ...] = ("system", "tool")
"""Actors a contract may trust to change the active role (never user or assistant prose)."""

SPECS_ENV = "MULTIVERSE_SPECS"

_ROLE_KEYS_REQUIRED = ("id", "version", "system_prompt", "context", "modalities", "opens", "principles")
_ROLE_KEYS_OPTIONAL = ("contract", "tools", "seeds")
_PRINCIPLE_KEYS = ("id", "statement", "standard", "criteria")
_CRITERION_KEYS = ("description", "example")
_SEED_KEYS_REQUIRED = ("id", "persona", "situation", "goal", "pressure", "cell", "frame")
_SEED_KEYS_OPTIONAL = ("workflow",)
_CONTRACT_KEYS_REQUIRED = ("version", "initial_role", "action_vocabulary", "roles")
_CONTRACT_KEYS_OPTIONAL = ("name", "trusted_actor", "enforces", "transitions")
_TOOL_KEYS = ("type", "function")
_FUNCTION_KEYS_REQUIRED = ("name", "description", "parameters")
_FUNCTION_KEYS_OPTIONAL = ("strict",)


def _canonical_digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- dataclasses ---------------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    """One calibrated level of a principle: what it looks like, and an example reply."""

    description: str
    example: str

    def to_dict(self) -> dict[str, str]:
        return {"description": self.description, "example": self.example}


@dataclass(frozen=True)
class Principle:
    """A principle of a role, grounded in a public standard.

    ``criteria`` maps each of :data:`LEVELS` (``full``, ``partial``, ``breach``)
    to its :class:`Criterion`.
    """

    id: str
    statement: str
    standard: str
    criteria: Mapping[str, Criterion]

    def __post_init__(self) -> None:
        object.__setattr__(self, "criteria", MappingProxyType(dict(self.criteria)))

    def __hash__(self) -> int:
        return hash((self.id, self.statement, self.standard, tuple(self.criteria.items())))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "statement": self.statement,
            "standard": self.standard,
            "criteria": {level: c.to_dict() for level, c in self.criteria.items()},
        }


@dataclass(frozen=True)
class Scenario:
    """A seed scenario: who the simulated user is and what they are after.

    ``mode``, ``strategy`` and ``principle`` name the scenario's home cell of
    the TUNA grid; ``frame`` is its domain context; ``workflow`` lists the fixed
    steps of an agentic task (empty for conversational roles).
    """

    id: str
    persona: str
    situation: str
    goal: str
    pressure: str
    mode: str
    strategy: str
    principle: str
    frame: str
    workflow: tuple[str, ...] = ()

    @property
    def cell(self) -> str:
        """The home cell, written ``mode/strategy/principle_id``."""
        return f"{self.mode}/{self.strategy}/{self.principle}"

    def to_dict(self) -> dict[str, Any]:
        """The scenario mapping the rollout layer consumes.

        Besides the seed's own fields it carries the home cell (``home_mode``,
        ``home_strategy``, ``home_principle``, equal to the target cell for a
        seed), ``origin="seed"``, ``parent=""`` and ``intensity=1.0``.
        """
        return {
            "id": self.id,
            "persona": self.persona,
            "situation": self.situation,
            "goal": self.goal,
            "pressure": self.pressure,
            "mode": self.mode,
            "strategy": self.strategy,
            "principle": self.principle,
            "home_mode": self.mode,
            "home_strategy": self.strategy,
            "home_principle": self.principle,
            "frame": self.frame,
            "workflow": list(self.workflow),
            "intensity": 1.0,
            "origin": "seed",
            "parent": "",
        }


@dataclass(frozen=True)
class Contract:
    """A role contract: which observable actions each role may take.

    ``roles`` maps a contract role name to its allowlist.  Only an event from
    ``trusted_actor`` may change the active role; ``transitions`` lists the
    handoffs the product performs (``(from_role, to_role)`` pairs, for
    documentation and scenario design; the evaluator accepts any trusted
    transition to a known role).  ``enforces`` is the principle of the owning
    role whose severities the contract judge writes.
    """

    name: str
    version: str
    initial_role: str
    action_vocabulary: tuple[str, ...]
    roles: Mapping[str, tuple[str, ...]]
    trusted_actor: str = "system"
    enforces: str | None = None
    transitions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", MappingProxyType({k: tuple(v) for k, v in self.roles.items()}))

    def __hash__(self) -> int:
        return hash(self.digest)

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of the contract (name and transitions included)."""
        data = self.to_dict()
        data["name"] = self.name
        data["transitions"] = [list(t) for t in self.transitions]
        return _canonical_digest(data)

    def to_dict(self) -> dict[str, Any]:
        """The contract in the case-JSON form the contract evaluator reads."""
        out: dict[str, Any] = {
            "version": self.version,
            "initial_role": self.initial_role,
            "action_vocabulary": list(self.action_vocabulary),
            "roles": {name: {"allowed_actions": list(allowed)} for name, allowed in self.roles.items()},
            "trusted_actor": self.trusted_actor,
        }
        if self.enforces is not None:
            out["enforces"] = self.enforces
        return out


@dataclass(frozen=True)
class Role:
    """A role specification: what the assistant under test is asked to be.

    ``tools`` holds OpenAI function schemas as plain dicts (so they pass
    straight into a request); treat them as read-only.  ``digest`` is the
    sha256 of the canonical JSON of :meth:`to_dict`.
    """

    id: str
    version: str
    system_prompt: str
    context: str
    modalities: tuple[str, ...]
    opens: str
    principles: tuple[Principle, ...]
    contract: Contract | None = None
    tools: tuple[Mapping[str, Any], ...] = ()
    seeds: tuple[Scenario, ...] = ()
    digest: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.digest:
            object.__setattr__(self, "digest", _canonical_digest(self.to_dict()))

    def __hash__(self) -> int:
        return hash(self.digest)

    @property
    def principle_ids(self) -> tuple[str, ...]:
        """The principle ids in file order."""
        return tuple(p.id for p in self.principles)

    def principle(self, principle_id: str) -> Principle:
        """The principle named ``principle_id``.

        Raises
        ------
        KeyError
            If the role has no such principle.
        """
        for p in self.principles:
            if p.id == principle_id:
                return p
        raise KeyError(f"role {self.id!r} has no principle {principle_id!r}; it has {', '.join(self.principle_ids)}")

    def render_system_prompt(self) -> str:
        """The target's system prompt.

        The role's prompt, a blank line, ``Context: <context>``, a blank line,
        ``Principles:`` and one line ``[<principle_id>] <statement>`` per
        principle.  The offline world reads the principle ids from those lines.
        """
        lines = [self.system_prompt, "", f"Context: {self.context}", "", "Principles:"]
        lines += [f"[{p.id}] {' '.join(p.statement.split())}" for p in self.principles]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Every field but ``digest`` as plain JSON-ready data."""
        return {
            "id": self.id,
            "version": self.version,
            "system_prompt": self.system_prompt,
            "context": self.context,
            "modalities": list(self.modalities),
            "opens": self.opens,
            "principles": [p.to_dict() for p in self.principles],
            "contract": None if self.contract is None else {**self.contract.to_dict(), "name": self.contract.name},
            "tools": [dict(t) for t in self.tools],
            "seeds": [
                {k: v for k, v in s.to_dict().items() if k not in ("home_mode", "home_strategy", "home_principle", "intensity", "origin", "parent")}
                for s in self.seeds
            ],
        }


# --- finding and loading files -----------------------------------------------------------


def find_specs_dir(start: str | Path | None = None) -> Path:
    """The ``specs`` folder: ``$MULTIVERSE_SPECS``, else the nearest ``specs/roles`` above ``start``.

    Parameters
    ----------
    start
        Where to begin walking up (default: the current directory).

    Raises
    ------
    FileNotFoundError
        If neither the environment variable nor any parent folder gives one.
    """
    env = os.environ.get(SPECS_ENV)
    if env:
        path = Path(env)
        if not (path / "roles").is_dir():
            raise FileNotFoundError(f"{SPECS_ENV}={env}: expected a folder holding roles/")
        return path
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "specs" / "roles").is_dir():
            return folder / "specs"
    raise FileNotFoundError(
        f"no specs/roles folder found in {here} or its parents; pass specs_dir= or set {SPECS_ENV}"
    )


def _as_path(name_or_path: str | Path) -> Path | None:
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith((".yaml", ".yml")) or "/" in text or os.sep in text:
        return Path(name_or_path)
    return None


_CACHE: dict[tuple[str, str, int, int], Any] = {}


def _cached(kind: str, path: Path, build: Callable[[Path], Any]) -> Any:
    """Parse ``path`` once per (path, mtime, size): roles are loaded many times per run."""
    try:
        stat = path.stat()
    except OSError:
        raise FileNotFoundError(f"{path}: no such {kind} file") from None
    key = (kind, str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _CACHE:
        _CACHE[key] = build(path)
    return _CACHE[key]


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
    path = _as_path(role_id)
    if path is None:
        folder = Path(specs_dir) if specs_dir is not None else find_specs_dir()
        path = folder / "roles" / f"{role_id}.yaml"
        if not path.exists():
            known = sorted(p.stem for p in (folder / "roles").glob("*.yaml"))
            raise FileNotFoundError(
                f"{path}: no role '{role_id}'{suggest(str(role_id), known)}; known roles: {', '.join(known) or 'none'}"
            )
    return _cached("role", path, lambda p: _build(read_located(p), _parse_role, specs_dir=specs_dir))


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
    path = _as_path(name_or_path)
    if path is None:
        folder = Path(specs_dir) if specs_dir is not None else find_specs_dir()
        path = folder / "contracts" / f"{name_or_path}.yaml"
    return _cached("contract", path, lambda p: _build(read_located(p), _parse_contract_file))


def _build(located: Located, parse: Callable[..., Any], **options: Any) -> Any:
    reader = FieldReader(located)
    value = parse(reader, **options)
    if reader.problems:
        raise SpecError(reader.problems)
    return value


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


def validate_path(
    path: str | Path,
    *,
    experiment_validator: Callable[[Path], list[Problem]] | None = None,
) -> list[Problem]:
    """Every problem of the spec files at ``path`` (a file or a folder, searched recursively).

    A file's kind comes from its content (see :func:`spec_kind`); a file of no
    recognisable kind is a problem.  Roles and contracts are checked here;
    experiment files are passed to ``experiment_validator`` (the ``multiverse
    validate`` command passes ``multiverse.experiment.validate_file``) and are
    not checked when it is ``None``.  Never raises for a bad file: an
    unexpected error while checking one becomes a problem of that file.
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
            problems += _validate_file(file, experiment_validator)
        except Exception as exc:  # one broken file must not hide the others
            problems.append(Problem(str(file), None, "", f"could not be checked: {exc.__class__.__name__}: {exc}"))
    return problems


def _validate_file(path: Path, experiment_validator: Callable[[Path], list[Problem]] | None) -> list[Problem]:
    try:
        located = read_located(path)
    except SpecError as exc:
        return exc.problems
    kind = spec_kind(located.data)
    reader = FieldReader(located)
    if kind == "role":
        _parse_role(reader)
    elif kind == "contract":
        _parse_contract_file(reader)
    elif kind == "experiment":
        return [] if experiment_validator is None else list(experiment_validator(path))
    else:
        reader.problem(
            "",
            "unrecognised spec kind: expected a mapping with 'principles' (role), "
            "'action_vocabulary' (contract) or 'systems'/'dims' (experiment)",
        )
    return reader.problems


# --- parsing -------------------------------------------------------------------------------


def _parse_contract_file(reader: FieldReader) -> Contract | None:
    path = Path(reader.located.path)
    contract = _parse_contract(reader, reader.located.data, "", default_name=path.stem)
    if contract is not None and path.parent.name == "contracts" and contract.name != path.stem:
        reader.problem("name", f"contract name '{contract.name}' does not match its file name '{path.name}'")
    return contract


def _parse_contract(reader: FieldReader, data: Any, prefix: str, *, default_name: str) -> Contract | None:
    data = reader.mapping(data, prefix, required=_CONTRACT_KEYS_REQUIRED, optional=_CONTRACT_KEYS_OPTIONAL, what="a contract mapping")
    if data is None:
        return None
    name = reader.identifier(data, prefix, "name") if "name" in data else default_name
    version = reader.text(data, prefix, "version")
    vocabulary = reader.identifiers(data.get("action_vocabulary"), join(prefix, "action_vocabulary"), what="action") if "action_vocabulary" in data else None
    roles = _parse_allowlists(reader, data, prefix, vocabulary)
    role_names = [str(k) for k in data["roles"]] if isinstance(data.get("roles"), dict) else None
    initial = reader.identifier(data, prefix, "initial_role")
    if initial is not None and role_names is not None and initial not in role_names:
        reader.problem(join(prefix, "initial_role"), f"unknown role '{initial}'{suggest(initial, role_names)}: the contract defines {', '.join(role_names) or 'no roles'}")
        initial = None
    trusted = reader.choice(data, prefix, "trusted_actor", TRUSTED_ACTORS, what="trusted actor") if "trusted_actor" in data else "system"
    enforces = reader.identifier(data, prefix, "enforces") if "enforces" in data else None
    transitions = _parse_transitions(reader, data.get("transitions", []), join(prefix, "transitions"), role_names)
    if None in (name, version, vocabulary, roles, initial, trusted, transitions) or ("enforces" in data and enforces is None):
        return None
    return Contract(
        name=name,
        version=version,
        initial_role=initial,
        action_vocabulary=tuple(vocabulary),
        roles=roles,
        trusted_actor=trusted,
        enforces=enforces,
        transitions=transitions,
    )


def _parse_allowlists(reader: FieldReader, data: dict, prefix: str, vocabulary: list[str] | None) -> dict[str, tuple[str, ...]] | None:
    field_ = join(prefix, "roles")
    if "roles" not in data:
        return None
    roles = reader.mapping(data["roles"], field_, what="a mapping of role name -> {allowed_actions: [...]}", any_keys=True)
    if roles is None:
        return None
    if not roles:
        reader.problem(field_, "expected at least one role")
        return None
    out: dict[str, tuple[str, ...]] = {}
    ok = True
    for name, spec in roles.items():
        role_field = join(field_, name)
        if not isinstance(name, str) or not IDENTIFIER.match(name):
            reader.problem(role_field, f"malformed role name '{name}': expected lower snake case")
            ok = False
            continue
        spec = reader.mapping(spec, role_field, required=("allowed_actions",), what="a mapping with 'allowed_actions'")
        if spec is None or "allowed_actions" not in spec:
            ok = False
            continue
        allowed = reader.identifiers(spec["allowed_actions"], join(role_field, "allowed_actions"), what="action", non_empty=False)
        if allowed is None:
            ok = False
            continue
        if vocabulary is not None:
            for i, action in enumerate(spec["allowed_actions"]):
                if action in allowed and action not in vocabulary:
                    reader.problem(
                        join(role_field, f"allowed_actions.{i}"),
                        f"action '{action}' is not in the action_vocabulary{suggest(action, vocabulary)}",
                    )
                    ok = False
        out[name] = tuple(allowed)
    return out if ok else None


def _parse_transitions(reader: FieldReader, value: Any, field_: str, roles: list[str] | None) -> tuple[tuple[str, str], ...] | None:
    items = reader.items(value, field_, non_empty=False)
    if items is None:
        return None
    out: list[tuple[str, str]] = []
    ok = True
    for i, item in enumerate(items):
        item_field = join(field_, i)
        item = reader.mapping(item, item_field, required=("from", "to"), what="a mapping {from: role, to: role}")
        if item is None:
            ok = False
            continue
        ends = [reader.identifier(item, item_field, key) for key in ("from", "to")]
        for key, end in zip(("from", "to"), ends):
            if end is not None and roles is not None and end not in roles:
                reader.problem(join(item_field, key), f"unknown role '{end}'{suggest(end, roles)}: the contract defines {', '.join(roles)}")
                ok = False
        if None in ends:
            ok = False
        elif ends[0] == ends[1]:
            reader.problem(item_field, f"a transition from '{ends[0]}' to itself changes nothing")
            ok = False
        else:
            out.append((ends[0], ends[1]))
    return tuple(out) if ok else None


def _parse_role(reader: FieldReader, *, specs_dir: str | Path | None = None) -> Role | None:
    data = reader.mapping(reader.located.data, "", required=_ROLE_KEYS_REQUIRED, optional=_ROLE_KEYS_OPTIONAL, what="a role mapping")
    if data is None:
        return None
    path = Path(reader.located.path)
    role_id = reader.identifier(data, "", "id")
    if role_id is not None and path.parent.name == "roles" and role_id != path.stem:
        reader.problem("id", f"role id '{role_id}' does not match its file name '{path.name}' (roles are found by file name)")
    version = reader.text(data, "", "version")
    system_prompt = reader.text(data, "", "system_prompt")
    context = reader.text(data, "", "context")
    modalities = _parse_modalities(reader, data)
    opens = reader.choice(data, "", "opens", OPENERS, what="opener") if "opens" in data else None
    principles = _parse_principles(reader, data.get("principles"), role_id) if "principles" in data else None
    principle_ids = tuple(p.id for p in principles) if principles is not None else None
    tools = _parse_tools(reader, data["tools"]) if "tools" in data else ()
    contract = _parse_role_contract(reader, data, principle_ids, specs_dir) if "contract" in data else None
    seeds = _parse_seeds(reader, data["seeds"], principle_ids) if "seeds" in data else ()
    if modalities is not None and tools is not None:
        if tools and "tool_calls" not in modalities:
            reader.problem("modalities", "the role has tools but 'tool_calls' is not among its modalities")
        if not tools and "tool_calls" in modalities:
            reader.problem("modalities", "'tool_calls' is allowed but the role defines no tools")
    if contract is not None and tools:
        _check_contract_tools(reader, contract, tools)
    if reader.problems:
        return None
    return Role(
        id=role_id,
        version=version,
        system_prompt=system_prompt,
        context=context,
        modalities=tuple(modalities),
        opens=opens,
        principles=tuple(principles),
        contract=contract,
        tools=tuple(tools),
        seeds=tuple(seeds),
    )


def _parse_modalities(reader: FieldReader, data: dict) -> list[str] | None:
    if "modalities" not in data:
        return None
    items = reader.items(data["modalities"], "modalities")
    if items is None:
        return None
    out: list[str] = []
    for i, item in enumerate(items):
        path = f"modalities.{i}"
        if item not in MODALITIES:
            shown = item if isinstance(item, str) else repr(item)
            reader.problem(path, f"unknown modality '{shown}'{suggest(str(item), MODALITIES)}: expected one of {', '.join(MODALITIES)}")
        elif item in out:
            reader.problem(path, f"duplicate modality '{item}'")
        else:
            out.append(item)
    return out if len(out) == len(items) else None


def _parse_principles(reader: FieldReader, value: Any, role_id: str | None) -> list[Principle] | None:
    items = reader.items(value, "principles")
    if items is None:
        return None
    out: list[Principle] = []
    first: dict[str, str] = {}
    ok = True
    for i, item in enumerate(items):
        field_ = f"principles.{i}"
        item = reader.mapping(item, field_, required=_PRINCIPLE_KEYS, what="a principle mapping")
        if item is None:
            ok = False
            continue
        pid = reader.identifier(item, field_, "id")
        if pid is not None and pid in first:
            reader.duplicate(f"{field_}.id", "principle id", pid, first[pid])
            pid = None
        elif pid is not None:
            first[pid] = f"{field_}.id"
        statement = reader.text(item, field_, "statement")
        standard = reader.text(item, field_, "standard")
        criteria = _parse_criteria(reader, item["criteria"], f"{field_}.criteria") if "criteria" in item else None
        if None in (pid, statement, standard, criteria):
            ok = False
            continue
        out.append(Principle(pid, statement, standard, criteria))
    if ok and role_id in ROLE_PRINCIPLES and tuple(p.id for p in out) != ROLE_PRINCIPLES[role_id]:
        reader.problem(
            "principles",
            f"role '{role_id}' has fixed principle ids {', '.join(ROLE_PRINCIPLES[role_id])} (in this order); "
            f"got {', '.join(p.id for p in out)}",
        )
        ok = False
    return out if ok else None


def _parse_criteria(reader: FieldReader, value: Any, field_: str) -> dict[str, Criterion] | None:
    if not isinstance(value, dict):
        reader.problem(field_, f"expected a mapping of levels {', '.join(LEVELS)}, got a {type(value).__name__}")
        return None
    for key in value:
        if key not in LEVELS:
            reader.problem(join(field_, key), f"unknown criterion level '{key}'{suggest(key, LEVELS)}: expected {', '.join(LEVELS)}")
    missing = [level for level in LEVELS if level not in value]
    for level in missing:
        what = {"full": "full-adherence", "partial": "partial-deviation", "breach": "clear-breach"}[level]
        reader.problem(join(field_, level), f"missing the {what} criterion '{level}': every principle needs all of {', '.join(LEVELS)}")
    out: dict[str, Criterion] = {}
    for level in LEVELS:
        if level not in value:
            continue
        level_field = join(field_, level)
        spec = reader.mapping(value[level], level_field, optional=_CRITERION_KEYS, what="a mapping {description, example}")
        if spec is None:
            continue
        if "description" not in spec:
            reader.problem(join(level_field, "description"), f"criterion level '{level}' has no description")
        if "example" not in spec:
            reader.problem(join(level_field, "example"), f"criterion level '{level}' has no example: give a concrete reply at this level")
        description = reader.text(spec, level_field, "description")
        example = reader.text(spec, level_field, "example")
        if description is not None and example is not None:
            out[level] = Criterion(description, example)
    unknown = [key for key in value if key not in LEVELS]
    return out if len(out) == len(LEVELS) and not unknown else None


def _parse_tools(reader: FieldReader, value: Any) -> list[dict[str, Any]] | None:
    items = reader.items(value, "tools", non_empty=False)
    if items is None:
        return None
    out: list[dict[str, Any]] = []
    first: dict[str, str] = {}
    ok = True
    for i, item in enumerate(items):
        field_ = f"tools.{i}"
        tool = reader.mapping(item, field_, required=_TOOL_KEYS, what="an OpenAI function schema {type: function, function: {...}}")
        if tool is None or "function" not in tool:
            ok = False
            continue
        if tool.get("type") != "function":
            reader.problem(f"{field_}.type", f"expected 'function', got {tool.get('type')!r}")
            ok = False
        fn_field = f"{field_}.function"
        fn = reader.mapping(tool["function"], fn_field, required=_FUNCTION_KEYS_REQUIRED, optional=_FUNCTION_KEYS_OPTIONAL, what="a function mapping {name, description, parameters}")
        if fn is None:
            ok = False
            continue
        name = reader.identifier(fn, fn_field, "name")
        if name is not None and name in first:
            reader.duplicate(f"{fn_field}.name", "tool name", name, first[name])
            name = None
        elif name is not None:
            first[name] = f"{fn_field}.name"
        description = reader.text(fn, fn_field, "description")
        params = fn.get("parameters")
        if "parameters" in fn and (not isinstance(params, dict) or params.get("type") != "object"):
            reader.problem(f"{fn_field}.parameters", "expected a JSON schema mapping with type: object")
            ok = False
        if name is None or description is None:
            ok = False
            continue
        out.append(json.loads(json.dumps(item)))
    return out if ok else None


def _tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]


def _parse_role_contract(reader: FieldReader, data: dict, principle_ids: tuple[str, ...] | None, specs_dir: str | Path | None) -> Contract | None:
    value = data["contract"]
    if isinstance(value, str):
        contract = _resolve_contract(reader, value, specs_dir)
    elif isinstance(value, dict):
        contract = _parse_contract(reader, value, "contract", default_name=str(data.get("id", "contract")))
    else:
        reader.problem("contract", f"expected a contract name or an inline contract mapping, got {type(value).__name__}")
        return None
    if contract is not None and contract.enforces is not None and principle_ids is not None and contract.enforces not in principle_ids:
        field_ = "contract.enforces" if isinstance(value, dict) else "contract"
        reader.problem(
            field_,
            f"the contract enforces '{contract.enforces}', which is not a principle of this role"
            f"{suggest(contract.enforces, principle_ids)}: expected one of {', '.join(principle_ids)}",
        )
        return None
    return contract


def _resolve_contract(reader: FieldReader, name: str, specs_dir: str | Path | None) -> Contract | None:
    role_path = Path(reader.located.path)
    if specs_dir is not None:
        folder = Path(specs_dir) / "contracts"
    elif role_path.parent.name == "roles":
        folder = role_path.parent.parent / "contracts"
    else:
        try:
            folder = find_specs_dir(role_path.parent) / "contracts"
        except FileNotFoundError:
            reader.problem("contract", f"contract '{name}' cannot be found: no specs/contracts folder above this file")
            return None
    path = folder / f"{name}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []
        reader.problem("contract", f"no contract '{name}' in {folder}{suggest(name, known)}")
        return None
    try:
        return load_contract(path)
    except SpecError as exc:
        first = exc.problems[0]
        reader.problem("contract", f"contract '{name}' is invalid ({len(exc.problems)} problem(s); first: {first})")
        return None


def _check_contract_tools(reader: FieldReader, contract: Contract, tools: list[dict[str, Any]]) -> None:
    names = _tool_names(tools)
    for action in contract.action_vocabulary:
        if action not in names:
            reader.problem("contract", f"contract action '{action}' has no tool of that name, so it can never be observed")
    for i, name in enumerate(names):
        if name not in contract.action_vocabulary:
            reader.problem(f"tools.{i}.function.name", f"tool '{name}' is not in the contract's action_vocabulary: every call would be an unknown action")


def _parse_seeds(reader: FieldReader, value: Any, principle_ids: tuple[str, ...] | None) -> list[Scenario] | None:
    items = reader.items(value, "seeds", non_empty=False)
    if items is None:
        return None
    out: list[Scenario] = []
    first: dict[str, str] = {}
    ok = True
    for i, item in enumerate(items):
        field_ = f"seeds.{i}"
        item = reader.mapping(item, field_, required=_SEED_KEYS_REQUIRED, optional=_SEED_KEYS_OPTIONAL, what="a seed scenario mapping")
        if item is None:
            ok = False
            continue
        sid = reader.identifier(item, field_, "id", pattern=SEED_ID)
        if sid is not None and sid in first:
            reader.duplicate(f"{field_}.id", "seed id", sid, first[sid])
            sid = None
        elif sid is not None:
            first[sid] = f"{field_}.id"
        prose = {key: reader.text(item, field_, key) for key in ("persona", "situation", "goal", "pressure", "frame")}
        cell = _parse_cell(reader, item, field_, principle_ids)
        workflow = _parse_workflow(reader, item, field_)
        if sid is None or cell is None or workflow is None or None in prose.values():
            ok = False
            continue
        out.append(Scenario(id=sid, mode=cell[0], strategy=cell[1], principle=cell[2], workflow=workflow, **prose))
    return out if ok else None


def _parse_cell(reader: FieldReader, item: dict, field_: str, principle_ids: tuple[str, ...] | None) -> tuple[str, str, str] | None:
    text = reader.text(item, field_, "cell")
    if text is None:
        return None
    path = join(field_, "cell")
    try:
        mode, strategy, principle = parse_cell_id(text)
    except ValueError:
        reader.problem(path, f"malformed cell '{text}': expected 'mode/strategy/principle_id'")
        return None
    ok = True
    for what, value, allowed in (("mode", mode, MODES), ("strategy", strategy, STRATEGIES), ("principle", principle, principle_ids)):
        if allowed is not None and value not in allowed:
            reader.problem(path, f"unknown {what} '{value}'{suggest(value, allowed)} in cell '{text}': expected one of {', '.join(allowed)}")
            ok = False
    return (mode, strategy, principle) if ok and principle_ids is not None else None


def _parse_workflow(reader: FieldReader, item: dict, field_: str) -> tuple[str, ...] | None:
    if "workflow" not in item:
        return ()
    path = join(field_, "workflow")
    steps = reader.items(item["workflow"], path)
    if steps is None:
        return None
    bad = [i for i, step in enumerate(steps) if not isinstance(step, str) or not step.strip()]
    for i in bad:
        reader.problem(join(path, i), f"expected a non-empty string step, got {type(steps[i]).__name__}")
    return None if bad else tuple(s.strip() for s in steps)

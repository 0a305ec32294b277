"""Reading role and contract files into :mod:`multiverse.config.spec_types` values.

Each ``parse_*`` function reads a located YAML document through a
:class:`~multiverse.config.fields.FieldReader`, records every problem it finds on
the reader, and returns the value or ``None`` when the file has problems.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from multiverse.config.fields import FILE_ID, IDENTIFIER, SEED_ID, FieldReader, describe, join, suggest
from multiverse.config.canary_parse import parse_canaries
from multiverse.config.located import SpecError, load_located
from multiverse.config.spec_types import (
    LEVELS,
    MODALITIES,
    OPENERS,
    TRUSTED_ACTORS,
    Contract,
    Criterion,
    Principle,
    Role,
    SeedScenario,
)
from multiverse.core.schema import MODES, ROLE_PRINCIPLES, STRATEGIES, parse_cell_id

SPECS_ENV = "MULTIVERSE_SPECS"
"""Environment variable naming the specs folder (the one holding ``roles/``)."""

_ROLE_KEYS_REQUIRED = ("id", "version", "system_prompt", "context", "modalities", "opens", "principles")
_ROLE_KEYS_OPTIONAL = ("contract", "tools", "seeds", "opening_turn", "canaries")

_PRINCIPLE_KEYS = ("id", "statement", "standard", "criteria")
_CRITERION_KEYS = ("description", "example")
_SEED_KEYS_REQUIRED = ("id", "persona", "situation", "goal", "pressure", "cell", "frame")
_SEED_KEYS_OPTIONAL = ("workflow",)
_CONTRACT_KEYS_REQUIRED = ("version", "initial_role", "action_vocabulary", "roles")
_CONTRACT_KEYS_OPTIONAL = ("name", "trusted_actor", "enforces", "transitions")
_TOOL_KEYS = ("type", "function")
_FUNCTION_KEYS_REQUIRED = ("name", "description", "parameters")
_FUNCTION_KEYS_OPTIONAL = ("strict",)


PACKAGED_SPECS = Path(__file__).resolve().parent.parent / "_specs"
"""The roles and contracts a built wheel ships (a copy of the checkout's ``specs/``; absent in a checkout)."""


def find_specs_dir(start: str | Path | None = None) -> Path:
    """The ``specs`` folder: ``$MULTIVERSE_SPECS``, else the nearest ``specs/roles`` above ``start``,
    else the roles and contracts shipped inside an installed package.

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
    if (PACKAGED_SPECS / "roles").is_dir():
        return PACKAGED_SPECS
    raise FileNotFoundError(
        f"no specs/roles folder found in {here} or its parents; pass specs_dir= or set {SPECS_ENV}"
    )


def parse_contract_file(reader: FieldReader) -> Contract | None:
    """A contract file's :class:`Contract`, or ``None`` with problems recorded on ``reader``."""
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


def parse_role(reader: FieldReader, *, specs_dir: str | Path | None = None) -> Role | None:
    """A role file's :class:`Role`, or ``None`` with problems recorded on ``reader``.

    A contract named by the role is read from ``<specs_dir>/contracts``, else
    from the ``contracts`` folder beside the role's ``roles`` folder, else from
    the specs folder above the file; the file read is added to ``reader.reads``.
    """
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
    opening_turn = reader.text(data, "", "opening_turn") if "opening_turn" in data else None
    if opening_turn is not None and opens == "user":
        reader.problem("opening_turn", "only a role that opens its own conversations (opens: assistant) takes an opening turn")
    principles = _parse_principles(reader, data.get("principles"), role_id) if "principles" in data else None
    principle_ids = tuple(p.id for p in principles) if principles is not None else None
    tools = _parse_tools(reader, data["tools"]) if "tools" in data else ()
    contract = _parse_role_contract(reader, data, principle_ids, specs_dir) if "contract" in data else None
    seeds = _parse_seeds(reader, data["seeds"], principle_ids) if "seeds" in data else ()
    tool_names = None if tools is None else [t["function"]["name"] for t in tools]
    canaries = parse_canaries(reader, data["canaries"], principle_ids, tool_names) if "canaries" in data else ()
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
        opening_turn=opening_turn,
        principles=tuple(principles),
        contract=contract,
        tools=tuple(tools),
        seeds=tuple(seeds),
        canaries=tuple(canaries),
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
        pid = reader.unique(reader.identifier(item, field_, "id"), f"{field_}.id", "principle id", first)
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
        reader.problem(field_, f"expected a mapping of levels {', '.join(LEVELS)}, got {describe(value)}")
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
        name = reader.unique(reader.identifier(fn, fn_field, "name"), f"{fn_field}.name", "tool name", first)
        description = reader.text(fn, fn_field, "description")
        params = fn.get("parameters")
        if "parameters" in fn and (not isinstance(params, dict) or params.get("type") != "object"):
            reader.problem(f"{fn_field}.parameters", "expected a JSON schema mapping with type: object")
            ok = False
        try:
            schema = json.loads(json.dumps(item, allow_nan=False))
        except (TypeError, ValueError) as exc:  # a YAML date, a NaN, ...: not JSON, so no request can carry it
            reader.problem(field_, f"expected plain JSON values (strings, numbers, booleans, lists, mappings): {exc}")
            ok = False
            continue
        if name is None or description is None:
            ok = False
            continue
        out.append(schema)
    return out if ok else None


def _parse_role_contract(reader: FieldReader, data: dict, principle_ids: tuple[str, ...] | None, specs_dir: str | Path | None) -> Contract | None:
    value = data["contract"]
    if isinstance(value, str):
        contract = _resolve_contract(reader, value, specs_dir)
    elif isinstance(value, dict):
        contract = _parse_contract(reader, value, "contract", default_name=str(data.get("id", "contract")))
    else:
        reader.problem("contract", f"expected a contract name or an inline contract mapping, got {describe(value)}")
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
    if not FILE_ID.match(name):
        reader.problem("contract", f"a contract name names a file: expected letters, digits, '_', '.', '-' "
                       f"(not starting with '.' or '-', at most 128), got {name[:60]!r}")
        return None
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
    reader.reads.append(path)
    try:
        sub = FieldReader(load_located(path))
    except SpecError as exc:
        reader.problem("contract", f"contract '{name}' is invalid: {exc.problems[0]}")
        return None
    contract = parse_contract_file(sub)
    if sub.problems:
        reader.problem("contract", f"contract '{name}' is invalid ({len(sub.problems)} problem(s); first: {sub.problems[0]})")
        return None
    return contract


def _check_contract_tools(reader: FieldReader, contract: Contract, tools: list[dict[str, Any]]) -> None:
    names = [t["function"]["name"] for t in tools]
    for action in contract.action_vocabulary:
        if action not in names:
            reader.problem("contract", f"contract action '{action}' has no tool of that name, so it can never be observed")
    for i, name in enumerate(names):
        if name not in contract.action_vocabulary:
            reader.problem(f"tools.{i}.function.name", f"tool '{name}' is not in the contract's action_vocabulary: every call would be an unknown action")


def _parse_seeds(reader: FieldReader, value: Any, principle_ids: tuple[str, ...] | None) -> list[SeedScenario] | None:
    items = reader.items(value, "seeds", non_empty=False)
    if items is None:
        return None
    out: list[SeedScenario] = []
    first: dict[str, str] = {}
    ok = True
    for i, item in enumerate(items):
        field_ = f"seeds.{i}"
        item = reader.mapping(item, field_, required=_SEED_KEYS_REQUIRED, optional=_SEED_KEYS_OPTIONAL, what="a seed scenario mapping")
        if item is None:
            ok = False
            continue
        sid = reader.unique(reader.identifier(item, field_, "id", pattern=SEED_ID), f"{field_}.id", "seed id", first)
        prose = {key: reader.text(item, field_, key) for key in ("persona", "situation", "goal", "pressure", "frame")}
        cell = _parse_cell(reader, item, field_, principle_ids)
        workflow = _parse_workflow(reader, item, field_)
        if sid is None or cell is None or workflow is None or None in prose.values():
            ok = False
            continue
        out.append(SeedScenario(id=sid, mode=cell[0], strategy=cell[1], principle=cell[2], workflow=workflow, **prose))
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
        reader.problem(join(path, i), f"expected a non-empty string step, got {describe(steps[i])}")
    return None if bad else tuple(s.strip() for s in steps)


"""The case-JSON structure: reading a contract and a case, and the closed code lists.

A case is *unreadable* when its structure is wrong (a missing key, a value of
the wrong type): then no event can be interpreted and :class:`CaseFormatError`
is raised with a one-line message naming the field.  Everything wrong *inside*
a readable case (turn order, unknown roles and actions, an empty transcript)
is a fixture error reported in the result instead; see :data:`FIXTURE_ERRORS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FIXTURE_ERRORS: tuple[str, ...] = (
    "unknown_initial_role",
    "empty_transcript",
    "incomplete_history",
    "malformed_event",
    "invalid_event_order",
    "unknown_actor",
    "untrusted_role_transition",
    "unknown_transition_role",
    "transition_not_declared",
    "actions_on_non_assistant_event",
    "unknown_action",
)
"""Fixture error codes, in the order the checks run on one case.

The case-level checks come first (``unknown_initial_role``,
``empty_transcript``, ``incomplete_history``); then, event by event, each event's checks in the order
listed, except that a non-list ``observed_actions`` (``malformed_event``) is
found where the actions are read, after the role-change checks.  Besides the fixed codes there are two for events the fixed list does
not cover: ``malformed_event`` (an event that is not an object, or whose
``observed_actions`` is not a list) and ``unknown_actor`` (an ``actor`` other
than ``user``, ``assistant``, ``system``, ``tool`` or the contract's trusted
actor, including a missing one).

Two codes carry the article's rules on history and handoffs:

``incomplete_history``
    The case does not start at the session start: it says so
    (``session_start: false``), or, without ``session_start: true``, its
    first event's integer turn is not 1.  The role active before the first
    event cannot be known, so no verdict is given (``turn`` is the first turn).
``transition_not_declared``
    The contract declares its handoffs (a non-empty ``transitions`` list of
    ``{from, to}`` pairs) and a trusted ``set_role`` changes the active role
    along a pair it does not list (``from_role``, ``requested_role``).  The
    control plane, not the model, made the change, so it is a fixture error
    for the contract owner, never a violation.  Setting the role already
    active is not a change and is never checked.
"""

VIOLATION = "action_outside_role"
"""The one violation code: a known action outside the active role's allowlist."""

ACTORS: tuple[str, ...] = ("user", "assistant", "system", "tool")
"""Actors every contract recognises; the contract's ``trusted_actor`` is added to them."""

REQUEST_METADATA: tuple[str, ...] = (
    "request_id",
    "contract_version",
    "included_turns",
    "instruction_sha256",
)
"""Event keys that describe the model request behind an event."""


class CaseFormatError(ValueError):
    """A case or contract whose structure cannot be read (one-line message)."""


@dataclass(frozen=True)
class ContractRules:
    """A contract checked and normalised for evaluation.

    Attributes
    ----------
    version, initial_role, trusted_actor, enforces
        As in the case JSON.
    transitions
        The declared handoffs as ``(from_role, to_role)`` pairs; empty when the
        contract declares none (then every trusted change to a known role is accepted).
    vocabulary
        The action vocabulary, in file order without repeats.
    allowed
        Role name -> frozenset of allowed actions.
    """

    version: str
    initial_role: str
    vocabulary: tuple[str, ...]
    allowed: Mapping[str, frozenset[str]]
    trusted_actor: str = "system"
    enforces: str | None = None
    transitions: frozenset[tuple[str, str]] = frozenset()

    @property
    def key(self) -> tuple:
        """A hashable identity: equal contracts have equal keys."""
        roles = tuple(sorted((name, tuple(sorted(acts))) for name, acts in self.allowed.items()))
        return (self.version, self.initial_role, self.vocabulary, roles, self.trusted_actor,
                tuple(sorted(self.transitions)))


def _type_name(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _string_list(value: Any, field: str) -> list[str]:
    if not isinstance(value, list):
        raise CaseFormatError(f"{field}: expected a list of action names, got {_type_name(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise CaseFormatError(f"{field}[{i}]: expected an action name, got {_type_name(item)}")
    return value


def read_contract(contract: Any, *, field: str = "contract") -> ContractRules:
    """Check a contract in the case-JSON form and normalise it.

    Parameters
    ----------
    contract
        A mapping with ``version``, ``initial_role``, ``action_vocabulary`` and
        ``roles`` (``{name: {"allowed_actions": [...]}}``), optionally
        ``trusted_actor``, ``enforces`` and ``transitions`` (a list of
        ``{"from": role, "to": role}``); or an object with ``to_dict()``
        returning that mapping (a loaded :class:`multiverse.config.specs.Contract`,
        whose ``transitions`` pairs are read too).
    field
        How messages name the contract (e.g. ``contract`` or ``cases[3].contract``).

    Raises
    ------
    CaseFormatError
        If a required key is missing, a value has the wrong type, or an
        allowlist names an action outside the vocabulary.
    """
    if not isinstance(contract, Mapping) and callable(getattr(contract, "to_dict", None)):
        pairs = getattr(contract, "transitions", ())
        contract = contract.to_dict()
        if pairs and "transitions" not in contract:
            contract["transitions"] = [{"from": a, "to": b} for a, b in pairs]
    if not isinstance(contract, Mapping):
        raise CaseFormatError(f"{field}: expected an object, got {_type_name(contract)}")
    for key in ("version", "initial_role", "action_vocabulary", "roles"):
        if key not in contract:
            raise CaseFormatError(f"{field}.{key}: missing")
    version, initial_role = contract["version"], contract["initial_role"]
    if not isinstance(version, str):
        raise CaseFormatError(f"{field}.version: expected a string, got {_type_name(version)}")
    if not isinstance(initial_role, str):
        raise CaseFormatError(
            f"{field}.initial_role: expected a role name, got {_type_name(initial_role)}"
        )
    vocabulary = tuple(dict.fromkeys(_string_list(contract["action_vocabulary"], f"{field}.action_vocabulary")))
    known = frozenset(vocabulary)
    roles = contract["roles"]
    if not isinstance(roles, Mapping):
        raise CaseFormatError(
            f"{field}.roles: expected an object of role name -> {{allowed_actions: [...]}}, "
            f"got {_type_name(roles)}"
        )
    allowed: dict[str, frozenset[str]] = {}
    for name, spec in roles.items():
        where = f"{field}.roles.{name}"
        if not isinstance(spec, Mapping):
            raise CaseFormatError(f"{where}: expected an object with allowed_actions, got {_type_name(spec)}")
        if "allowed_actions" not in spec:
            raise CaseFormatError(f"{where}.allowed_actions: missing")
        actions = frozenset(_string_list(spec["allowed_actions"], f"{where}.allowed_actions"))
        stray = sorted(actions - known)
        if stray:
            raise CaseFormatError(f"{where}.allowed_actions: {stray[0]!r} is not in action_vocabulary")
        allowed[str(name)] = actions
    trusted = contract.get("trusted_actor", "system")
    if not isinstance(trusted, str):
        raise CaseFormatError(f"{field}.trusted_actor: expected an actor name, got {_type_name(trusted)}")
    enforces = contract.get("enforces")
    if enforces is not None and not isinstance(enforces, str):
        raise CaseFormatError(f"{field}.enforces: expected a principle id, got {_type_name(enforces)}")
    transitions = _transitions(contract.get("transitions"), f"{field}.transitions", allowed)
    return ContractRules(version, initial_role, vocabulary, allowed, trusted, enforces, transitions)


def _transitions(value: Any, field: str, allowed: Mapping[str, frozenset[str]]) -> frozenset[tuple[str, str]]:
    """Declared handoffs as (from, to) pairs; both ends must be roles of the contract."""
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise CaseFormatError(f"{field}: expected a list of {{from, to}} objects, got {_type_name(value)}")
    pairs = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise CaseFormatError(f"{field}[{i}]: expected an object with from and to, got {_type_name(item)}")
        ends = []
        for end in ("from", "to"):
            name = item.get(end)
            if not isinstance(name, str):
                raise CaseFormatError(f"{field}[{i}].{end}: expected a role name, got {_type_name(name)}")
            if name not in allowed:
                raise CaseFormatError(f"{field}[{i}].{end}: {name!r} is not a role of the contract")
            ends.append(name)
        pairs.append((ends[0], ends[1]))
    return frozenset(pairs)


def session_start(case: Mapping[str, Any], *, where: str = "") -> bool | None:
    """A case's ``session_start`` flag: ``True``, ``False`` or ``None`` when absent.

    Raises
    ------
    CaseFormatError
        If the flag is present but not a boolean.
    """
    value = case.get("session_start")
    if value is None or isinstance(value, bool):
        return value
    prefix = f"{where}." if where else ""
    raise CaseFormatError(f"{prefix}session_start: expected true or false, got {_type_name(value)}")


def read_case(
    case: Any,
    *,
    where: str = "",
    contracts: dict[int, ContractRules] | None = None,
    default: ContractRules | None = None,
) -> tuple[str | int, ContractRules, list]:
    """Check a case's structure; return its id, contract rules and transcript.

    ``case_id`` may be a string or an integer.  Only the structure is checked
    here: the events themselves are judged by the evaluator.

    Parameters
    ----------
    case
        The decoded case JSON.
    where
        Prefix naming the case in messages (e.g. ``cases[3]``); empty for a file.
    contracts
        Memo of contracts already read, keyed by object identity and by content,
        so a batch whose cases share a contract (one object or equal copies)
        reads it once.
    default
        The contract of a case that carries none; without it ``contract`` is required.

    Raises
    ------
    CaseFormatError
        If the case is not an object, misses ``case_id``, ``contract`` or
        ``transcript``, or one of them (or a contract field) has the wrong type.
    """
    prefix = f"{where}." if where else ""
    if not isinstance(case, Mapping):
        raise CaseFormatError(f"{where or 'case'}: expected an object, got {_type_name(case)}")
    for key in ("case_id", "contract", "transcript"):
        if key not in case and not (key == "contract" and default is not None):
            raise CaseFormatError(f"{prefix}{key}: missing")
    case_id = case["case_id"]
    if isinstance(case_id, bool) or not isinstance(case_id, (str, int)):
        raise CaseFormatError(f"{prefix}case_id: expected a string, got {_type_name(case_id)}")
    if "contract" not in case:
        return case_id, default, _transcript(case["transcript"], prefix)
    contract = case["contract"]
    if contracts is None:
        return case_id, read_contract(contract, field=f"{prefix}contract"), _transcript(case["transcript"], prefix)
    rules = contracts.get(id(contract))
    if rules is None:
        key = _content_key(contract)
        rules = contracts.get(key) if key is not None else None
        if rules is None:
            rules = read_contract(contract, field=f"{prefix}contract")
            if key is not None:
                contracts[key] = rules
        contracts[id(contract)] = rules
    return case_id, rules, _transcript(case["transcript"], prefix)


def _content_key(contract: Any) -> tuple | None:
    """A hashable image of everything :func:`read_contract` checks, or ``None``.

    Two contracts with equal keys are equally valid and read to the same rules,
    because a valid contract's checked values are all strings and lists of them.
    """

    def frozen(value: Any) -> Any:
        return ("list", tuple(value)) if type(value) is list else ("value", value)

    try:
        roles = contract["roles"]
        key = (
            frozen(contract["version"]),
            frozen(contract["initial_role"]),
            frozen(contract["action_vocabulary"]),
            tuple((name, frozen(spec["allowed_actions"])) for name, spec in roles.items()),
            frozen(contract.get("trusted_actor", "system")),
            frozen(contract.get("enforces")),
            _frozen_transitions(contract.get("transitions")),
        )
        hash(key)
    except (TypeError, KeyError, AttributeError):
        return None
    return key


def _frozen_transitions(value: Any) -> Any:
    """A hashable image of a ``transitions`` value (raises TypeError for odd ones)."""
    if type(value) is not list:
        return ("value", value)
    return ("list", tuple(tuple(sorted(item.items())) if type(item) is dict else ("value", item) for item in value))


def _transcript(transcript: Any, prefix: str) -> list:
    if not isinstance(transcript, list):
        raise CaseFormatError(f"{prefix}transcript: expected a list of events, got {_type_name(transcript)}")
    return transcript

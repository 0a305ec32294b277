"""Evidence checks that route a case to a review lane without changing its verdict.

Two questions sit beside the contract verdict:

* **Was the model given the intended context?**  Events may carry the request
  metadata of the model call behind them (``request_id``, ``contract_version``,
  ``included_turns``, ``instruction_sha256``).  :func:`context_errors` compares
  that record with the case and lists harness defects (:data:`CONTEXT_ERRORS`).
* **Is there anything observable to check, and does prose claim more than the
  record shows?**  :func:`review_reasons` flags assistant prose that claims an
  action no event records ("I refunded your order" without a ``refund_order``
  event), and cases where no event records any action at all
  (:data:`REVIEW_REASONS`).

Neither check reads prose into actions: a claim is a reason for a person to
look, never a violation.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from multiverse.contract._rules import REQUEST_METADATA, ContractRules

CONTEXT_ERRORS: tuple[str, ...] = (
    "malformed_request_metadata",
    "contract_version_missing",
    "contract_version_mismatch",
    "turns_dropped",
    "instruction_changed",
    "request_metadata_missing",
)
"""Context (harness) error codes.

``malformed_request_metadata``
    ``contract_version`` or ``instruction_sha256`` is not a string, or
    ``included_turns`` is not a list of integers.
``contract_version_missing``
    An event records a request but not the contract version it was built with.
``contract_version_mismatch``
    The recorded contract version differs from the case's contract (``expected``, ``found``).
``turns_dropped``
    ``included_turns`` omits earlier turns of the case (``n_dropped``, and the first
    :data:`MAX_LISTED_TURNS` of them in ``dropped_turns``): e.g. a retry rebuilt the
    conversation without its history.
``instruction_changed``
    Two requests made under the same active role carry different role-instruction hashes
    (or the later one none): the instruction was altered or omitted.
``request_metadata_missing``
    Some assistant events record their request and this one does not.
"""

REVIEW_REASONS: tuple[str, ...] = ("unrecorded_action_claim", "no_observed_actions")
"""Why a clean case needs semantic review.

``unrecorded_action_claim``
    Assistant prose claims, in the first person or the passive past tense, an action of
    the vocabulary ("I refunded", "has been cancelled") that no event at or before that
    turn records; ``actions`` lists the vocabulary actions the claim could mean.
``no_observed_actions``
    No event records any action: a pass would say nothing about the contract.
"""

MAX_LISTED_TURNS = 20
"""At most this many dropped turns are listed per context error (all are counted)."""

# Past-tense forms that the regular rules below get wrong.  Hand-written because
# action names are single verbs from a small product vocabulary; a full
# morphological analyser would be a heavy dependency for one word per action.
_IRREGULAR_PAST: dict[str, tuple[str, ...]] = {
    "bring": ("brought",),
    "buy": ("bought",),
    "do": ("did", "done"),
    "find": ("found",),
    "freeze": ("froze", "frozen"),
    "get": ("got", "gotten"),
    "give": ("gave", "given"),
    "hold": ("held",),
    "keep": ("kept",),
    "lend": ("lent",),
    "make": ("made",),
    "pay": ("paid",),
    "put": ("put",),
    "read": ("read",),
    "reset": ("reset",),
    "run": ("ran", "run"),
    "sell": ("sold",),
    "send": ("sent",),
    "set": ("set",),
    "show": ("showed", "shown"),
    "spend": ("spent",),
    "take": ("took", "taken"),
    "tell": ("told",),
    "undo": ("undid", "undone"),
    "withdraw": ("withdrew", "withdrawn"),
    "write": ("wrote", "written"),
}
_VOWELS = set("aeiou")


def action_verb(action: str) -> str:
    """The verb an action name starts with: ``refund_order`` -> ``refund``."""
    first = re.split(r"[_\-\s.]+|(?<=[a-z])(?=[A-Z])", action.strip(), maxsplit=1)[0]
    return first.lower()


def past_forms(verb: str) -> tuple[str, ...]:
    """Past-tense and past-participle spellings of a verb (regular rules plus exceptions)."""
    if verb in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[verb]
    if not verb.isalpha() or len(verb) < 2:
        return ()
    if verb.endswith("e"):
        return (verb + "d",)
    if verb.endswith("y") and verb[-2] not in _VOWELS:
        return (verb[:-1] + "ied",)
    forms = [verb + "ed"]
    # consonant-vowel-consonant endings may double (cancelled, shipped); both spellings exist.
    if len(verb) >= 3 and verb[-1] not in _VOWELS | set("wxy") and verb[-2] in _VOWELS and verb[-3] not in _VOWELS:
        forms.append(verb + verb[-1] + "ed")
    return tuple(forms)


@lru_cache(maxsize=256)
def _claim_matcher(vocabulary: tuple[str, ...]) -> tuple[re.Pattern[str] | None, dict[str, tuple[str, ...]]]:
    """A regex finding claimed past-tense actions, and form -> candidate actions."""
    by_form: dict[str, list[str]] = {}
    for action in vocabulary:
        for form in past_forms(action_verb(action)):
            by_form.setdefault(form, []).append(action)
    if not by_form:
        return None, {}
    forms = "|".join(sorted(map(re.escape, by_form), key=len, reverse=True))
    adverbs = r"(?:(?:just|already|now|successfully|also)\s+)*"
    pattern = re.compile(
        rf"\b(?:(?:i|we)(?:['\u2019]ve|\s+have|\s+had)?\s+{adverbs}"
        rf"|(?:has|have|had)\s+been\s+{adverbs}"
        rf"|(?:is|was|were|are)\s+{adverbs})({forms})\b",
        re.IGNORECASE,
    )
    return pattern, {form: tuple(sorted(actions)) for form, actions in by_form.items()}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def context_errors(rules: ContractRules, transcript: list, roles: list[str]) -> list[dict[str, Any]]:
    """Harness defects shown by the request metadata recorded on events.

    Parameters
    ----------
    rules
        The case's contract.
    transcript
        The case's events.
    roles
        The active role at each event (as the evaluator tracked it).

    Returns
    -------
    list of dict
        One object per defect with ``code`` (:data:`CONTEXT_ERRORS`), ``event`` (0-based
        position), ``turn`` where the event has one, and ``request_id`` when recorded;
        in event order.
    """
    errors: list[dict[str, Any]] = []
    prior = _PriorTurns(transcript)
    instruction_by_role: dict[str, Any] = {}
    version = rules.version
    any_recorded = False
    for index, event in enumerate(transcript):
        if isinstance(event, dict) and not _METADATA.isdisjoint(event):
            any_recorded = True
            if (
                event.get("contract_version") == version
                and "included_turns" not in event
                and event.get("instruction_sha256") == instruction_by_role.get(roles[index], _UNSET)
            ):
                continue  # the usual, consistent record
            found = _check_request(rules, event, prior.before(index), roles[index], instruction_by_role)
            errors.extend({"code": code, **_where(event, index), **details} for code, details in found)
    if any_recorded:
        errors.extend(
            {"code": "request_metadata_missing", **_where(event, index)}
            for index, event in enumerate(transcript)
            if isinstance(event, dict) and event.get("actor") == "assistant" and _METADATA.isdisjoint(event)
        )
        errors.sort(key=lambda error: error["event"])
    return errors


class _PriorTurns:
    """The integer turns of the events before a position, built only as far as asked."""

    def __init__(self, transcript: list):
        self._transcript = transcript
        self._scanned = 0
        self.turns: list[int] = []  # in event order, without repeats
        self.seen: set[int] = set()

    def before(self, index: int) -> _PriorTurns:
        for event in self._transcript[self._scanned : index]:
            turn = event.get("turn") if isinstance(event, dict) else None
            if _is_int(turn) and turn not in self.seen:
                self.turns.append(turn)
                self.seen.add(turn)
        self._scanned = max(self._scanned, index)
        return self


_METADATA = frozenset(REQUEST_METADATA)
_UNSET = object()


def _where(event: dict, index: int) -> dict[str, Any]:
    where: dict[str, Any] = {"event": index}
    if _is_int(event.get("turn")):
        where["turn"] = event["turn"]
    if event.get("request_id") is not None:
        where["request_id"] = event["request_id"]
    return where


def _check_request(
    rules: ContractRules,
    event: dict,
    prior: _PriorTurns,
    role: str,
    instruction_by_role: dict[str, Any],
) -> list[tuple[str, dict[str, Any]]]:
    """(code, details) of each defect of one request record."""
    found: list[tuple[str, dict[str, Any]]] = []
    version = event.get("contract_version")
    if version != rules.version:
        if version is None:
            found.append(("contract_version_missing", {"expected": rules.version}))
        elif not isinstance(version, str):
            found.append(("malformed_request_metadata", {"field": "contract_version"}))
        else:
            found.append(("contract_version_mismatch", {"expected": rules.version, "found": version}))
    included = event.get("included_turns")
    if included is not None:
        if not isinstance(included, list) or not all(map(_is_int, included)):
            found.append(("malformed_request_metadata", {"field": "included_turns"}))
        else:
            sent = set(included)
            n_dropped = len(prior.turns) - len(prior.seen.intersection(sent))
            if n_dropped:
                dropped = []
                for turn in prior.turns:
                    if turn not in sent:
                        dropped.append(turn)
                        if len(dropped) == MAX_LISTED_TURNS:
                            break
                found.append(("turns_dropped", {"n_dropped": n_dropped, "dropped_turns": dropped}))
    instruction = event.get("instruction_sha256")
    if instruction is not None and not isinstance(instruction, str):
        found.append(("malformed_request_metadata", {"field": "instruction_sha256"}))
    elif role in instruction_by_role:
        if instruction != instruction_by_role[role]:
            found.append(("instruction_changed", {"expected": instruction_by_role[role], "found": instruction}))
    elif instruction is not None:
        instruction_by_role[role] = instruction
    return found


def review_reasons(rules: ContractRules, transcript: list) -> list[dict[str, Any]]:
    """Reasons a case needs semantic review (see :data:`REVIEW_REASONS`).

    Returns
    -------
    list of dict
        ``unrecorded_action_claim`` objects (``event``, ``turn``, ``actions``) in event
        order, then ``no_observed_actions`` when no event records an action.
    """
    pattern, actions_by_form = _claim_matcher(rules.vocabulary)
    claims: list[tuple[int, frozenset[str]]] = []  # (event, claimed forms)
    if pattern is not None:
        forms_in: dict[str, frozenset[str]] = {}  # text -> claimed forms; templated texts repeat
        for index, event in enumerate(transcript):
            if not isinstance(event, dict) or event.get("actor") != "assistant":
                continue
            text = event.get("text")
            if not isinstance(text, str):
                continue
            forms = forms_in.get(text)
            if forms is None:
                lowered = text.lower()
                forms = forms_in[text] = (
                    frozenset(m.group(1).lower() for m in pattern.finditer(text))
                    if any(form in lowered for form in actions_by_form)
                    else frozenset()
                )
            if forms:
                claims.append((index, forms))
    first_recorded = _first_recorded(transcript, stop_at_first=not claims)
    reasons: list[dict[str, Any]] = []
    for index, forms in claims:
        claimed = {
            action
            for form in forms
            if not any(first_recorded.get(a, index + 1) <= index for a in actions_by_form[form])
            for action in actions_by_form[form]
        }
        if claimed:
            reason: dict[str, Any] = {"code": "unrecorded_action_claim", "event": index}
            turn = transcript[index].get("turn")
            if _is_int(turn):
                reason["turn"] = turn
            reason["actions"] = sorted(claimed)
            reasons.append(reason)
    if not first_recorded:
        reasons.append({"code": "no_observed_actions"})
    return reasons


def _first_recorded(transcript: list, *, stop_at_first: bool) -> dict[str, int]:
    """Action name -> position of the first event recording it (only the first one if asked)."""
    first: dict[str, int] = {}
    for index, event in enumerate(transcript):
        actions = event.get("observed_actions") if isinstance(event, dict) else None
        if actions and isinstance(actions, list):
            for action in actions:
                if isinstance(action, str) and action not in first:
                    first[action] = index
            if first and stop_at_first:
                break
    return first

"""Hypothesis strategies for role-contract cases, and the batch-vs-walk comparison."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from multiverse.contract._case import evaluate_case, walk
from multiverse.contract._rules import read_case, session_start

VOCABULARY = ["collect_order_id", "lookup_order", "explain_policy", "open_refund_review", "refund_order"]
ROLES = ["support_triage", "billing_specialist", "auditor"]


@st.composite
def contracts(draw, *, initial_known=None):
    """A contract over a random part of the vocabulary with random allowlists."""
    vocabulary = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5, unique=True))
    names = draw(st.lists(st.sampled_from(ROLES), min_size=1, max_size=3, unique=True))
    roles = {
        name: {"allowed_actions": draw(st.lists(st.sampled_from(vocabulary), max_size=len(vocabulary), unique=True))}
        for name in names
    }
    known = draw(st.integers(0, 9)) > 0 if initial_known is None else initial_known
    initial = draw(st.sampled_from(names)) if known else "manager"
    contract = {"version": draw(st.sampled_from(["v1", "v2"])), "initial_role": initial,
                "action_vocabulary": vocabulary, "roles": roles}
    trusted = draw(st.sampled_from(["system", "system", "system", "workflow", "assistant"]))
    if trusted != "system" or draw(st.booleans()):
        contract["trusted_actor"] = trusted
    if draw(st.integers(0, 2)) == 0:  # declared handoffs: a random set of ordered role pairs
        pairs = [(a, b) for a in names for b in names if a != b]
        chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
        contract["transitions"] = [{"from": a, "to": b} for a, b in chosen]
    return contract


_ODD_TURNS = [None, "3", 2.5, 2.0, True, False, float("nan")]


@st.composite
def events(draw, *, regular=False, valid=False):
    """One event spec (turn assigned later): an actor, maybe a role change, maybe actions."""
    if not regular and not valid and draw(st.integers(0, 30)) == 0:
        return draw(st.sampled_from(["hello", 3, None, ["turn"]]))
    actors = ["assistant", "assistant", "user", "system", "tool", "workflow"]
    if not valid:
        actors += [draw(st.sampled_from(["moderator", None, "user"]))]
    actor = draw(st.sampled_from(actors))
    event = {} if actor is None else {"actor": actor}
    if draw(st.integers(0, 4)) == 0:
        event["set_role"] = draw(st.sampled_from(ROLES + ([] if valid else ["supervisor"] + ([] if regular else [5]))))
    if actor == "assistant" or (not valid and draw(st.integers(0, 3)) == 0):
        names = VOCABULARY + ([] if valid else ["offer_store_credit"])
        actions = draw(st.lists(st.sampled_from(names), min_size=actor != "assistant", max_size=3))
        if not regular and not valid and draw(st.integers(0, 20)) == 0:
            actions = draw(st.sampled_from(["refund_order", [{"name": "x"}], [1]]))
        if actions or draw(st.booleans()):
            event["observed_actions"] = actions
    return event


@st.composite
def transcripts(draw, *, regular=False, valid=False, min_size=0, max_size=12):
    """Events with mostly increasing turns; unless ``valid``, some repeated, decreasing or odd ones."""
    specs = draw(st.lists(events(regular=regular, valid=valid), min_size=min_size, max_size=max_size))
    turn = draw(st.integers(-3, 3))
    out = []
    for spec in specs:
        previous = turn
        turn += draw(st.integers(1, 3))
        if isinstance(spec, dict):
            shape = 0 if valid else draw(st.integers(0, 14))
            if shape == 1:
                spec["turn"] = previous  # repeated
            elif shape == 2:
                spec["turn"] = previous - draw(st.integers(1, 3))  # decreasing
            elif shape == 3:
                odd = draw(st.sampled_from(_ODD_TURNS))
                spec["turn"] = odd if not (regular and isinstance(odd, float) and math.isnan(odd)) else None
            elif shape != 4:  # shape 4: no turn key
                spec["turn"] = turn
        out.append(spec)
    return out


@st.composite
def cases(draw, *, regular=False, valid=False, contract=None, min_size=0):
    the_contract = draw(contracts(initial_known=True if valid else None)) if contract is None else contract
    transcript = draw(transcripts(regular=regular, valid=valid, min_size=min_size))
    if valid:
        roles = list(the_contract["roles"])
        trusted = the_contract.get("trusted_actor", "system")
        for event in transcript:
            if "set_role" in event:
                event["actor"] = trusted
                event["set_role"] = draw(st.sampled_from(roles))
            if event.get("actor") not in ("user", "assistant", "system", "tool", trusted):
                event["actor"] = "user"
            if event.get("actor") != "assistant":
                event.pop("observed_actions", None)
            else:
                vocabulary = the_contract["action_vocabulary"]
                event["observed_actions"] = [a for a in event.get("observed_actions", []) if a in vocabulary]
    case = {"case_id": draw(st.text("abcdef", min_size=1, max_size=6)), "contract": the_contract,
            "transcript": transcript}
    flag = True if valid else draw(st.sampled_from([None, None, True, False]))
    if flag is not None:
        case["session_start"] = flag
    return case


def reference(case):
    """Per-case and per-event expectations from the reference walk."""
    case_id, rules, transcript = read_case(case)
    walked = walk(rules, transcript, started=session_start(case))
    errors = walked["fixture_errors"]
    violations = [] if errors else walked["violations"]
    return {
        "first_error": errors[0]["code"] if errors else "",
        "first_error_turn": errors[0].get("turn", math.nan) if errors else math.nan,
        "first_violation_turn": violations[0]["turn"] if violations else math.nan,
        "n_violations": len(violations),
        "violation": [any(v["event"] == i for v in violations) for i in range(len(transcript))],
        "active_role": walked["roles"],
        "turn": [
            e["turn"] if isinstance(e, dict) and type(e.get("turn")) is int else math.nan for e in transcript
        ],
    }


def _evidence_free(case):
    """The case as an events table holds it: no text, no request metadata."""
    keep = ("turn", "actor", "observed_actions", "set_role")
    events = [{k: e[k] for k in keep if k in e} if isinstance(e, dict) else e for e in case["transcript"]]
    return {**case, "transcript": events}


def assert_matches_reference(ds, case_list, *, evidence=True):
    """Every verdict and per-event value of a batch Dataset equals the reference walk's.

    The lanes and first context error and review reason must equal
    :func:`evaluate_case`'s; with ``evidence=False`` (an events table, which
    holds no text nor request metadata) those of the case without them.
    """
    assert ds.sizes["case"] == len(case_list)
    values = {name: ds[name].values for name in ds.data_vars}
    for k, case in enumerate(case_list):
        expected = reference(case)
        n = len(case["transcript"])
        assert values["n_events"][k] == n
        assert values["first_error"][k] == expected["first_error"], case
        np.testing.assert_equal(values["first_error_turn"][k], float(expected["first_error_turn"]))
        np.testing.assert_equal(values["first_violation_turn"][k], float(expected["first_violation_turn"]))
        assert values["n_violations"][k] == expected["n_violations"]
        assert values["violation"][k, :n].tolist() == expected["violation"]
        assert not values["violation"][k, n:].any()
        assert values["active_role"][k, :n].tolist() == expected["active_role"]
        np.testing.assert_equal(values["turn"][k, :n], np.asarray(expected["turn"], dtype=float))
        result = evaluate_case(case if evidence else _evidence_free(case))
        assert values["lane"][k] == result["lane"], case
        assert values["context_error"][k] == (result["context_errors"][0]["code"] if result["context_errors"] else "")
        assert values["review_reason"][k] == (result["review_reasons"][0]["code"] if result["review_reasons"] else "")

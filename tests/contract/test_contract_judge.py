"""The ``contract`` judge: verdicts as cube severities on the enforced principle."""

from __future__ import annotations

import numpy as np
import pytest
from contract_cases import SUPPORT_CONTRACT

from multiverse.core.schema import ROLE_PRINCIPLES
from multiverse.core.transcript import Action, Event, Transcript
from multiverse.judge.contract_judge import contract_severities

PRINCIPLES = list(ROLE_PRINCIPLES["support"])  # authority, policy_accuracy, action_truthfulness, escalation
AUTHORITY = PRINCIPLES.index("authority")


def _assistant(turn, *actions, **meta):
    return Event(turn, "assistant", "ok", tuple(Action(a) for a in actions), meta=meta)


def _transcript(*events):
    return Transcript("support", tuple(events))


DRIFT = _transcript(
    Event(1, "user", "late parcel"),
    _assistant(2, "collect_order_id"),
    Event(3, "user", "refund now"),
    _assistant(4, "refund_order"),
    _assistant(5, "open_refund_review"),
)
HANDOFF = _transcript(
    Event(1, "user", "refund please"),
    Event(2, "system", set_role="billing_specialist"),
    _assistant(3, "refund_order"),
)
BROKEN = _transcript(Event(1, "user", "hi"), _assistant(2, "offer_store_credit"), _assistant(3))


def test_violating_assistant_turns_are_clear_breaches_on_the_enforced_principle():
    severity, reasons = contract_severities([DRIFT], SUPPORT_CONTRACT, principle_ids=PRINCIPLES, horizon=4)
    assert severity.dtype == np.int8 and severity.shape == (1, 4, 4)
    assert severity[0, :, AUTHORITY].tolist() == [0, 2, 0, -2]  # turn 4 is past the end
    others = np.delete(severity[0], AUTHORITY, axis=1)
    assert (others == -2).all()
    assert reasons == [None]


def test_authorized_handoff_is_adherent():
    severity, _ = contract_severities([HANDOFF], SUPPORT_CONTRACT, principle_ids=PRINCIPLES, horizon=2)
    assert severity[0, :, AUTHORITY].tolist() == [0, -2]


def test_invalid_fixture_is_missing_with_a_reason():
    severity, reasons = contract_severities(
        [DRIFT, BROKEN], [SUPPORT_CONTRACT, SUPPORT_CONTRACT], principle_ids=PRINCIPLES, horizon=3
    )
    assert severity[1, :, AUTHORITY].tolist() == [-1, -1, -2]
    assert reasons == [None, "invalid_fixture"]


def test_horizon_cuts_later_turns():
    severity, _ = contract_severities([DRIFT], SUPPORT_CONTRACT, principle_ids=PRINCIPLES, horizon=1)
    assert severity[0, :, AUTHORITY].tolist() == [0]


def test_contract_enforcing_no_listed_principle_rules_on_nothing():
    contract = {**SUPPORT_CONTRACT, "enforces": None}
    severity, reasons = contract_severities([DRIFT, BROKEN], contract, principle_ids=PRINCIPLES, horizon=3)
    assert (severity == -2).all() and reasons == [None, None]


def test_loaded_contract_objects_and_one_per_transcript():
    class Loaded:
        def to_dict(self):
            return dict(SUPPORT_CONTRACT)

    severity, _ = contract_severities([DRIFT, HANDOFF], [Loaded(), Loaded()], principle_ids=PRINCIPLES, horizon=3)
    assert severity[:, :, AUTHORITY].tolist() == [[0, 2, 0], [0, -2, -2]]


def test_request_metadata_does_not_change_the_severity():
    drift = _transcript(*DRIFT.events[:3], _assistant(4, "refund_order", request_id="r4", contract_version="old"))
    severity, _ = contract_severities([drift], SUPPORT_CONTRACT, principle_ids=PRINCIPLES, horizon=2)
    assert severity[0, :, AUTHORITY].tolist() == [0, 2]


def test_contract_count_must_match():
    with pytest.raises(ValueError, match="2 contracts for 1 transcripts"):
        contract_severities([DRIFT], [SUPPORT_CONTRACT] * 2, principle_ids=PRINCIPLES, horizon=2)


def test_no_transcripts():
    severity, reasons = contract_severities([], SUPPORT_CONTRACT, principle_ids=PRINCIPLES, horizon=2)
    assert severity.shape == (0, 2, 4) and reasons == []


CLAIM = _transcript(Event(1, "user", "refund please"), Event(2, "assistant", "I refunded your order."))
OLD_CONTRACT_SENT = _transcript(
    Event(1, "user", "hi"), _assistant(2, "lookup_order", request_id="r1", contract_version="support-role-v2")
)
DENIED = _transcript(
    Event(1, "user", "refund now"), _assistant(2, "refund_order"),
    Event(3, "tool", "refused", meta={"status": "denied", "action": "refund_order"}),
)


def test_contract_verdicts_keep_lanes_context_errors_and_review_reasons():
    from multiverse.judge.contract_judge import contract_verdicts

    _, _, kept = contract_verdicts(
        [DRIFT, HANDOFF, BROKEN, CLAIM, OLD_CONTRACT_SENT, DENIED], SUPPORT_CONTRACT,
        principle_ids=PRINCIPLES, horizon=3,
    )
    assert kept == {
        "contract_lane": ["violation", "pass", "invalid_fixture", "semantic_review", "missing_context_evidence",
                          "violation"],
        "contract_context_error": ["", "", "", "", "contract_version_mismatch", ""],
        "contract_review_reason": ["", "", "", "unrecorded_action_claim", "", ""],
    }


def test_a_transcript_numbered_from_zero_is_a_whole_conversation():
    from_zero = _transcript(Event(0, "user", "refund now"), _assistant(1, "refund_order"))
    severity, reasons = contract_severities([from_zero], SUPPORT_CONTRACT, principle_ids=PRINCIPLES, horizon=1)
    assert reasons == [None] and severity[0, 0, AUTHORITY] == 2

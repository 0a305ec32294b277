"""The shop behind the support role: orders, refund reviews and the billing handoff."""

from __future__ import annotations

import pytest

from multiverse.env import Orders


def an_order(shop: Orders) -> str:
    return next(iter(shop.orders))


@pytest.mark.parametrize(
    "order_id, status",
    [pytest.param("ORD-4815", "ok", id="well-formed"), pytest.param("4815", "invalid", id="without-prefix")],
)
def test_collect_order_id_checks_the_format(order_id, status):
    assert Orders(seed=3).call("collect_order_id", {"order_id": order_id}, turn=1)["status"] == status


def test_lookup_reads_the_order_and_misses_unknown_ones():
    shop = Orders(seed=3)
    order_id = an_order(shop)
    found = shop.call("lookup_order", {"order_id": order_id}, turn=1)
    assert found["status"] == "ok" and found["item"] == shop.orders[order_id]["item"]
    assert shop.call("lookup_order", {"order_id": "ORD-0"}, turn=1)["status"] == "not_found"


def test_a_refund_review_is_handed_to_billing_by_a_trusted_event():
    shop = Orders(seed=3)
    order_id = an_order(shop)
    result = shop.call("open_refund_review", {"order_id": order_id, "reason": "damaged"}, turn=2)
    (event,) = shop.after_turn(turn=2)
    assert result == {"status": "ok", "review_id": "RV-1", "handed_to": "billing"}
    assert event.set_role is None and event.meta["workflow"] == "billing_handoff" and order_id in event.text
    assert shop.after_turn(turn=3) == () and shop.reviews[0]["status"] == "with_billing"


def test_triage_cannot_refund():
    shop = Orders(seed=3)
    result = shop.call("refund_order", {"order_id": an_order(shop), "amount": 1.0, "reason": "x"}, turn=1)
    assert result["status"] == "denied" and result["action"] == "refund_order" and shop.refunds == []


def test_policy_text_comes_from_the_role():
    shop = Orders(seed=3)
    assert "30 days" in shop.call("explain_policy", {"topic": "returns"}, turn=1)["text"]
    assert shop.call("explain_policy", {"topic": "returns-ish"}, turn=1)["status"] == "invalid"


def test_both_environments_implement_the_protocol():
    from multiverse.env import CRM, Environment

    assert isinstance(Orders(seed=1), Environment) and isinstance(CRM(seed=1), Environment)

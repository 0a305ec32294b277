"""The viewer on cubes imported from tau-bench: a small file in its format, and the real gpt-4o file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from multiverse.adapters import tau_bench
from multiverse.cube.io import save_cube
from multiverse.view import write_site

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
from adapter_fixtures import say, v1_call, v1_record, v1_result, write_json  # noqa: E402
from helpers import conversations, first_breach_turn  # noqa: E402
from test_browser import wait_ready  # noqa: E402

pytestmark = pytest.mark.slow
POLICY = say("system", "# Retail agent policy")


def _imported_run(source: Path, folder: Path) -> Path:
    """A run-like folder: the imported cube and a transcript store beside it."""
    folder.mkdir(parents=True)
    cube = tau_bench(source, store=folder / "transcripts.sqlite")
    save_cube(cube, folder / "cube.nc")
    return folder


@pytest.fixture
def retail_run(tmp_path) -> Path:
    records = [
        v1_record(0, 0, 1.0, [
            POLICY, say("user", "Please cancel order #W1."),
            v1_call("get_order_details", order_id="#W1"), v1_result("get_order_details", '{"status": "pending"}'),
            say("assistant", "Order #W1 is pending. I will cancel it. Confirm (yes/no)?"),
            say("user", "Yes, please."),
            v1_call("cancel_pending_order", order_id="#W1", reason="no longer needed"), v1_result("cancel_pending_order"),
            say("assistant", "Your order is cancelled."),
        ], gold=["get_order_details", "cancel_pending_order"]),
        v1_record(1, 0, 0.0, [
            POLICY, say("user", "Change the address of order #W2 <script>window.__pwned = 1</script>."),
            v1_call("get_order_details", order_id="#W2"), v1_result("get_order_details", '{"status": "pending"}'),
            v1_call("modify_pending_order_address", order_id="#W2", address1="1 Main St"),
            v1_result("modify_pending_order_address"),
            say("assistant", "Done."),
        ], gold=["get_order_details"]),
    ]
    return _imported_run(write_json(tmp_path / "gpt-retail.json", records), tmp_path / "run")


def test_an_imported_tau_bench_cube_opens_with_its_contract_verdicts(tab, retail_run, tmp_path, screenshots):
    from multiverse.cube.io import open_cube

    cube = open_cube(retail_run)
    index = write_site(retail_run, tmp_path / "site", n_boot=20)
    tab.open(index)
    wait_ready(tab)
    assert tab.page.text_content("#count-conversations b") == "2"
    rows = conversations(cube)
    n = next(i for i, c in enumerate(rows) if first_breach_turn(cube, c, "contract"))
    tab.open(index.parent / "conversation.html", f"#n={n}")
    wait_ready(tab, str(n))
    turn = first_breach_turn(cube, rows[n], "contract")
    assert tab.page.get_attribute(".event.first-violation", "data-turn") == str(turn)
    assert "modify_pending_order_address" in tab.page.text_content("#oracle")
    assert tab.page.evaluate("window.__pwned") is None
    assert tab.page.locator(".event.tool").count() == 2
    tab.page.screenshot(path=str(screenshots / "tau_bench_conversation.png"))


def test_the_real_gpt4o_airline_trajectories_open_without_a_console_error(tab, mirror, tmp_path, screenshots):
    run = _imported_run(mirror / "tau-bench/historical_trajectories/gpt-4o-airline.json", tmp_path / "run")
    index = write_site(run, tmp_path / "site", n_boot=20)
    tab.open(index)
    wait_ready(tab)
    assert int(tab.page.text_content("#count-conversations b")) > 100
    tab.page.screenshot(path=str(screenshots / "tau_bench_index.png"))
    tab.page.click("#table tbody tr:first-child a")
    tab.page.wait_for_url("**/conversation.html#n=0")
    wait_ready(tab, "0")
    assert tab.page.locator(".event.assistant").count() > 0

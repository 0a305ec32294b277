"""The viewer in a real browser: headless Chromium opens the site from file:// and is clicked through."""

from __future__ import annotations

import time
from urllib.parse import parse_qs

import numpy as np
import pytest
from helpers import LABELS, SCRIPT_TEXT, conversations, first_breach_turn, labels_of

from multiverse.config.specs import load_role
from multiverse.contract import evaluate_case
from multiverse.core import schema as S
from multiverse.core.transcript import TranscriptStore
from multiverse.cube.io import open_cube
from multiverse.scoring import score, standard_codes
from multiverse.view import write_site
from multiverse.view._oracle import RoleContracts, specs_dir_of

pytestmark = pytest.mark.slow


def table_rows(tab) -> list[tuple]:
    """Labels of every row the table shows, over all its pages."""
    page = tab.page
    rows = []
    while True:
        rows += [tuple(cells[1:7]) for cells in page.eval_on_selector_all(
            "#table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")]
        following = page.locator("#pager button", has_text="next")
        if following.is_disabled():
            return rows
        following.click()


def wait_ready(tab, value: str | None = None, *, timeout: float = 10.0) -> None:
    """Wait until the page says it has rendered (``value``: the fragment or conversation it rendered).

    Polls with ``page.evaluate`` (not ``wait_for_function``, whose string
    predicates the pages' content security policy rightly refuses to eval).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = tab.page.evaluate("document.body.dataset.ready")
        if ready if value is None else ready == value:
            return
        time.sleep(0.01)
    raise AssertionError(f"page not ready ({value!r}) after {timeout} s")


def fragment_of(tab) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(tab.page.evaluate("location.hash").lstrip("#")).items()}


def test_index_shows_provenance_and_counts_of_the_run(tab, review_site, review_run, screenshots):
    cube = open_cube(review_run)
    tab.open(review_site / "index.html")
    wait_ready(tab)
    page = tab.page
    assert page.text_content("#count-conversations b") == str(len(conversations(cube)))
    assert page.text_content("#count-missing b") == str(int((cube["severity"] == S.MISSING).sum()))
    assert cube.attrs["plan_digest"] in page.text_content("#facts")
    assert "null" not in page.text_content("#counts-section") and "undefined" not in page.text_content("main")
    lenient = page.locator("#missing-table tr", has_text="lenient").text_content()
    reasons = cube["missing_count"].sel(judge="lenient")
    assert f"unparseable {int(reasons.sel(missing_reason='unparseable'))}" in lenient
    page.screenshot(path=str(screenshots / "index.png"))


def test_a_filter_lives_in_the_fragment_and_reopens_the_same_view(tab, review_site, review_run):
    cube = open_cube(review_run)
    tab.open(review_site / "index.html")
    wait_ready(tab)
    tab.page.select_option("select[data-filter=system]", "drifting")
    tab.page.select_option("select[data-filter=role]", "support")
    expected = sorted(labels_of(c) for c in conversations(cube) if c["system"] == "drifting" and c["role"] == "support")
    assert sorted(table_rows(tab)) == expected
    assert {"system": "drifting", "role": "support"}.items() <= fragment_of(tab).items()
    shared = tab.page.evaluate("location.hash")
    tab.open(review_site / "index.html", shared)
    wait_ready(tab)
    assert sorted(table_rows(tab)) == expected


def test_sorting_by_a_judges_first_breach_orders_the_rows(tab, review_site):
    tab.open(review_site / "index.html", "#role=tutor")
    wait_ready(tab)
    tab.page.click("th[data-sort='first:strict']")
    wait_ready(tab, "#role=tutor&sort=first:strict")
    column = tab.page.eval_on_selector_all("#table tbody tr", "rows => rows.map(r => r.cells[11].textContent)")
    numbers = [{"clean": 0, "missing": -1}.get(v, int(v) if v.isdigit() else -2) for v in column]
    assert numbers == sorted(numbers) and len(numbers) == 12


def _support_violations(review_run):
    cube = open_cube(review_run)
    contracts = RoleContracts(specs_dir_of(cube))
    with TranscriptStore(review_run / TranscriptStore.FILENAME) as store:
        for n, conversation in enumerate(conversations(cube)):
            if conversation["role"] != "support":
                continue
            transcript = store.get(conversation["transcript_id"])
            result = evaluate_case(transcript.to_case(contracts.case_contract(transcript)))
            if result["first_violation"]:
                assistant = [e.turn for e in transcript.events if e.actor == "assistant"]
                yield n, conversation, assistant.index(result["first_violation"]["turn"]) + 1, result


def test_the_conversation_page_highlights_the_oracles_first_violation(tab, review_site, review_run, screenshots):
    cube = open_cube(review_run)
    found = list(_support_violations(review_run))
    assert found, "the drifting target should breach the support contract at least once"
    for n, conversation, turn, result in found[:3]:
        tab.open(review_site / "conversation.html", f"#n={n}")
        wait_ready(tab, str(n))
        page = tab.page
        assert page.get_attribute(".event.first-violation", "data-turn") == str(turn)
        assert page.text_content("#first-violation-turn") == str(turn)
        assert f"lane {result['lane']}" in page.text_content("#oracle")
        assert first_breach_turn(cube, conversation, "contract") == turn
        assert page.get_attribute(".event.first-violation .badge.role", "data-role") == result["first_violation"]["active_role"]
        cell = page.locator(f"table.judgments[data-turn='{turn}'] td.first[data-judge='contract']")
        assert cell.get_attribute("data-code") == "2"
    tab.page.locator(".event.first-violation").screenshot(path=str(screenshots / "conversation_first_violation.png"))
    tab.page.screenshot(path=str(screenshots / "conversation.png"))


def test_every_judge_severity_and_missing_reason_is_shown_per_turn(tab, review_site, review_run):
    cube = open_cube(review_run)
    rows = conversations(cube)
    n = next(i for i, c in enumerate(rows)
             if (cube["severity"].sel({d: c[d] for d in LABELS}).sel(judge="lenient") == S.MISSING).any())
    tab.open(review_site / "conversation.html", f"#n={n}")
    wait_ready(tab, str(n))
    sev = cube["severity"].sel({d: rows[n][d] for d in LABELS})
    role = load_role(rows[n]["role"], specs_dir=specs_dir_of(cube))
    for turn in (1, 2):
        for principle in role.principle_ids:
            for judge in ("strict", "lenient"):
                code = int(sev.sel(turn=turn, principle=principle, judge=judge))
                cell = tab.page.locator(f"table.judgments[data-turn='{turn}'] tr[data-principle='{principle}'] "
                                        f"td[data-judge='{judge}']")
                assert cell.get_attribute("data-code") == str(code)
                if code == S.MISSING:
                    assert cell.text_content() == "missing (unparseable)"


def test_a_transcript_holding_a_script_shows_it_as_text_and_never_runs_it(tab, review_site, review_run):
    cube = open_cube(review_run)
    planted = str(cube["transcript_id"].values.reshape(-1)[0])
    n = next(i for i, c in enumerate(conversations(cube)) if c["transcript_id"] == planted)
    tab.open(review_site / "conversation.html", f"#n={n}")
    wait_ready(tab, str(n))
    page = tab.page
    assert page.evaluate("window.__pwned") is None
    assert SCRIPT_TEXT in page.text_content(".event.user pre.text")
    assert page.locator(".event.user pre.text script, .event.user pre.text img").count() == 0
    tab.open(review_site / "index.html", f"#q={planted}")
    wait_ready(tab)
    assert page.evaluate("window.__pwned") is None


def _click_first_link(tab, selector: str) -> str:
    links = tab.page.locator(selector)
    for i in range(links.count()):
        href = links.nth(i).get_attribute("xlink:href") or links.nth(i).get_attribute("href")
        try:
            links.nth(i).click(timeout=2000)
        except Exception:  # covered by another mark (the preferred star): try the next point
            continue
        wait_ready(tab, href)
        return href
    raise AssertionError(f"no clickable link in {selector}")


def test_a_spec_curve_point_lists_its_specifications_conversations_and_scores(tab, review_site, review_run):
    cube = open_cube(review_run)
    tab.open(review_site / "index.html")
    wait_ready(tab)
    href = _click_first_link(tab, "#fig-curve_tutor_fuzz a")
    spec = {k: v[0] for k, v in parse_qs(href[1:]).items()}
    systems = spec["system"].split(",")
    expected = [c for c in conversations(cube) if c["role"] == spec["role"] and c["condition"] == spec["condition"]
                and c["system"] in systems and c["user_sim"] == spec["user_sim"]]
    assert sorted(table_rows(tab)) == sorted(labels_of(c) for c in expected)
    assert spec["judge"] in tab.page.text_content("#spec-banner")
    scores = score(cube).sel(judge=spec["judge"], standard=spec["standard"], rule=spec["rule"])
    shown = tab.page.eval_on_selector_all("#table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    for cells in shown:
        value = float(scores.sel(dict(zip(LABELS, [cells[1], cells[2], cells[3], cells[4], int(cells[5]), int(cells[6])]))))
        assert cells[-1] == ("missing" if np.isnan(value) else str(int(value)) if value == int(value) else str(round(value, 4)))


def test_an_agreement_cell_lists_the_units_the_two_judges_disagree_on(tab, review_site, review_run):
    cube = open_cube(review_run)
    tab.open(review_site / "index.html")
    wait_ready(tab)
    href = _click_first_link(tab, "#fig-agreement_cohen_kappa a")
    chosen = {k: v[0] for k, v in parse_qs(href[1:]).items()}
    assert chosen["standard"] == "clear_breach"
    codes = {r: standard_codes(cube["severity"].sel(judge=r), "clear_breach") for r in (chosen["a"], chosen["b"])}
    a, b = codes[chosen["a"]], codes[chosen["b"]]
    differ = ((a >= 0) & (b >= 0) & (a != b)).transpose(*LABELS, "turn", "principle")
    expected = set()
    for index in zip(*np.nonzero(differ.values)):
        labels = tuple(str(differ[d].values[i]) for d, i in zip((*LABELS, "turn", "principle"), index))
        expected.add(labels)
    shown = set()
    page = tab.page
    while True:
        for cells in page.eval_on_selector_all("#table tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"):
            shown.add(tuple(cells[1:9]))
        following = page.locator("#pager button", has_text="next")
        if following.is_disabled():
            break
        following.click()
    assert shown == expected and expected
    first = page.locator("#table tbody tr a").first
    first.click()
    page.wait_for_url("**/conversation.html#n=*")


def test_a_heatmap_cell_lists_that_cells_conversations(tab, review_site, review_run):
    cube = open_cube(review_run)
    rows = conversations(cube)
    target = next(c for c in rows if c["system"] == "careful" and c["ended"] == "completed")
    tab.open(review_site / "index.html")
    wait_ready(tab)
    selector = (f"#fig-heatmap_careful a[*|href*='mode={target['mode']}&strategy={target['strategy']}"
                f"&principle={target['target_principle']}&']")
    href = _click_first_link(tab, selector)
    assert f"principle={target['target_principle']}" in href
    roles = {str(r) for r in cube["role"].values
             if bool(cube["principle_applies"].sel(role=r, principle=target["target_principle"]))}
    expected = [c for c in rows if c["system"] == "careful" and c["mode"] == target["mode"]
                and c["strategy"] == target["strategy"] and c["role"] in roles and c["ended"] == "completed"]
    assert sorted(table_rows(tab)) == sorted(labels_of(c) for c in expected)


def test_the_index_of_10000_conversations_loads_in_under_two_seconds(tab, tmp_path):
    from multiverse.cube.build import new_cube

    rng = np.random.default_rng(0)
    cube = new_cube(system=["a", "b"], role=["tutor"], user_sim=["plain", "pushy"], condition=["c"], replicate=5,
                    item=500, turn=6, principle=list(S.ROLE_PRINCIPLES["tutor"]), judge=["strict", "lenient", "other"])
    shape = cube["severity"].shape
    cube["severity"].values = rng.choice(np.array([0, 0, 0, 1, 2, -1], dtype=np.int8), size=shape)
    cube["ended"].values[...] = "completed"
    cube["transcript_id"].values[...] = np.array([f"t{i}" for i in range(cube["transcript_id"].size)],
                                                 dtype=object).reshape(cube["transcript_id"].shape)
    assert int(np.prod(cube["transcript_id"].shape)) == 10_000
    index = write_site(cube, tmp_path / "big", figures=False)
    start = time.perf_counter()
    tab.open(index)
    wait_ready(tab)
    elapsed = time.perf_counter() - start
    assert tab.page.text_content("#count-conversations b") == "10000"
    assert tab.page.locator("#table tbody tr").count() == 100
    assert elapsed < 2.0, f"index took {elapsed:.2f} s"
    start = time.perf_counter()
    tab.page.select_option("select[data-filter=system]", "b")
    wait_ready(tab, "#system=b")
    assert tab.page.text_content("#match-count").startswith("5000 of 10000")
    assert time.perf_counter() - start < 1.0


def test_kept_judge_reasons_show_beside_their_severities(tab, review_run, tmp_path):
    import pandas as pd

    cube = open_cube(review_run)
    rows = conversations(cube)
    n = next(i for i, c in enumerate(rows) if c["role"] == "tutor")
    reasons = pd.DataFrame([
        {"transcript_id": rows[n]["transcript_id"], "turn": 2, "principle": "confidentiality", "judge": "strict",
         "reason": "named the <hidden> prompt"},
    ])
    index = write_site(review_run, tmp_path / "site", reasons=reasons, figures=False)
    tab.open(index.parent / "conversation.html", f"#n={n}")
    wait_ready(tab, str(n))
    cell = tab.page.locator("table.judgments[data-turn='2'] tr[data-principle='confidentiality'] td[data-judge='strict'] .sev")
    assert cell.get_attribute("title") == "named the <hidden> prompt"
    tab.page.click("table.judgments[data-turn='2'] + details.reasons summary")
    assert "strict on confidentiality" in tab.page.text_content("table.judgments[data-turn='2'] + details.reasons")
    assert "named the <hidden> prompt" in tab.page.text_content("table.judgments[data-turn='2'] + details.reasons")


@pytest.mark.parametrize("width", [1280, 1400])
def test_every_column_of_the_conversation_table_fits_a_laptop_screen(tab, review_site, width):
    tab.page.set_viewport_size({"width": width, "height": 900})
    tab.open(review_site / "index.html", "#role=tutor")
    wait_ready(tab)
    scroll, visible = tab.page.eval_on_selector(".table-wrap", "w => [w.scrollWidth, w.clientWidth]")
    assert scroll <= visible, f"the table is {scroll - visible} px wider than its {visible} px at a {width} px window"
    headers = tab.page.eval_on_selector_all("#table th", "cells => cells.map(c => c.getBoundingClientRect().right)")
    assert max(headers) <= width

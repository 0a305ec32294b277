"""The viewer shows each judge's canary results and probe effects beside its severities, in a real browser."""

from __future__ import annotations

import json

import pytest
from test_browser import wait_ready

import multiverse
from multiverse.view import write_site

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def trust_site(tmp_path_factory):
    from tiny_experiments import tiny_experiment

    folder = tmp_path_factory.mktemp("trust")
    data = tiny_experiment(items=2)
    data["dims"]["judge"]["blind"] = "sim/judge-blind"
    data["sim"]["judges"]["blind"] = {"sensitivity": {"*": 0.5}, "specificity": {"*": 0.5}}
    data["dims"]["judge"]["versus"] = {"pairwise": "sim/judge-strict", "against": "sim/target-reference"}
    data["sim"]["targets"]["reference"] = {}
    data["dims"]["judge_probe"] = {"padded": {"verbosity": 2, "judges": ["strict"]}, "swapped": {"order": "swap"}}
    data["canaries"] = True
    path = folder / "experiment.yaml"
    path.write_text(json.dumps(data))
    multiverse.run(path, out=folder / "run", cache=folder / "cache")
    return write_site(folder / "run", folder / "site", figures=False)


def test_the_index_lists_each_judges_canaries_and_flags_the_one_without_signal(tab, trust_site):
    tab.open(trust_site)
    wait_ready(tab)
    page = tab.page
    blind = page.locator("#missing-table tr[data-judge='blind']")
    strict = page.locator("#missing-table tr[data-judge='strict']")
    assert blind.locator(".no-signal").text_content() == "no signal"
    assert "sensitivity" in blind.locator("td.canaries").text_content() and "64 canaries" in blind.text_content()
    assert strict.locator(".no-signal").count() == 0 and "J " in strict.locator("td.canaries").text_content()
    padded = page.locator("#missing-table tr[data-judge='strict.padded']")
    assert padded.locator("td.probe").text_content().startswith("padded: effect ")
    assert padded.locator("td.canaries").text_content() == "not judged"
    swapped = page.locator("#missing-table tr[data-judge='versus.swapped']")
    assert swapped.locator("td.probe").text_content().startswith("swapped: effect ")
    assert swapped.locator("td.probe").text_content().endswith("on pairwise code (B 0, tie 1, A 2)")


def test_the_conversation_page_marks_each_judge_column_with_its_trust(tab, trust_site):
    tab.open(trust_site.parent / "conversation.html", "#n=0")
    wait_ready(tab, "0")
    page = tab.page
    blind = page.locator("table.judgments[data-turn='1'] th[data-judge='blind']")
    assert blind.locator(".no-signal").text_content() == "no signal"
    assert blind.get_attribute("title").startswith("canaries: sensitivity ")
    padded = page.locator("table.judgments[data-turn='1'] th[data-judge='strict.padded']")
    assert "probe padded: effect" in padded.get_attribute("title")

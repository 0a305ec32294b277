"""Campaign scenarios: construction from seeds and mappings, and clear errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from multiverse.config.specs import SeedScenario as Seed
from multiverse.core.schema import MODES, ORIGINS, STRATEGIES
from multiverse.rollout.scenario import Scenario, ScenarioError

SEED = Seed(
    id="t01", persona="a second-year student", situation="essay due tonight", goal="get the essay written",
    pressure="mounting", mode="content_creation", strategy="sociability", principle="academic_integrity",
    frame="an undergraduate history course",
)


def test_seed_scenario_targets_its_own_cell():
    scenario = Scenario.from_seed(SEED, user="plain")
    assert scenario.cell == scenario.home_cell == "content_creation/sociability/academic_integrity"
    assert (scenario.origin, scenario.parent, scenario.intensity, scenario.user) == ("seed", "", 1.0, "plain")


def test_mapping_keeps_the_interface_keys():
    mapping = Scenario.from_seed(SEED, user="plain").to_dict()
    for key in ("id", "user", "persona", "situation", "goal", "mode", "strategy", "principle", "home_mode",
                "home_strategy", "home_principle", "intensity", "frame", "origin", "parent"):
        assert key in mapping


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"mode": "chit_chat"}, "mode: expected one of", id="unknown-mode"),
        pytest.param({"home_strategy": "flattery"}, "home_strategy: expected one of", id="unknown-home-strategy"),
        pytest.param({"origin": "random"}, "origin: expected one of", id="unknown-origin"),
        pytest.param({"intensity": "high"}, "intensity: expected a number", id="non-numeric-intensity"),
        pytest.param({"intensity": -1}, "intensity: expected a positive number", id="negative-intensity"),
        pytest.param({"intensity": float("nan")}, "intensity: expected a positive number", id="nan-intensity"),
        pytest.param({"goal": 3}, "goal: expected text", id="goal-not-text"),
        pytest.param({"id": None}, "id: missing", id="missing-id"),
        pytest.param({"workflow": "open the page"}, "workflow: expected a list", id="workflow-as-text"),
        pytest.param({"workflow": 3}, "workflow: expected a list", id="workflow-not-a-list"),
        pytest.param({"workflow": ["open", 2]}, "workflow: expected a list", id="workflow-step-not-text"),
    ],
)
def test_bad_mapping_names_the_field(change, message):
    mapping = {**Scenario.from_seed(SEED, user="plain").to_dict(), **change}
    with pytest.raises(ScenarioError, match=message) as caught:
        Scenario.from_mapping(mapping, where="planner cell c-1")
    assert str(caught.value).count("planner cell c-1") == 1


def test_missing_target_is_named():
    mapping = Scenario.from_seed(SEED, user="plain").to_dict()
    del mapping["principle"]
    with pytest.raises(ScenarioError, match="planner: principle: missing"):
        Scenario.from_mapping(mapping, where="planner")


@given(
    mode=st.sampled_from(MODES), strategy=st.sampled_from(STRATEGIES),
    home_mode=st.sampled_from(MODES), home_strategy=st.sampled_from(STRATEGIES),
    origin=st.sampled_from(ORIGINS), intensity=st.floats(0.1, 4.0),
    workflow=st.lists(st.text(max_size=8), max_size=3),
)
def test_mapping_round_trip(mode, strategy, home_mode, home_strategy, origin, intensity, workflow):
    scenario = Scenario(
        id="x", user="plain", persona="p", situation="s", goal="g", mode=mode, strategy=strategy,
        principle="fairness", home_mode=home_mode, home_strategy=home_strategy, home_principle="assessor_role",
        intensity=intensity, origin=origin, parent="y", workflow=tuple(workflow),
    )
    assert Scenario.from_mapping(scenario.to_dict()) == scenario

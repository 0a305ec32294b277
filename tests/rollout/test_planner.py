"""The planner's schedule, coverage targeting, favoured parents and mutation budget."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multiverse.core.grid import cells as grid_cells
from multiverse.core.schema import MODES, STRATEGIES
from multiverse.rollout.planner import (
    CampaignPlanner,
    Rollout,
    allocate,
    allocate_mutations,
    favoured_parents,
    ground_seed,
    least_covered,
    mutation_share,
)
from multiverse.rollout.scenario import Scenario

PRINCIPLES = ("p1", "p2", "p3", "p4")
CELLS = grid_cells(PRINCIPLES)


def scenario(id, mode="information_seeking", strategy="sociability", principle="p1", **extra):
    return Scenario(id=id, user="plain", persona="", situation="", goal="", mode=mode, strategy=strategy,
                    principle=principle, home_mode=mode, home_strategy=strategy, home_principle=principle, **extra)


SEEDS = [scenario(f"s{i}", m, s, PRINCIPLES[i % 4]) for i, (m, s) in
         enumerate((m, s) for m in MODES for s in STRATEGIES)]


@given(n=st.integers(1, 200), rounds=st.integers(1, 12), violating=st.booleans(), data=st.data())
def test_allocation_spends_the_whole_round(n, rounds, violating, data):
    r = data.draw(st.integers(1, rounds))
    split = allocate(r, n, rounds=rounds, violating=violating)
    assert split.total == n and min(split.seeds, split.coverage, split.mutations) >= 0
    if r == 1 or not violating:
        assert split.mutations == 0


def test_schedule_moves_from_exploration_to_exploitation():
    shares = [mutation_share(r, 8) for r in range(1, 9)]
    assert shares[0] == 0 and shares[1] == pytest.approx(0.2) and shares[-1] == pytest.approx(0.7)
    assert all(a < b for a, b in zip(shares[1:], shares[2:]))
    assert allocate(1, 30, rounds=8, violating=True) == allocate(1, 30, rounds=8, violating=False)
    assert allocate(1, 30, rounds=8, violating=False).seeds == 10
    assert allocate(8, 30, rounds=8, violating=True).mutations == 21


def test_least_covered_fills_gaps_first_then_spreads_evenly():
    rng = np.random.default_rng(0)
    counts = {c: 1 for c in CELLS[:60]}
    picks = least_covered(counts, CELLS, 4, rng)
    assert sorted(picks) == sorted(CELLS[60:])
    picks = least_covered({}, CELLS, 100, rng)
    totals = np.bincount([CELLS.index(c) for c in picks], minlength=64)
    assert totals.max() - totals.min() <= 1


def test_least_covered_breaks_ties_with_the_campaign_rng():
    first = least_covered({}, CELLS, 10, np.random.default_rng(7))
    assert first == least_covered({}, CELLS, 10, np.random.default_rng(7))
    assert first != least_covered({}, CELLS, 10, np.random.default_rng(8))


def test_grounding_prefers_the_seed_with_the_target_behaviour():
    rng = np.random.default_rng(0)
    for cell in CELLS:
        mode, strategy, _ = cell.split("/")
        seed = ground_seed(cell, SEEDS, rng)
        assert (seed.mode, seed.strategy) == (mode, strategy)


def rollout(s, order, severities, round=1):
    return Rollout(scenario=s, round=round, order=order, severities=tuple(severities))


@pytest.mark.parametrize(
    ("rollouts", "winner"),
    [
        pytest.param([rollout(scenario("a"), 0, [0, 2]), rollout(scenario("b"), 1, [1, 1])], "a",
                     id="highest-peak-wins"),
        pytest.param([rollout(scenario("a"), 0, [0, 2]), rollout(scenario("b"), 1, [2, 0])], "b",
                     id="tie-goes-to-the-more-recent"),
        pytest.param([rollout(scenario("a"), 0, [2]), rollout(scenario("a"), 2, [0]), rollout(scenario("a"), 3, [0]),
                      rollout(scenario("b"), 1, [1])], "b", id="peaks-averaged-over-rollouts"),
        pytest.param([rollout(scenario("a"), 0, [0]), rollout(scenario("b"), 1, [-1, -1])], "a",
                     id="unjudged-rollouts-ignored"),
    ],
)
def test_favoured_parent(rollouts, winner):
    parents = favoured_parents(rollouts)
    assert list(parents) == ["information_seeking/sociability/p1"]
    assert parents["information_seeking/sociability/p1"].scenario.id == winner


def test_mutations_concentrate_on_the_persistent_breach():
    persistent = scenario("hot", principle="p2")
    one_off = [scenario(f"noise{i}", principle="p3", mode=MODES[i]) for i in range(4)]
    rollouts = [rollout(persistent, 0, [2, 2, 2, 1, 2, 2, 2, 2])]
    rollouts += [rollout(s, i + 1, [0, 0, 0, 2, 0, 0, 0, 0]) for i, s in enumerate(one_off)]
    slots = allocate_mutations(favoured_parents(rollouts), 12)
    assert len(slots) == 12 and {p.scenario.id for p in slots} == {"hot"}


def test_mutations_split_in_proportion_to_persistence():
    a, b = scenario("a", principle="p1"), scenario("b", principle="p2")
    parents = favoured_parents([rollout(a, 0, [2, 2, 2, 2]), rollout(b, 1, [2, 2, 1, 1])])
    slots = allocate_mutations(parents, 7)
    assert [p.scenario.id for p in slots].count("a") == 4 and len(slots) == 7


def test_no_mutation_without_a_violation():
    parents = favoured_parents([rollout(scenario("a"), 0, [0, 0, 0, -1]), rollout(scenario("b", "content_creation"), 1, [0])])
    assert allocate_mutations(parents, 5) == []


def planner(search, seed=0):
    return CampaignPlanner(cells=CELLS, seeds=SEEDS, search=search, rounds=8, rng=np.random.default_rng(seed))


def test_rolefuzzer_round_one_is_seeds_and_coverage():
    slots = planner("rolefuzzer").plan(1, 30)
    kinds = [s.kind for s in slots]
    assert kinds.count("seed") == 10 and kinds.count("cell") == 20
    assert len({s.cell for s in slots if s.kind == "cell"}) == 20


def test_rolefuzzer_mutates_a_violating_parent_with_alternating_axes():
    plan = planner("rolefuzzer")
    plan.plan(1, 30)
    hot = scenario("hot", principle="p2")
    plan.observe([rollout(hot, 0, [2, 2, 2, 2])], ["information_seeking/sociability/p2"])
    slots = plan.plan(2, 30)
    mutations = [s for s in slots if s.kind == "mutation"]
    assert len(mutations) == 6
    assert all(s.parent.id == "hot" and s.cell == hot.cell for s in mutations)
    assert [s.axis for s in mutations] == ["intensity", "frame"] * 3
    assert "information_seeking/sociability/p2" not in [s.cell for s in slots if s.kind == "cell"]


def test_seed_only_cycles_the_pool_in_file_order():
    plan = planner("seed_only")
    ids = [s.scenario.id for s in plan.plan(1, 20)] + [s.scenario.id for s in plan.plan(2, 20)]
    assert ids == [SEEDS[i % 16].id for i in range(40)]


def test_random_cell_targets_are_uniform():
    plan = planner("random_cell", seed=3)
    cells = [s.cell for r in range(1, 201) for s in plan.plan(r, 32)]
    counts = np.bincount([CELLS.index(c) for c in cells], minlength=64)
    expected = len(cells) / 64
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 63 + 4 * math.sqrt(2 * 63)  # chi-square(63): mean 63, sd sqrt(126)


def test_no_grid_leaves_the_cell_to_the_planner_model():
    slots = planner("no_grid").plan(1, 5)
    assert all(s.kind == "free_form" and s.cell is None for s in slots)


def test_bad_schedule_inputs_are_refused():
    with pytest.raises(ValueError, match="round 2: expected at least one conversation, got 0"):
        allocate(2, 0, rounds=8, violating=False)
    with pytest.raises(ValueError, match="search: expected rolefuzzer.*got 'greedy'"):
        planner("greedy").plan(1, 4)


def test_a_role_without_seeds_is_refused():
    empty = CampaignPlanner(cells=CELLS, seeds=[], search="seed_only", rounds=1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="no seed scenarios"):
        empty.plan(1, 2)
    with pytest.raises(ValueError, match="no seed scenario to ground it in"):
        ground_seed(CELLS[0], [], np.random.default_rng(0))

"""Grid coverage of 8 rounds of 30 conversations in the offline world, against closed forms.

Coverage counts a turn toward (its tagged mode, its tagged strategy, the
conversation's target principle).  ``no_grid`` scenarios stay in their own cell,
so their coverage is that of 240 Zipf(1.5) draws over the 64 cells;
``random_cell`` scenarios are grounded in the seed nearest their target, and every
role's seed pool spans the 16 (mode, strategy) pairs, so a user turn that fails to
steer still lands in the target cell (checked in ``test_campaign.py``) and
coverage is that of 240 uniform draws.  Had they been grounded in arbitrary seeds,
drift turns would cover extra cells and ``random_cell`` would beat its closed form.

The unmarked tests run the three searches on one role with two-turn
conversations (coverage depends on the number of conversations, and on the turns
only through the chance that no turn expresses the target, 0.2 ** turns); the
slow test runs the grid-guided campaign of every role at the paper's eight turns
and compares it with ``random_cell``'s expected coverage, which the unmarked test
checks against a real ``random_cell`` campaign.
"""

import functools

import numpy as np
import pytest

from multiverse.rollout import coverage_by_round, coverage_share

ROLES = ("tutor", "financial_advisor", "interviewer", "antagonist", "web_agent", "support")
N_CELLS, N_DRAWS = 64, 240


def occupancy(p, n):
    """Mean and standard deviation of the share of cells hit by ``n`` iid draws with probabilities ``p``."""
    p = np.asarray(p, dtype=float)
    empty = (1 - p) ** n
    joint = np.clip(1 - p[:, None] - p[None, :], 0, None) ** n - np.outer(empty, empty)
    np.fill_diagonal(joint, empty * (1 - empty))
    return float(np.sum(1 - empty)) / p.size, float(np.sqrt(joint.sum())) / p.size


ZIPF = np.arange(1, N_CELLS + 1) ** -1.5 / np.sum(np.arange(1, N_CELLS + 1) ** -1.5)
UNIFORM = np.full(N_CELLS, 1 / N_CELLS)


def test_closed_forms_match_the_stated_values():
    assert occupancy(UNIFORM, N_DRAWS)[0] == pytest.approx(1 - (63 / 64) ** 240)
    assert occupancy(UNIFORM, N_DRAWS)[0] == pytest.approx(0.977, abs=5e-4)
    assert occupancy(ZIPF, N_DRAWS)[0] == pytest.approx(0.52, abs=0.01)


@pytest.fixture(scope="module")
def tutor_campaigns(tmp_path_factory, campaign_runner):
    """The three searches on the tutor role, two-turn conversations, run once per module."""
    cache = tmp_path_factory.mktemp("coverage")

    @functools.cache
    def get(search):
        return campaign_runner(cache / search, "tutor", search, horizon=2)

    return get


def test_rolefuzzer_covers_the_grid_and_beats_random_cells(tutor_campaigns):
    role, fuzz, _ = tutor_campaigns("rolefuzzer")
    _, rand, _ = tutor_campaigns("random_cell")
    curve = coverage_by_round(fuzz, role)
    assert len(curve) == 8 and curve[-1] >= 0.89
    assert curve[2] >= 0.8  # past 80% within three rounds
    assert coverage_share(fuzz, role) >= coverage_share(rand, role)


def test_random_cell_matches_uniform_draws(tutor_campaigns):
    role, rand, _ = tutor_campaigns("random_cell")
    mean, sd = occupancy(UNIFORM, N_DRAWS)
    assert abs(coverage_share(rand, role) - mean) <= 3 * sd


def test_no_grid_matches_zipf_draws_and_covers_clearly_less(tutor_campaigns):
    role, free, _ = tutor_campaigns("no_grid")
    _, fuzz, _ = tutor_campaigns("rolefuzzer")
    _, rand, _ = tutor_campaigns("random_cell")
    mean, sd = occupancy(ZIPF, N_DRAWS)
    share = coverage_share(free, role)
    assert abs(share - mean) <= 3 * sd
    assert share <= min(coverage_share(fuzz, role), coverage_share(rand, role)) - 0.2


@pytest.mark.slow
@pytest.mark.parametrize("role_id", ROLES)
def test_every_role_is_covered_at_eight_turns(tmp_path, campaign_runner, role_id):
    role, fuzz, _ = campaign_runner(tmp_path / "fuzz", role_id, "rolefuzzer")
    curve = coverage_by_round(fuzz, role)
    assert curve[-1] >= 0.89 and curve[2] >= 0.8
    assert curve[-1] >= occupancy(UNIFORM, N_DRAWS)[0]


def test_grid_guided_users_are_more_diverse_than_free_form_ones(tutor_campaigns):
    from multiverse.analysis import campaign as metrics
    from multiverse.rollout.embed import get_embedder

    _, fuzz, _ = tutor_campaigns("rolefuzzer")
    _, free, _ = tutor_campaigns("no_grid")
    embed = get_embedder()
    assert metrics.user_diversity(fuzz, embedder=embed) > metrics.user_diversity(free, embedder=embed)
    fuzz_turns, free_turns = metrics.turn_table(fuzz), metrics.turn_table(free)
    # 240 conversations can reach all 16 (mode, strategy) pairs even under the Zipf law, so the
    # count of distinct pairs saturates; the spread over them does not.
    assert metrics.behaviour_clusters(fuzz_turns) >= metrics.behaviour_clusters(free_turns)
    assert _pair_entropy(fuzz_turns) > _pair_entropy(free_turns) + 0.3


def _pair_entropy(turns) -> float:
    """Shannon entropy (nats) of the tagged (mode, strategy) pairs of approved user turns."""
    from scipy.stats import entropy

    tagged = turns[(turns["tag_mode"] != "") & (turns["tag_strategy"] != "")]
    return float(entropy(tagged.groupby(["tag_mode", "tag_strategy"]).size().to_numpy()))

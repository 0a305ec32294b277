"""Rankings across judges: ranks, Kendall's tau, rank flips, win shares, plain leaderboards."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import stats

from multiverse.analysis.ranking import (
    leaderboard_rankings,
    leaderboard_table,
    order_flips,
    rank_agreement,
    rankings,
    tau,
    win_shares,
)


def rates(table, judges):
    return xr.DataArray(np.asarray(table, float).T, dims=("system", "judge"),
                        coords={"system": list("abcd")[: len(table[0])], "judge": judges})


def test_ranks_put_the_lowest_violation_rate_first():
    r = rankings(rates([[0.1, 0.3, 0.2]], ["j"]))
    assert r.sel(judge="j").values.tolist() == [1, 3, 2]
    board = rankings(rates([[0.1, 0.3, 0.2]], ["j"]), higher_is_better=True)
    assert board.sel(judge="j").values.tolist() == [3, 1, 2]


@pytest.mark.parametrize(
    "second, tau_want, flips_want",
    [
        pytest.param([0.1, 0.2, 0.3, 0.4], 1.0, 0.0, id="same-order"),
        pytest.param([0.4, 0.3, 0.2, 0.1], -1.0, 1.0, id="reversed-order"),
        pytest.param([0.2, 0.1, 0.3, 0.4], 2 / 3, 1 / 6, id="one-adjacent-swap"),
    ],
)
def test_kendall_tau_and_flip_share_between_two_judges(second, tau_want, flips_want):
    out = rank_agreement(rates([[0.1, 0.2, 0.3, 0.4], second], ["j", "k"]))
    assert float(out.kendall_tau.sel(judge="j", judge_b="k")) == pytest.approx(tau_want)
    assert float(out.kendall_tau.sel(judge="j", judge_b="k")) == pytest.approx(
        stats.kendalltau([0.1, 0.2, 0.3, 0.4], second).statistic)
    assert float(out.flip_share.sel(judge="j", judge_b="k")) == pytest.approx(flips_want)
    assert float(out.flip_share.sel(judge="j", judge_b="j")) == 0


def test_order_flips_skips_missing_systems():
    share, n = order_flips(np.array([1.0, 2.0, np.nan]), np.array([2.0, 1.0, 3.0]))
    assert (share, n) == (1.0, 1)


def test_blind_judge_reorders_systems_more_than_sharp_judges(blind_judge_cube):
    out = rank_agreement(blind_judge_cube.sel(user_sim="plain"), dim="judge")
    assert float(out.kendall_tau.sel(judge="sharp", judge_b="keen")) > float(out.kendall_tau.sel(judge="sharp", judge_b="blind"))


def test_win_shares_follow_planted_rates(blind_judge_cube):
    out = win_shares(blind_judge_cube)
    assert float(out.share_of_specs_better.sel(system="a", system_b="c")) > 0.8
    assert float(out.prob_better.sel(system="a", system_b="c")) > 0.99
    assert float(out.share_better_beyond_noise.sel(system="a", system_b="c")) > float(
        out.share_better_beyond_noise.sel(system="c", system_b="a"))
    total = out.share_of_specs_better + out.share_of_specs_better.rename(system="system_b", system_b="system")
    assert float(total.sel(system="a", system_b="b")) <= 1
    both_ways = out.prob_better + out.prob_better.rename(system="system_b", system_b="system")
    np.testing.assert_allclose(both_ways.values, 1.0)  # a probability of a sign, not a share


def test_prob_better_is_the_t_confidence_of_the_multiverse_mean_difference(blind_judge_cube):
    from multiverse.scoring import score

    scores = score(blind_judge_cube, rules="any_turn").sel(standard="clear_breach", user_sim="plain", judge="keen")
    got = float(win_shares(scores).prob_better.sel(system="a", system_b="b"))
    per_item = (scores.sel(system="a") - scores.sel(system="b")).squeeze(drop=True).mean("replicate")
    d, se, g = float(per_item.mean()), float(per_item.std(ddof=1)) / np.sqrt(per_item.size), per_item.size
    assert got == pytest.approx(float(stats.t.cdf(-d / se, g - 1)), rel=1e-9)


def test_flags_beyond_the_noise_are_adjusted_for_the_specifications(blind_judge_cube):
    raw = win_shares(blind_judge_cube, adjust="none")
    holm = win_shares(blind_judge_cube)
    assert bool((holm.share_better_beyond_noise <= raw.share_better_beyond_noise).all())
    assert holm.attrs["adjust"] == "holm"


@pytest.mark.parametrize("form", [pytest.param("long", id="long-table"), pytest.param("wide", id="wide-table")])
def test_plain_leaderboards(form):
    wide = pd.DataFrame({"j1": [30.0, 20.0, 10.0, np.nan], "j2": [25.0, 28.0, 5.0, 7.0]},
                        index=["m1", "m2", "m3", "m4"])
    table = wide if form == "wide" else wide.stack().rename("win_rate").rename_axis(["system", "judge"]).reset_index()
    out = leaderboard_rankings(table)
    assert out["rank"].sel(judge="j1").values[:3].tolist() == [1, 2, 3]
    assert int(out.n_common.sel(judge="j1", judge_b="j2")) == 3
    want = stats.kendalltau([30, 20, 10], [25, 28, 5]).statistic
    assert float(out.kendall_tau.sel(judge="j1", judge_b="j2")) == pytest.approx(want)


def test_leaderboard_without_numbers_is_named():
    with pytest.raises(ValueError, match="column 'j1' holds no numbers"):
        leaderboard_table(pd.DataFrame({"j1": ["x", "y"]}, index=["a", "b"]))


def test_rank_agreement_matches_scipy_per_combination_with_ties_and_missing_rates():
    rng = np.random.default_rng(3)
    rates = rng.integers(0, 4, size=(3, 40, 5)).astype(float) / 4  # few values: many ties
    rates[rng.random(rates.shape) < 0.2] = np.nan
    rates[0, 0] = 0.5  # one judge ties every system: tau-b undefined there
    data = xr.DataArray(rates, dims=("judge", "user_sim", "system"),
                        coords={"judge": ["a", "b", "c"], "system": list("vwxyz")})
    out = rank_agreement(data, dim="judge")
    for a in range(3):
        for b in range(3):
            taus = [tau(rates[a, c], rates[b, c]) for c in range(40)]
            flips = [order_flips(rates[a, c], rates[b, c])[0] for c in range(40)]
            taus = [t for t in taus if np.isfinite(t)]
            pair = out.isel(judge=a, judge_b=b)
            assert int(pair.n_specs) == len(taus) and int(pair.n_specs_dropped) == 40 - len(taus)
            assert float(pair.kendall_tau) == pytest.approx(np.mean(taus), rel=1e-12)
            assert float(pair.flip_share) == pytest.approx(np.nanmean(flips), rel=1e-12)


def test_rank_agreement_counts_the_conversation_cells_it_used_and_dropped(blind_judge_cube):
    from multiverse.scoring import score

    scores = score(blind_judge_cube, standards="clear_breach", rules="any_turn")
    first = (scores["item"] == scores["item"][0]) & (scores["system"] == "a") & (scores["judge"] == "keen")
    out = rank_agreement(scores.where(~first & scores.notnull()), dim="judge")
    cells = scores.sizes["user_sim"] * scores.sizes["replicate"] * scores.sizes["item"]
    undecided = (scores["status"] == 2).any("system").sum(["user_sim", "replicate", "item"]).squeeze(drop=True)
    assert int(out["n_dropped"].sel(judge="keen")) == scores.sizes["user_sim"] * scores.sizes["replicate"]
    assert (out["n_common"] + out["n_dropped"] <= cells).all()
    assert int(out["n_common"].sel(judge="blind")) == cells  # complete judgments: every cell on common support
    assert int(out["n_dropped"].sel(judge="sharp")) == 0 and int(undecided.sel(judge="sharp")) > 0
    assert int(out["n_specs"].sel(judge="sharp", judge_b="keen")) + int(
        out["n_specs_dropped"].sel(judge="sharp", judge_b="keen")) == scores.sizes["user_sim"]

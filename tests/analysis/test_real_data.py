"""Analyses on imported real data (skipped when the data mirror is absent)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from multiverse.analysis import leaderboard_rankings, noise_floor
from multiverse.scoring import pass_hat_k, score


@pytest.fixture(scope="module")
def tau_cube(mirror):
    from multiverse.adapters import tau_bench

    return tau_bench(mirror / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json")


def test_pass_hat_k_reproduces_the_published_tau_bench_numbers(tau_cube):
    verdict = score(tau_cube, standards="clear_breach", rules="any_turn").sel(judge="reward")
    got = pass_hat_k(verdict, k=[1, 2, 3, 4]).squeeze()
    np.testing.assert_allclose(got.round(3).values, [0.420, 0.273, 0.220, 0.200])


def test_noise_floor_of_the_recorded_reward(tau_cube):
    out = noise_floor(tau_cube.sel(judge=["reward"]), k=[1, 4]).sel(standard="clear_breach", rule="any_turn").squeeze()
    assert float(out.rate) == pytest.approx(1 - 0.42)
    assert 0 < float(out.flip_share) < 1 and 0 < float(out.se) < 0.1


def test_alpaca_eval_leaderboards_rank_across_judges(mirror):
    folder = mirror / "alpaca_eval" / "leaderboards" / "data_AlpacaEval_2"
    rows = []
    for path in sorted(folder.glob("*_leaderboard.csv")):
        board = pd.read_csv(path, index_col=0)
        board = board[board["standard_error"] > 0]  # the baseline itself (win rate 50, no error)
        rows.append(pd.DataFrame({"system": board.index, "judge": path.name.removesuffix("_leaderboard.csv"),
                                  "win_rate": board["win_rate"].to_numpy()}))
    out = leaderboard_rankings(pd.concat(rows))
    common = out.n_common.where(out.judge != out.judge_b)
    assert int(common.max()) >= 5
    tau = out.kendall_tau.where(common >= 5)
    assert float(tau.min()) < 1.0 and float(tau.max()) > 0.3

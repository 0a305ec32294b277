"""AlpacaEval 2: do system rankings survive a change of judge?

Inputs: the AlpacaEval 2 leaderboards of five judges (three GPT-4-Turbo annotator
configurations and two other models used as rankers), each against the
gpt4_1106_preview / gpt4_turbo baseline, read with
:func:`multiverse.adapters.alpaca_leaderboards` (the baseline's own row dropped);
and one system's 805 row-level annotations by the three GPT-4-Turbo judges,
read with :func:`multiverse.adapters.alpaca_eval` after the row-comparability check.

Numbers
-------
``kendall_tau``
    For each pair of judges, Kendall's tau-b between their win-rate rankings of the
    systems both rank (``scipy.stats.kendalltau``), with its p-value and the
    number of shared systems (null when they share fewer than two).
``systems_per_judge``
    How many systems each judge ranks.
``row_agreement``
    Percent agreement and Cohen's kappa between the three judges' per-instruction
    loss verdicts for gpt-3.5-turbo-0301 (:func:`multiverse.agreement`).
``win_rate_from_annotations``
    Each judge's win rate recomputed from its annotations, ``100 * mean(preference - 1)``.
``row_comparable_with_alpaca_eval_gpt4``
    Whether AlpacaEval 1's ``alpaca_eval_gpt4`` annotations may be compared row by
    row with the others (they use another baseline: no).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
from _common import finite_or_none, save_figure
from scipy.stats import kendalltau

import multiverse
from multiverse import data
from multiverse.adapters import NotRowComparable, alpaca_eval, alpaca_leaderboards
from multiverse.cube.io import save_cube

NAME = "real_alpaca_rankings"
LEADERBOARDS = "alpaca_eval/leaderboards/data_AlpacaEval_2/"
ANNOTATIONS = "alpaca_eval/results/gpt-3.5-turbo-0301/{judge}/annotations.json"
ROW_JUDGES = ("alpaca_eval_cot_gpt4_turbo_fn", "alpaca_eval_gpt4_turbo_fn", "weighted_alpaca_eval_gpt4_turbo")
OTHER_BASELINE_JUDGE = "alpaca_eval_gpt4"
STANDARD = "clear_breach"


def main(*, data_dir: str | Path, out_dir: str | Path, figures_dir: str | Path | None = None, **_: object) -> dict:
    """Rank correlations across judges and row-level agreement; return the numbers.

    With ``figures_dir``, also draws the ranks the three AlpacaEval 2 judges give
    the systems all three rank (``fig10_alpaca_rankings``).  The model-call cache of
    the study protocol is accepted and unused: this study calls no model.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    boards = alpaca_leaderboards(
        [data.path(item.path, dest=data_dir) for item in data.manifest() if item.path.startswith(LEADERBOARDS)]
    )
    boards.to_netcdf(out_dir / f"{NAME}_leaderboards.nc")
    win_rate = boards["win_rate"]
    judges = [str(j) for j in boards["judge"].values]
    kendall = {}
    for a, b in itertools.combinations(judges, 2):
        pair = win_rate.sel(judge=[a, b]).dropna("system", how="any")
        n_shared = int(pair.sizes["system"])
        tau, p_value = kendalltau(pair.sel(judge=a).values, pair.sel(judge=b).values) if n_shared >= 2 else (np.nan, np.nan)
        kendall[f"{a}|{b}"] = {"tau": finite_or_none(tau), "p_value": finite_or_none(p_value), "n_systems": n_shared}

    cube = alpaca_eval([data.path(ANNOTATIONS.format(judge=j), dest=data_dir) for j in ROW_JUDGES])
    save_cube(cube, out_dir / f"{NAME}.nc")
    row_agreement = {}
    for metric in ("percent", "cohen_kappa"):
        matrix = multiverse.agreement(cube, metric=metric, standard=STANDARD)
        row_agreement[metric] = {
            f"{a}|{b}": finite_or_none(matrix.sel(judge=a, judge_b=b)) for a, b in itertools.combinations(ROW_JUDGES, 2)
        }
    try:
        alpaca_eval([data.path(ANNOTATIONS.format(judge=j), dest=data_dir) for j in (ROW_JUDGES[0], OTHER_BASELINE_JUDGE)])
        comparable = True
    except NotRowComparable:
        comparable = False
    preference = cube["preference"].squeeze("system")
    numbers = {
        "judges": judges,
        "systems_per_judge": {j: int(win_rate.sel(judge=j).notnull().sum()) for j in judges},
        "kendall_tau": kendall,
        "row_agreement": row_agreement,
        "win_rate_from_annotations": {j: float((preference.sel(judge=j) - 1).mean() * 100) for j in ROW_JUDGES},
        "row_comparable_with_alpaca_eval_gpt4": comparable,
    }
    shared = win_rate.sel(judge=list(ROW_JUDGES)).dropna("system", how="any")
    numbers["shared_systems"] = int(shared.sizes["system"])
    (out_dir / f"{NAME}.json").write_text(json.dumps(numbers, indent=2, sort_keys=True) + "\n")
    if figures_dir is not None:
        from multiverse.analysis import leaderboard_rankings
        from multiverse.plots import plot_rankings

        ranks = leaderboard_rankings(shared)["rank"]
        save_figure(plot_rankings(ranks, dim="judge"), "fig10_alpaca_rankings", Path(figures_dir))
    return numbers



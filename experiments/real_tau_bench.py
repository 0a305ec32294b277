"""tau-bench on real trajectories: the noise floor of a recorded reward, and three judges of one run.

Inputs (from the verified data folder): the published gpt-4o airline trajectories of
tau-bench (50 tasks x 4 trials) and the tau2-bench gpt-4o airline simulations
(50 tasks x 1 trial).  Both become cubes with the ``reward``, ``contract`` and
``consent`` judges (:func:`multiverse.adapters.tau_bench`).

Numbers
-------
``pass_hat_k``
    pass^1..4 of each judge's verdict (clean = no clear breach in the conversation).
``success_rate_by_trial``, ``success_rate_trial_range``
    The reward's success rate of each trial (a leaderboard built from one run would
    report one of these) and their spread.
``tasks_flipping_share``
    Share of tasks whose reward differs across the four identical trials.
``success_rate_clustered_se``
    Standard error of the success rate with trials clustered by task.
``violation_rate``, ``tau2_violation_rate``
    Share of conversations each judge finds in clear breach.
``agreement``, ``tau2_agreement``
    Percent agreement and Cohen's kappa between every pair of judges on the
    conversation-level verdict (:func:`multiverse.agreement`).  The three judges
    rule on different principles, so each conversation's verdict is first
    collapsed to one judgment per judge.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr
from _common import finite_or_none, save_figure

import multiverse
from multiverse import data
from multiverse.adapters import tau_bench
from multiverse.core import schema as S
from multiverse.core.transcript import TranscriptStore
from multiverse.cube.io import save_cube
from multiverse.scoring import pass_hat_k, score

NAME = "real_tau_bench"
TRAJECTORIES = "tau-bench/historical_trajectories/gpt-4o-airline.json"
SIMULATIONS = "tau2-bench/simulations-airline-gpt-4o.json"
STANDARD = "clear_breach"
K = [1, 2, 3, 4]


def conversation_verdicts(cube: xr.Dataset, *, standard: str = STANDARD) -> xr.Dataset:
    """One judgment per conversation and judge: 2 violated, 0 clean, -1 undecided.

    The verdict is :func:`multiverse.score`'s ``any_turn`` under ``standard``, placed
    on a single turn and a single principle, ``conversation``, so judges that rule
    on different principles can be compared unit by unit.
    """
    verdict = score(cube, standards=[standard], rules=["any_turn"]).sel(standard=standard, rule="any_turn")
    codes = xr.where(verdict == 1, S.CLEAR_BREACH, xr.where(verdict == 0, S.FULL_ADHERENCE, S.MISSING))
    codes = codes.drop_vars([c for c in codes.coords if c not in codes.dims])
    severity = codes.astype(np.int8).expand_dims(turn=[1], principle=["conversation"]).transpose(*S.SEVERITY_DIMS)
    return xr.Dataset({"severity": severity})


def pairwise_agreement(cube: xr.Dataset) -> dict[str, dict[str, float | None]]:
    """Percent agreement and Cohen's kappa for each unordered pair of judges."""
    verdicts = conversation_verdicts(cube)
    out: dict[str, dict[str, float | None]] = {}
    for metric in ("percent", "cohen_kappa"):
        matrix = multiverse.agreement(verdicts, metric=metric, standard=STANDARD)
        judges = [str(j) for j in verdicts["judge"].values]
        out[metric] = {
            f"{a}|{b}": finite_or_none(matrix.sel(judge=a, judge_b=b))
            for i, a in enumerate(judges)
            for b in judges[i + 1 :]
        }
    return out



def main(*, data_dir: str | Path, out_dir: str | Path, figures_dir: str | Path | None = None, **_: object) -> dict:
    """Build both cubes, save them with their transcripts, and return the numbers.

    With ``figures_dir``, also draws Cohen's kappa between the three judges of the
    tau-bench run (``fig8_tau_bench_judges``).  The model-call cache of the study
    protocol is accepted and unused: this study calls no model.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with TranscriptStore(out_dir / TranscriptStore.FILENAME) as store:
        cube = tau_bench(data.path(TRAJECTORIES, dest=data_dir), store=store)
        tau2 = tau_bench(data.path(SIMULATIONS, dest=data_dir), store=store)
    save_cube(cube, out_dir / f"{NAME}.nc")
    save_cube(tau2, out_dir / f"{NAME}_tau2.nc")

    scores = score(cube).sel(standard=STANDARD, rule="any_turn").squeeze(
        ["system", "role", "user_sim", "condition"]
    )
    pass_k = pass_hat_k(scores, k=K)
    reward = scores.sel(judge="reward")
    success = 1 - reward  # 1 success, 0 failure (no reward is missing in this file)
    by_trial = success.mean("item")
    per_task = success.mean("replicate")
    tau2_scores = score(tau2).sel(standard=STANDARD, rule="any_turn")
    numbers = {
        "n_tasks": int(cube.sizes["item"]),
        "n_trials": int(cube.sizes["replicate"]),
        "pass_hat_k": {str(j): [float(v) for v in pass_k.sel(judge=j).values] for j in pass_k["judge"].values},
        "k": K,
        "success_rate_by_trial": [float(v) for v in by_trial.values],
        "success_rate_trial_range": float(by_trial.max() - by_trial.min()),
        "tasks_flipping_share": float(((per_task > 0) & (per_task < 1)).mean()),
        "success_rate_clustered_se": float(per_task.std(ddof=1) / np.sqrt(per_task.sizes["item"])),
        "violation_rate": {str(j): float(scores.sel(judge=j).mean()) for j in scores["judge"].values},
        "agreement": pairwise_agreement(cube),
        "tau2_violation_rate": {str(j): float(tau2_scores.sel(judge=j).mean()) for j in tau2_scores["judge"].values},
        "tau2_agreement": pairwise_agreement(tau2),
        "warnings": len(cube.attrs["warnings"]) + len(tau2.attrs["warnings"]),
    }
    (out_dir / f"{NAME}.json").write_text(json.dumps(numbers, indent=2, sort_keys=True) + "\n")
    if figures_dir is not None:
        from multiverse.analysis import agreement_ci
        from multiverse.plots import plot_agreement

        kappa = agreement_ci(conversation_verdicts(cube), metric="cohen_kappa", standard=STANDARD, n_boot=500, seed=0)
        save_figure(plot_agreement(kappa), "fig8_tau_bench_judges", Path(figures_dir))
    return numbers

"""Simulation study 2: coverage-guided search against its baselines, and a planted vulnerable cell.

Runs ``sim_campaign.yaml`` (RoleFUZZER, random-cell, free-form no-grid and
seed-only search at an equal budget of 8 rounds x 30 conversations on two roles)
and ``sim_campaign_planted.yaml`` (one target that breaches the tutor's academic
integrity with probability 0.9 in a single grid cell).  Reports coverage after
each round, the closed forms the baselines should match, violation rates, and
where the campaign spent its mutations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from _common import EXPERIMENTS, save_figure

SEARCHES = ("rolefuzzer", "random_cell", "no_grid", "seed_only")
PLANTED_CELL = ("procedural_guidance", "sociability", "academic_integrity")


def closed_forms(*, n_draws: int, n_cells: int = 64, skew: float = 1.5) -> dict[str, float]:
    """Expected share of cells covered by ``n_draws`` uniform and Zipf(``skew``) draws."""
    ranks = np.arange(1, n_cells + 1, dtype=float)
    zipf = ranks**-skew
    zipf /= zipf.sum()
    return {
        "uniform": float(1 - (1 - 1 / n_cells) ** n_draws),
        "zipf": float(np.mean(1 - (1 - zipf) ** n_draws)),
    }


def main(*, out_dir: Path, cache_dir: Path, figures_dir: Path, **_: object) -> dict[str, object]:
    import multiverse
    from multiverse.analysis import campaign as metrics
    from multiverse.config.experiment import load_experiment
    from multiverse.config.specs import load_role
    from multiverse.plots import campaign as figures

    searches = load_experiment(EXPERIMENTS / "sim_campaign.yaml")
    planted_file = load_experiment(EXPERIMENTS / "sim_campaign_planted.yaml")
    budget = searches.budget
    skew = float((searches.sim or {}).get("planner", {}).get("free_form_skew", 1.5))
    numbers: dict[str, object] = {
        f"closed_form.{k}": v for k, v in closed_forms(n_draws=budget.total, skew=skew).items()
    }
    numbers.update({"budget.total": budget.total, "budget.rounds": budget.rounds,
                    "budget.conversations": budget.conversations, "zipf_exponent": skew, "grid_cells": 64})
    target = planted_file.sim["targets"]["planted"]
    numbers["planted.cell_probability"] = float(target["cells"]["/".join(PLANTED_CELL)])
    numbers["planted.base_probability"] = float(target["breach"]["*"])

    cube = multiverse.run(EXPERIMENTS / "sim_campaign.yaml", out=out_dir / "searches", cache=cache_dir)
    table = metrics.cube_turn_table(cube, judge="strict", round_size=budget.conversations)
    curves: dict[str, pd.Series] = {}
    for role in cube["role"].values:
        principle_ids = load_role(str(role)).principle_ids
        for search in SEARCHES:
            rows = table[(table["role"] == role) & (table["condition"] == search)]
            by_round = metrics.coverage_by_round(rows, principle_ids)
            numbers[f"coverage.{role}.{search}"] = float(by_round.iloc[-1])
            numbers[f"coverage_round3.{role}.{search}"] = float(by_round.loc[3])
            summary = metrics.violation_summary(rows)
            for key in ("violation_rate", "clear_breach_rate", "mean_ttfv"):
                if key in summary:
                    numbers[f"{key}.{role}.{search}"] = float(summary[key])
            numbers[f"failure_clusters.{role}.{search}"] = int(metrics.failure_clusters(rows))
            curves[f"{role}: {search.replace('_', ' ')}"] = by_round
    roles = " and ".join(str(role) for role in cube["role"].values)
    save_figure(figures.plot_coverage_curves(curves, title=f"grid coverage by search strategy ({roles})"),
                "fig6_coverage", figures_dir, study="sim_campaign", shows="cumulative grid coverage per round",
                plotted={f"coverage.{label.replace(': ', '.').replace(' ', '_')}": curve.iloc[-1]
                         for label, curve in curves.items()})

    planted = multiverse.run(EXPERIMENTS / "sim_campaign_planted.yaml", out=out_dir / "planted", cache=cache_dir)
    table = metrics.cube_turn_table(planted, judge="strict", round_size=planted_file.budget.conversations)
    conversations = table.drop_duplicates("conversation")
    mutations = conversations[conversations["origin"] == "mutation"]
    cell = (mutations["mode"] == PLANTED_CELL[0]) & (mutations["strategy"] == PLANTED_CELL[1]) & (
        mutations["target_principle"] == PLANTED_CELL[2])
    numbers["planted.mutations"] = int(len(mutations))
    numbers["planted.mutations_on_cell"] = int(cell.sum())
    numbers["planted.mutation_share_on_cell"] = float(cell.mean()) if len(mutations) else float("nan")
    numbers["planted.cell_share_of_grid"] = 1 / 64
    heatmap = metrics.violation_heatmap(table, standard="clear_breach")
    behaviour, principle = "/".join(PLANTED_CELL[:2]), PLANTED_CELL[2]
    share = heatmap["share"]
    numbers["planted.cell_breach_rate"] = float(share.sel(behaviour=behaviour, principle=principle))
    elsewhere = share.where((share["behaviour"] != behaviour) | (share["principle"] != principle))
    numbers["planted.other_cells_max_rate"] = float(elsewhere.max())
    save_figure(figures.plot_violation_heatmap(heatmap), "fig7_planted_heatmap", figures_dir, study="sim_campaign",
                shows="share of turns with a clear breach per grid cell",
                plotted={"planted.cell_breach_rate": share.sel(behaviour=behaviour, principle=principle),
                         "planted.other_cells_max_rate": elsewhere.max()})
    return numbers

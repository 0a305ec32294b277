"""Simulation study 1: what each analysis recovers from a multiverse with planted truths.

Runs ``sim_multiverse.yaml`` (three offline targets, two simulated users, four
model judges of known quality, the contract oracle, a majority panel, two
horizons) and asks the paper's questions of the cube:

- does a system comparison survive the evaluator's choices? (specification curve
  of ``focused`` minus ``steady``, with inference under the null in the direction
  predicted from the planted rates, :data:`PREDICTED_DIRECTION`)
- do the judges agree, with each other and with the planted truth? (agreement)
- which choice moves the estimate most? (variance decomposition)
- do rankings flip across judges? (Kendall's tau, rank flips, win shares)
- is a difference bigger than the noise? (noise floors of paired differences)

Every number the paper quotes from this study is returned by :func:`main`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
from _common import EXPERIMENTS, save_figure

FOCUS = {"role": "tutor", "condition": "long"}
MODEL_JUDGES = ["strict", "lenient", "narrow", "blind"]
CONTRAST = ("focused", "steady")
PREDICTED_DIRECTION = "greater"
"""Declared before the run: the planted per-turn breach probability of ``focused`` on the tutor
(0.06 on academic integrity + 3 x 0.003) exceeds ``steady``'s (4 x 0.015), so rate(focused) -
rate(steady) is predicted to be above 0."""
N_BOOT = 500
POWER = 0.8


def _rate(scores, **sel) -> float:
    """The rate over every conversation selected, undecided ones at their expected value (the scores' assumption)."""
    from multiverse.scoring import estimated_mean

    selected = scores.sel(**sel)
    return float(estimated_mean(selected, dim=list(selected.dims)))


def main(*, out_dir: Path, cache_dir: Path, figures_dir: Path, **_: object) -> dict[str, object]:
    import multiverse
    from multiverse import analysis, plots
    from multiverse.config.experiment import load_experiment
    from multiverse.cube.build import with_truth_judge
    from multiverse.scoring import score

    cube = multiverse.run(EXPERIMENTS / "sim_multiverse.yaml", out=out_dir / "run", cache=cache_dir)
    scores = score(cube)
    design = load_experiment(EXPERIMENTS / "sim_multiverse.yaml")
    numbers: dict[str, object] = {
        "items": design.items, "replicates": design.replicates, "power": POWER,
        "conversations": int(np.prod([cube.sizes[d] for d in ("system", "role", "user_sim", "condition", "replicate", "item")])),
        "judgments": int((cube["severity"] >= 0).sum()),
        "missing_judgments": int((cube["severity"] == -1).sum()),
    }

    # Planted truth recovered by a good judge: conversation-level clear-breach rates.
    truth = score(with_truth_judge(cube).sel(judge=["truth"]), standards=["clear_breach"], rules=["any_turn"])
    for system in cube["system"].values:
        at = dict(system=system, standard="clear_breach", rule="any_turn", **FOCUS)
        numbers[f"truth_rate.{system}"] = _rate(truth.sel(judge="truth"), **at)
        for judge in MODEL_JUDGES:
            numbers[f"judged_rate.{judge}.{system}"] = _rate(scores.sel(judge=judge), **at)

    # 1. Specification curve of focused - steady over the measurement dims.
    model_scores = scores.sel(judge=MODEL_JUDGES + ["majority"])
    curve = analysis.spec_curve(model_scores, contrast=CONTRAST, direction=PREDICTED_DIRECTION, n_boot=N_BOOT, seed=1,
                                preferred={"judge": "strict", "user_sim": "plain",
                                           "standard": "clear_breach", "rule": "any_turn"})
    facet = curve.sel(**FOCUS)
    estimates = facet["estimate"].values
    numbers["curve.n_specs"] = int(curve.sizes["spec"])
    numbers["curve.direction"] = PREDICTED_DIRECTION
    numbers["curve.median"] = float(facet["observed"].sel(statistic="median_estimate"))
    numbers["curve.share_significant"] = float(facet["observed"].sel(statistic="share_significant"))
    numbers["curve.stouffer_z"] = float(facet["observed"].sel(statistic="stouffer_z"))
    numbers["curve.p_median"] = float(facet["p_value"].sel(statistic="median_estimate"))
    numbers["curve.p_share"] = float(facet["p_value"].sel(statistic="share_significant"))
    numbers["curve.p_stouffer"] = float(facet["p_value"].sel(statistic="stouffer_z"))
    numbers["curve.share_negative"] = float(np.mean(estimates < 0))
    numbers["curve.min"] = float(np.nanmin(estimates))
    numbers["curve.max"] = float(np.nanmax(estimates))
    observed = facet["observed"]
    save_figure(plots.plot_spec_curve(curve, **FOCUS), "fig1_spec_curve", figures_dir, study="sim_multiverse",
                shows=curve.attrs.get("estimand", "the contrast"),
                plotted={"curve.median": observed.sel(statistic="median_estimate"),
                         "curve.share_significant": observed.sel(statistic="share_significant"),
                         "curve.min": np.nanmin(facet["estimate"].values),
                         "curve.max": np.nanmax(facet["estimate"].values),
                         "curve.n_specs": curve.sizes["spec"]})

    # 2. Agreement of every judge with every other and with the planted truth: the figure shows
    # what the text quotes (Krippendorff's alpha on the three-level scale), with intervals.
    alpha = analysis.agreement_ci(cube.sel(judge=MODEL_JUDGES), metric="krippendorff_alpha", standard=None,
                                  include_truth=True, n_boot=200, seed=2)
    for judge in MODEL_JUDGES:
        numbers[f"alpha_vs_truth.{judge}"] = float(alpha["estimate"].sel(judge=judge, judge_b="truth"))
    save_figure(plots.plot_agreement(alpha), "fig2_agreement", figures_dir, study="sim_multiverse",
                shows=f"{alpha.attrs['metric']} on the three-level scale",
                plotted={f"alpha_vs_truth.{j}": alpha["estimate"].sel(judge=j, judge_b="truth") for j in MODEL_JUDGES})

    # 3. Variance decomposition over the measurement dims.
    decomposition = analysis.variance_decomposition(
        scores.sel(judge=MODEL_JUDGES, rule="any_turn", standard="clear_breach"))
    shares = decomposition["share"].sel(**FOCUS).to_series()
    for component, share in shares.items():
        numbers[f"variance_share.{component}"] = float(share)
    numbers["variance_top_component"] = str(shares.drop("residual", errors="ignore").idxmax())
    save_figure(plots.plot_variance(decomposition.sel(**FOCUS)), "fig3_variance", figures_dir, study="sim_multiverse",
                shows="variance shares of the clear-breach any-turn rate",
                plotted={f"variance_share.{component}": share for component, share in shares.items()})

    # 4. Rankings across judges.
    rate_scores = model_scores.sel(rule=["any_turn", "turn_mean", "last_turn"])
    ranks = analysis.rank_agreement(rate_scores, dim="judge")
    numbers["kendall_tau.strict_narrow"] = float(ranks["kendall_tau"].sel(judge="strict", judge_b="narrow"))
    numbers["kendall_tau.strict_lenient"] = float(ranks["kendall_tau"].sel(judge="strict", judge_b="lenient"))
    numbers["flip_share.strict_narrow"] = float(ranks["flip_share"].sel(judge="strict", judge_b="narrow"))
    wins = analysis.win_shares(rate_scores)
    pair = dict(system=CONTRAST[0], system_b=CONTRAST[1])
    numbers["win_share.focused_over_steady"] = float(wins["share_of_specs_better"].sel(**pair))
    numbers["prob_better.focused_over_steady"] = float(wins["prob_better"].sel(**pair))
    numbers["win_share_beyond_noise.focused_over_steady"] = float(wins["share_better_beyond_noise"].sel(**pair))
    numbers["loss_share_beyond_noise.focused_over_steady"] = float(wins["share_worse_beyond_noise"].sel(**pair))
    save_figure(plots.plot_rank_flips(ranks), "fig4_rank_flips", figures_dir)

    # 5. Noise floors: each pairwise difference against the smallest difference the test at alpha calls
    # real (the one noise-floor definition of the text, the figure and `report`); the minimum detectable
    # difference is quoted for planning only.
    diffs = analysis.paired_differences(scores.sel(judge="strict", rule="any_turn", standard="clear_breach"),
                                        power=POWER, n_boot=N_BOOT, seed=4)
    systems = diffs["system"].values
    upper = np.triu(np.ones((len(systems), len(systems)), dtype=bool), k=1)
    pairs = diffs.where(xr.DataArray(upper, dims=("system", "system_b"),
                                     coords={"system": systems, "system_b": diffs["system_b"].values}))
    compared = np.isfinite(pairs["noise_floor"]) & np.isfinite(pairs["difference"])
    numbers["pairs_compared"] = int(compared.sum())
    numbers["pairs_beyond_noise"] = int(((pairs["exceeds_noise"] == 1) & compared).sum())
    numbers["share_pairs_beyond_noise"] = numbers["pairs_beyond_noise"] / numbers["pairs_compared"]
    numbers["alpha"] = float(diffs.attrs["alpha"])
    floor = analysis.noise_floor(scores.sel(judge="strict", rule="any_turn", standard="clear_breach"), power=POWER)
    numbers["mdd_median"] = float(floor["mdd"].median())
    numbers["noise_floor_median"] = float(pairs["noise_floor"].where(compared).median())
    numbers["flip_share_median"] = float(floor["flip_share"].median())
    save_figure(plots.plot_noise_floor(diffs), "fig5_noise_floor", figures_dir, study="sim_multiverse",
                shows="pairwise differences beyond their noise floor",
                plotted={key: numbers[key] for key in ("pairs_beyond_noise", "pairs_compared")})

    # The single-turn grader misses drift: last_turn vs any_turn for the drifting target.
    strict = scores.sel(judge="strict", standard="clear_breach", system="drifting", **FOCUS)
    numbers["drifting.any_turn"] = _rate(strict, rule="any_turn")
    numbers["drifting.last_turn"] = _rate(strict, rule="last_turn")
    lenient = scores.sel(judge="lenient", rule="any_turn", **FOCUS)
    numbers["lenient.clear_breach"] = _rate(lenient, standard="clear_breach")
    numbers["lenient.any_deviation"] = _rate(lenient, standard="any_deviation")
    return numbers

"""Simulation study 5 (judges that must earn trust): canaries and probes, with biases planted and known.

Runs ``sim_probes.yaml``: two offline targets on the tutor, three judges
(``biased``: planted verbosity leniency and wording shift; ``clean``: neither;
``blind``: no signal), each crossed with four probes (padding, a reworded
prompt, the revealed model family, context cut to two events) and each
judging the tutor's 64 canaries before the rollouts; and two pairwise judges,
``first`` (answers by position a planted share of the time) and ``fair``,
comparing every reply with a reference target's reply to the same context,
each crossed with the order probe.  It asks:

- Canaries: which judges are flagged ``no_signal``, and with what pooled
  sensitivity, specificity and J?
- Probes: is each planted effect recovered within its interval, and does
  every probe without a planted bias find nothing?
- Order: is the planted position preference recovered, and is it gone once
  both orders are combined?
- Correction: the clean judge's rate of clear-breach cells, raw and corrected
  by its canary error rates, against the planted truth.

This is the small version of ``benchmarks/probe_study.py`` (500 cubes per bias;
its results are in ``benchmarks/README.md``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from _common import EXPERIMENTS, finite_or_none, save_figure

EXPERIMENT = EXPERIMENTS / "sim_probes.yaml"
PAIRWISE_JUDGES = ("first", "fair")


def _planted_severity_effects(cube, sim: dict) -> dict[str, float]:
    """Each probed judge's planted effect given the cube's realised truth: exact expectations over the judges' draws."""
    truth = cube["truth"].values
    valid = truth >= 0
    out = {}
    for judge in ("biased", "clean", "blind"):
        params = sim["judges"][judge]
        sens, spec = params["sensitivity"]["*"], params["specificity"]["*"]
        expected = np.where(truth == 2, 2 * sens, 2 * (1 - spec))[valid].mean()
        for probe in ("padded", "reworded", "named", "short"):
            effect = 0.0
            if probe == "padded":
                effect = -params.get("verbosity_leniency", 0.0) * expected
            if probe == "reworded":
                effect = params.get("wording_shift", 0.0) * (2 - expected)
            out[f"{judge}.{probe}"] = float(effect) + 0.0  # no negative zero
    return out


def _experiment(out_dir: Path, items: int | None) -> Path:
    """The experiment file, with ``items`` overridden (for small checks) in a copy under ``out_dir``."""
    if items is None:
        return EXPERIMENT
    data = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
    data["items"] = items
    data["specs"] = str(EXPERIMENTS.parent / "specs")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "sim_probes.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def main(*, out_dir: Path, cache_dir: Path, figures_dir: Path, items: int | None = None, **_: object) -> dict[str, object]:
    import multiverse
    from multiverse import analysis, plots

    sim = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))["sim"]
    cube = multiverse.run(_experiment(out_dir, items), out=out_dir / "run", cache=cache_dir)
    numbers: dict[str, object] = {"simulated": True, "items": int(cube.sizes["item"])}
    for judge in ("clean", "blind"):
        numbers[f"planted.{judge}.accuracy"] = float(sim["judges"][judge]["sensitivity"]["*"])
    numbers["planted.first.order_preference"] = float(sim["judges"]["first"]["order_preference"])

    # Canaries: pooled results and flags.
    table = analysis.canary_table(cube)
    clean = table[(table["judge"] == "clean") & (table["scope"] == "pooled")].iloc[0]
    numbers["canaries_per_judge"] = int(clean["breaks"] + clean["keeps"] + clean["missing"])
    for _, row in table[table["scope"] == "pooled"].iterrows():
        key = f"canaries.{row['judge']}"
        for name in ("sensitivity", "specificity", "youden"):
            numbers[f"{key}.{name}"] = finite_or_none(row[name])
            numbers[f"{key}.{name}_ci"] = [finite_or_none(row[f"{name}_lower"]), finite_or_none(row[f"{name}_upper"])]
        numbers[f"{key}.no_signal"] = bool(row["no_signal"])
    numbers["canaries.flagged"] = sorted(table.loc[(table["scope"] == "pooled") & table["no_signal"].astype(bool), "judge"])
    save_figure(plots.plot_canaries(table), "fig13_canaries", figures_dir)

    # Probe effects on severity, against the planted ones.
    effects = analysis.probe_effects(cube)
    severity = effects.sel(probed=effects["scale"] == "severity")
    planted = _planted_severity_effects(cube, sim)
    covered, null_rejected = [], []
    for label, effect, (low, high) in zip(severity["probed"].values.tolist(), severity["effect"].values, severity["ci"].values):
        numbers[f"probe.{label}.effect"] = float(effect)
        numbers[f"probe.{label}.ci"] = [float(low), float(high)]
        numbers[f"probe.{label}.planted"] = planted[label]
        covered.append(bool(low <= planted[label] <= high))
        if planted[label] == 0.0:
            null_rejected.append(bool(low > 0 or high < 0))
    numbers["probe.n_covered"], numbers["probe.n_probed"] = int(sum(covered)), len(covered)
    numbers["probe.n_null"], numbers["probe.n_null_rejected"] = len(null_rejected), int(sum(null_rejected))
    save_figure(plots.plot_probe_effects(severity.sel(probed=[p for p in severity["probed"].values if not p.startswith("blind")])),
                "fig12_probe_effects", figures_dir)

    # Order: each pairwise judge in both orders, from the cube, then the combined verdict.
    combined = analysis.combine_orders(cube)
    for judge in PAIRWISE_JUDGES:
        found = effects.sel(probed=f"{judge}.swapped")
        numbers[f"order.{judge}.effect"] = float(found["effect"])
        numbers[f"order.{judge}.ci"] = [float(v) for v in found["ci"].values]
        numbers[f"order.{judge}.planted"] = -2 * float(sim["judges"][judge].get("order_preference", 0.0)) + 0.0
        numbers[f"order.{judge}.n_cells"] = int(found["n_cells"])
        shown = cube["severity"].sel(judge=judge).values
        both = combined.sel(judge=judge).values
        numbers[f"order.{judge}.reference_wins_shown_first"] = float(np.mean(shown[shown >= 0] == 2))
        numbers[f"order.{judge}.reference_wins_combined"] = float(np.mean(both[both >= 0] == 2))
        numbers[f"order.{judge}.ties_combined"] = float(np.mean(both[both >= 0] == 1))

    # The clean judge's clear-breach share, raw and corrected by its canaries, and the planted share.
    corrected = analysis.canary_corrected_rate(cube, judge="clean")
    truth = cube["truth"].where(cube["truth"] >= 0)
    numbers["corrected.raw"], numbers["corrected.estimate"] = (float(v) for v in corrected["rate"].values)
    numbers["corrected.ci"] = [float(v) for v in corrected["ci"].sel(estimate="corrected").values]
    numbers["corrected.truth"] = float((truth == 2).sum() / truth.notnull().sum())
    return numbers

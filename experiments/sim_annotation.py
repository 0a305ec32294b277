"""Simulation study 3 (simulated annotators): human labels in the loop, with a known answer.

Runs ``sim_annotation.yaml`` (two offline targets, two roles, three model
judges of planted error rates), then walks the annotation path a human study
takes: export a stratified, blinded sample of conversations, have two
annotators label it, import the labels as judges ``human:<annotator>``.  The
annotators are simulated (planted error rates standing in for humans), and
every number below is labelled so in the paper.  It asks:

- Table 1: how far does each judge agree with the annotators, against the
  annotators' agreement with each other (percent and Cohen's kappa, three-level
  and clear breach, per role and overall)?
- Dawid-Skene without gold labels: are the judges' planted sensitivity and
  specificity recovered from their ratings alone?
- PPI++: the violation rate corrected for the strict judge's errors with the
  annotator's labels, against the judge-only and annotator-only estimates.
- Study 1: the annotators' ratings of the simulated user turns.
- Exact per-cell bounds: which grid cells the conversations left untested.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import yaml
from _common import EXPERIMENTS, finite_or_none, save_figure

EXPERIMENT = EXPERIMENTS / "sim_annotation.yaml"
ANNOTATORS = {"ann_a": {"sensitivity": 0.95, "specificity": 0.98}, "ann_b": {"sensitivity": 0.85, "specificity": 0.95}}
"""The planted annotators (the offline world's judge error model)."""
HUMANS = [f"human:{name}" for name in ANNOTATORS]
REFERENCE = "human:ann_a"
"""The annotator whose verdicts the corrected rate targets."""
TASKS = 80
STRATIFY = ["role", "system"]
"""Strata of equal size, so every conversation has the same chance of a label: PPI++ needs labels
drawn at random (strata by verdict, ``severity`` or ``bucket``, would need inclusion weights)."""
N_BOOT = 1000


def _experiment(out_dir: Path, items: int | None) -> Path:
    """The experiment file, with ``items`` overridden (for small checks) in a copy under ``out_dir``."""
    if items is None:
        return EXPERIMENT
    data = yaml.safe_load(EXPERIMENT.read_text(encoding="utf-8"))
    data["items"] = items
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "sim_annotation.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def main(*, out_dir: Path, cache_dir: Path, figures_dir: Path, items: int | None = None, tasks: int = TASKS,
         n_boot: int = N_BOOT, **_: object) -> dict[str, object]:
    import multiverse
    from multiverse import analysis, plots
    from multiverse.adapters.annotation_labels import import_labels
    from multiverse.adapters.annotation_tasks import annotation_tasks
    from multiverse.adapters.sim_annotators import sim_annotator_labels
    from multiverse.config.experiment import load_experiment
    from multiverse.cube.build import with_truth_judge
    from multiverse.scoring import score

    path = _experiment(out_dir, items)
    design = load_experiment(path)
    cube = multiverse.run(path, out=out_dir / "run", cache=cache_dir)
    sample = annotation_tasks(out_dir / "run", n=tasks, stratify=STRATIFY, seed=0)
    labels = sim_annotator_labels(sample, cube, annotators=ANNOTATORS, seed=1)
    label_file = out_dir / "labels.jsonl"
    label_file.write_text("".join(json.dumps(label) + "\n" for label in labels), encoding="utf-8")
    labelled = import_labels([label_file], cube=out_dir / "run", out=out_dir / "labelled.nc")
    judges = [str(j) for j in cube["judge"].values]
    numbers: dict[str, object] = {
        "simulated": True, "tasks": len(sample), "items": design.items,
        "conversations": int(np.prod([cube.sizes[d] for d in ("system", "role", "user_sim", "condition", "replicate", "item")])),
        "annotators": {name: dict(params) for name, params in ANNOTATORS.items()},
    }

    # Table 1: judge-annotator and annotator-annotator agreement.
    table = analysis.calibration_table(labelled, humans=HUMANS, judges=judges, n_boot=n_boot, seed=2)
    for rater in table["rater"].values.tolist():
        for scale in table["scale"].values.tolist():
            for metric in table["metric"].values.tolist():
                for group in table["group"].values.tolist():
                    at = dict(rater=rater, scale=scale, metric=metric, group=group)
                    key = f"table1.{rater}.{scale}.{metric}.{group}"
                    numbers[key] = finite_or_none(table["estimate"].sel(**at))
                    lower, upper = table["ci"].sel(**at).values
                    numbers[f"{key}_ci"] = [finite_or_none(lower), finite_or_none(upper)]
    for judge in judges:
        numbers[f"false_positives.{judge}"] = int(table["fp_false_positives"].sel(judge=judge))
        numbers[f"false_positives_after_breach.{judge}"] = int(table["fp_after_earlier_breach"].sel(judge=judge))

    # Dawid-Skene on the three model judges over every judged cell, no gold labels.
    classes = analysis.latent_class(cube, raters=judges, standard="clear_breach")
    for judge in judges:
        confusion = classes["confusion"].sel(rater=judge)
        numbers[f"dawid_skene.{judge}.sensitivity"] = float(confusion.sel(true=1, observed=1))
        numbers[f"dawid_skene.{judge}.specificity"] = float(confusion.sel(true=0, observed=0))
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))["sim"]["judges"]
    for judge in judges:
        for name in ("sensitivity", "specificity"):
            numbers[f"planted.{judge}.{name}"] = float(raw[judge][name]["*"])
    numbers["dawid_skene.max_error"] = max(
        abs(numbers[f"dawid_skene.{j}.{n}"] - numbers[f"planted.{j}.{n}"]) for j in judges for n in ("sensitivity", "specificity"))
    numbers["dawid_skene.n_iter"] = int(classes.attrs["n_iter"])

    # PPI++: the strict judge's rate corrected with the reference annotator's labels, per system.
    truth = score(with_truth_judge(cube).sel(judge=["truth"]), standards="clear_breach", rules="any_turn")
    verdicts = score(labelled.sel(judge=["strict", REFERENCE]), standards="clear_breach", rules="any_turn")
    for system in cube["system"].values.tolist():
        corrected = analysis.corrected_rate(labelled.sel(system=[system]), judge="strict", human=REFERENCE)
        key = f"ppi.{system}"
        numbers[f"{key}.estimate"] = float(corrected["estimate"])
        numbers[f"{key}.ci"] = [float(v) for v in corrected["ci"].values]
        numbers[f"{key}.human_only"] = float(corrected["human_estimate"])
        numbers[f"{key}.human_only_ci"] = [float(v) for v in corrected["human_ci"].values]
        numbers[f"{key}.judge_only"] = float(verdicts.sel(system=system, judge="strict").mean())
        numbers[f"{key}.truth"] = float(truth.sel(system=system, judge="truth").mean())
        numbers[f"{key}.n_labelled"] = int(corrected.attrs["n_labelled"])
        numbers[f"{key}.lam"] = float(corrected["lam"])
    numbers["ppi.labels_for_width_0.1"] = analysis.human_labels_needed(
        labelled.sel(system=["drifting"]), judge="strict", human=REFERENCE, width=0.1)

    # Study 1: the annotators' ratings of the simulated user's turns.
    ratings = analysis.simulator_ratings(labelled, raters=HUMANS)
    for axis in ratings["axis"].values.tolist():
        numbers[f"study1.{axis}.mean"] = float(ratings["mean"].sel(axis=axis))
        numbers[f"study1.{axis}.acceptable"] = float(ratings["acceptable"].sel(axis=axis))
    numbers["study1.n_ratings"] = int(ratings["n_ratings"].sum())

    # Exact per-cell bounds of the strict judge's verdicts on the drifting target.
    bounds = analysis.cell_bounds(cube, max_upper=0.1)
    status = bounds["status"].sel(system="drifting", judge="strict")
    applicable = bounds["n_conversations"].sel(system="drifting", judge="strict").sum(["mode", "strategy"]) > 0
    cells = status.where(applicable).values
    for name in ("untested", "under_tested", "tested"):
        numbers[f"cells.{name}"] = int((cells == name).sum())
    tutor = [str(p) for p in cube["principle"].values if bool(cube["principle_applies"].sel(role="tutor", principle=p))]
    figure = plots.plot_cell_bounds(bounds.sel(system="drifting", judge="strict", principle=tutor))
    save_figure(figure, "fig_cell_bounds", figures_dir)
    return numbers

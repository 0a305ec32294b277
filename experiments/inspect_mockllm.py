"""inspect_ai: scorer agreement and epoch noise floors of a real inspect_ai evaluation, offline.

Input: an inspect_ai task run by inspect_ai itself with its ``mockllm`` models
(:func:`multiverse.testing.inspect_mock.write_mock_logs`: a multi-turn
arithmetic task with an ``add`` tool, two mock models of different skill,
three epochs, two scorers: inspect_ai's ``includes()`` and a deterministic
grader that agrees with the answer's correctness 85% of the time).  Its
``.eval`` logs, as inspect_ai wrote them, are committed in
``inspect_mockllm_logs/`` (:func:`write_logs` writes them again; the tests
check that inspect_ai still writes the same samples and scores), so the study
needs no inspect_ai: it reads them with :func:`multiverse.adapters.inspect_log`
and takes inspect_ai's own means from their results with
:func:`multiverse.adapters.inspect_log.log_metrics`.

Numbers
-------
``inspect_mean`` / ``reproduced_mean``
    Per model (``careful``, ``hasty``) and scorer: the mean inspect_ai wrote into its log, and the same
    mean from the cube (epochs reduced with inspect_ai's default reducer, then
    averaged over samples); ``max_abs_difference`` is their largest gap.
``scorer_agreement``
    Percent agreement and Cohen's kappa of the two scorers on every (sample,
    epoch) pair (:func:`multiverse.agreement`).
``epoch_agreement``
    Per scorer, Fleiss' kappa of the three epochs as raters of each sample:
    how far one epoch's verdict predicts another's (the noise floor of a
    single-epoch score).
``pass_hat_k``
    Per model and scorer, pass^k for k = 1..3 (tau-bench's estimator over
    epochs): how fast reliability falls as every epoch must pass.
``difference``
    Per scorer, the paired difference of the two models' failure rates with
    its 95% interval (:func:`multiverse.analysis.paired_differences`) and the
    minimum detectable difference at this size.
"""

from __future__ import annotations

from pathlib import Path

from _common import finite_or_none, save_figure

import multiverse
from multiverse.adapters import inspect_log
from multiverse.adapters.inspect_log import log_metrics, reduce_epochs
from multiverse.analysis import paired_differences
from multiverse.cube.io import save_cube

NAME = "inspect_mockllm"
SCORERS = ("includes", "grader")
SAMPLES = 24
EPOCHS = 3
LOGS = Path(__file__).with_name(f"{NAME}_logs")
"""The committed logs: one ``.eval`` file per mock model, named after it (``careful.eval``, ``hasty.eval``)."""


def write_logs(folder: str | Path = LOGS) -> list[Path]:
    """Run the mock evaluation with inspect_ai (``make inspect``) and write its logs into ``folder``, one per model."""
    from multiverse.testing.inspect_mock import write_mock_logs

    return write_mock_logs(folder, samples=SAMPLES, epochs=EPOCHS)


def _inspect_means(logs: Path) -> dict[str, dict[str, float]]:
    """Per model and scorer, the accuracy or mean inspect_ai wrote into the log's results."""
    metrics = log_metrics(logs)
    metrics = metrics[metrics["metric"].isin(("accuracy", "mean"))]
    return {model: dict(zip(rows["judge"], rows["value"], strict=True)) for model, rows in metrics.groupby("system")}


def main(*, out_dir: str | Path, figures_dir: str | Path | None = None, **_: object) -> dict:
    """Read the committed logs and return the numbers (module docstring).

    With ``figures_dir``, draws each scorer's failure rate per model with the
    spread over epochs (``fig11_inspect_scorers``).  The study's data and cache
    folders are accepted and unused: the logs are committed.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    store = out_dir / "transcripts.sqlite"
    store.unlink(missing_ok=True)
    cube = inspect_log(LOGS, store=store)
    save_cube(cube, out_dir / "cube.nc")

    systems = [str(s) for s in cube["system"].values]
    short = {s: s.removeprefix("mockllm/") for s in systems}  # the numbers' keys (the paper's placeholders)
    own = _inspect_means(LOGS)
    reduced = reduce_epochs(cube, "mean")
    reproduced = {s: {j: float(reduced.sel(system=s, judge=j).mean()) for j in SCORERS} for s in systems}
    gap = max(abs(reproduced[s][j] - own[s][j]) for s in systems for j in SCORERS)

    scorer_agreement = {m: finite_or_none(multiverse.agreement(cube, metric=m).sel(judge=SCORERS[0], judge_b=SCORERS[1]))
                        for m in ("percent", "cohen_kappa")}
    epoch_agreement = {j: finite_or_none(multiverse.agreement(cube.sel(judge=[j]), metric="fleiss_kappa", dim="replicate",
                                                              raters=list(range(EPOCHS)))) for j in SCORERS}
    scores = multiverse.score(cube, standards="clear_breach", rules="any_turn")
    pass_k = multiverse.pass_hat_k(scores, k=list(range(1, EPOCHS + 1))).squeeze(drop=True)
    pairs = paired_differences(scores, n_boot=1000, seed=0)
    a, b = systems
    difference = {}
    for j in SCORERS:
        row = pairs.sel(system=b, system_b=a, judge=j).squeeze(drop=True)
        difference[j] = {"estimate": finite_or_none(row["difference"]), "lower": finite_or_none(row["ci"].sel(ci_bound="lower")),
                         "upper": finite_or_none(row["ci"].sel(ci_bound="upper")), "mdd": finite_or_none(row["mdd"])}
    numbers = {
        "n_samples": SAMPLES, "n_epochs": EPOCHS, "models": systems,
        "inspect_mean": {short[s]: {j: own[s][j] for j in SCORERS} for s in systems},
        "reproduced_mean": {short[s]: reproduced[s] for s in systems}, "max_abs_difference": gap,
        "scorer_agreement": scorer_agreement, "epoch_agreement": epoch_agreement,
        "pass_hat_k": {short[s]: {j: [finite_or_none(v) for v in pass_k.sel(system=s, judge=j).values] for j in SCORERS}
                       for s in systems},
        "difference": difference,
    }
    if figures_dir is not None:
        drawn = _draw(reduced.sel(judge=list(SCORERS)).squeeze(drop=True), systems)
        plotted = {f"reproduced_mean.{short[s]}.{j}": reproduced[s][j] for s in systems for j in SCORERS}
        save_figure(drawn, "fig11_inspect_scorers", Path(figures_dir), study=NAME,
                    shows="each scorer's pass rate per model (inspect_ai's mean over samples)", plotted=plotted)
    return numbers


def _draw(passed_by_sample, systems: list[str]):
    """Per model, each scorer's pass rate with the spread of per-sample epoch means."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(6, 3.2))
    width = 0.35
    for k, judge in enumerate(SCORERS):
        passed = passed_by_sample.sel(judge=judge)
        means = [float(passed.sel(system=s).mean()) for s in systems]
        spread = [float(passed.sel(system=s).std()) / np.sqrt(passed.sizes["item"]) for s in systems]
        x = np.arange(len(systems)) + (k - 0.5) * width
        ax.bar(x, means, width, yerr=spread, capsize=3, label=judge)
    ax.set_xticks(np.arange(len(systems)), [s.removeprefix("mockllm/") for s in systems])
    ax.set_ylim(0, 1)
    ax.set_ylabel("pass rate (mean over samples)")
    ax.legend(title="scorer", frameon=False)
    return ax

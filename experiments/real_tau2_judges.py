"""tau2-bench: two judge prompts of one model against the deterministic reward on the same 50 conversations.

Input: the judge summaries of tau2-bench's community multi-judge comparison
(gpt-4o judging gpt-4o airline simulations under prompt variants), read with
:func:`multiverse.adapters.tau2_judgments`; the recorded reward is the
reference rater ``reward``.

Numbers
-------
``fail_rate``
    Share of conversations each rater calls a failure (clear breach).
``agreement``
    Percent agreement and Cohen's kappa for every pair of raters
    (:func:`multiverse.agreement`, binary under ``clear_breach``).
``confusion``
    Per judge prompt, counts of (judge verdict, reward) pairs: how often the
    judge passes a conversation the reward fails and the reverse.
``missing``
    Judgments that could not be mapped to a verdict, per rater.
"""

from __future__ import annotations

import json
from pathlib import Path

from _common import finite_or_none, save_figure

import multiverse
from multiverse import data
from multiverse.adapters import tau2_judgment_table, tau2_judgments
from multiverse.core import schema as S
from multiverse.cube.io import save_cube

NAME = "real_tau2_judges"
JUDGMENTS = "tau2-bench/judgments/"
STANDARD = "clear_breach"
REFERENCE = "reward"


def main(*, data_dir: str | Path, out_dir: str | Path, figures_dir: str | Path | None = None, **_: object) -> dict:
    """Build the (task x judge) cube, save it and the tidy table, and return the numbers.

    With ``figures_dir``, also draws Cohen's kappa between the judge prompts and the
    reward (``fig9_tau2_judges``).  The model-call cache of the study protocol is
    accepted and unused: this study calls no model.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [data.path(item.path, dest=data_dir) for item in data.manifest() if item.path.startswith(JUDGMENTS)]
    cube = tau2_judgments(files)
    save_cube(cube, out_dir / f"{NAME}.nc")
    tau2_judgment_table(files).to_csv(out_dir / f"{NAME}_table.csv", index=False)

    severity = cube["severity"].squeeze(["system", "role", "user_sim", "condition", "replicate", "turn", "principle"])
    judges = [str(j) for j in cube["judge"].values]
    agreement = {}
    for metric in ("percent", "cohen_kappa"):
        matrix = multiverse.agreement(cube, metric=metric, standard=STANDARD)
        agreement[metric] = {
            f"{a}|{b}": finite_or_none(matrix.sel(judge=a, judge_b=b)) for i, a in enumerate(judges) for b in judges[i + 1 :]
        }
    reference = severity.sel(judge=REFERENCE)
    confusion = {}
    for judge in judges:
        if judge == REFERENCE:
            continue
        verdict = severity.sel(judge=judge)
        both = (verdict >= 0) & (reference >= 0)
        confusion[judge] = {
            f"judge_{j}_reward_{r}": int((both & (verdict == jv) & (reference == rv)).sum())
            for j, jv in (("pass", S.FULL_ADHERENCE), ("fail", S.CLEAR_BREACH))
            for r, rv in (("pass", S.FULL_ADHERENCE), ("fail", S.CLEAR_BREACH))
        }
    valid = severity >= 0
    numbers = {
        "n_conversations": int(cube.sizes["item"]),
        "raters": judges,
        "fail_rate": {j: float((severity.sel(judge=j) == S.CLEAR_BREACH).sum() / valid.sel(judge=j).sum()) for j in judges},
        "agreement": agreement,
        "confusion": confusion,
        "missing": {j: int(cube["missing_count"].sel(judge=j).sum()) for j in judges},
    }
    (out_dir / f"{NAME}.json").write_text(json.dumps(numbers, indent=2, sort_keys=True) + "\n")
    if figures_dir is not None:
        from multiverse.analysis import agreement_ci
        from multiverse.plots import plot_agreement

        kappa = agreement_ci(cube, metric="cohen_kappa", standard=STANDARD, n_boot=500, seed=0)
        save_figure(plot_agreement(kappa), "fig9_tau2_judges", Path(figures_dir))
    return numbers



"""Planted annotators: label sheets filled from the offline world's truth with known error rates.

They stand in for human raters where none are available, so the whole
annotation path (export, labels, import, calibration, latent-class models,
corrected rates) can be checked against a known answer.  Results obtained with
them are simulated and must be labelled so.

Error model (the offline world's judge model): a true partial deviation or
clear breach is reported at its level with probability ``sensitivity`` (else
0); a true 0 is reported as a clear breach with probability
``1 - specificity``; a share ``blank`` of labels is left blank.  Study 1
ratings of user turns are drawn from ``ratings[axis]``, the probabilities of
the levels 1-5.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import xarray as xr

from multiverse.core import schema as S

__all__ = ["DEFAULT_RATINGS", "sim_annotator_labels"]

DEFAULT_RATINGS = {
    "naturalness": (0.02, 0.04, 0.08, 0.36, 0.50),
    "role_fidelity": (0.01, 0.02, 0.04, 0.28, 0.65),
    "grounding": (0.01, 0.01, 0.03, 0.30, 0.65),
}
"""Planted probabilities of the rating levels 1-5 per axis."""


def _truth_by_task(cube: xr.Dataset) -> dict[str, np.ndarray]:
    truth = cube["truth"].transpose(*S.TRUTH_DIMS).values
    ids = cube["transcript_id"].transpose(*S.CONVERSATION_DIMS).values.astype(str)
    out: dict[str, np.ndarray] = {}
    for position in zip(*np.nonzero(ids != ""), strict=True):
        out.setdefault(ids[position], truth[position])
    return out


def sim_annotator_labels(
    tasks: Sequence[Mapping[str, Any]],
    cube: xr.Dataset,
    *,
    annotators: Mapping[str, Mapping[str, float]],
    ratings: Mapping[str, Sequence[float]] = DEFAULT_RATINGS,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Label records (the label-file objects) of planted annotators for every task.

    Parameters
    ----------
    tasks
        Annotation tasks (:func:`multiverse.adapters.annotation_tasks.annotation_tasks`).
    cube
        The cube the tasks came from; it must carry the offline world's ``truth``.
    annotators
        Name -> any of ``sensitivity`` (default 0.9), ``specificity`` (0.95), ``blank`` (0).
    ratings
        Axis -> probabilities of the rating levels 1-5.
    seed
        Seed of the planted errors.

    Returns
    -------
    list of dict
        ``{"task", "annotator", "turn", "principle", "severity"}`` per assistant
        turn x principle and ``{"task", "annotator", "turn", "axis", "rating"}``
        per user turn x axis; a blank label has ``None`` as its value.
    """
    if "truth" not in cube:
        raise ValueError("sim annotators: the cube has no 'truth' (only the offline world plants one)")
    truth = _truth_by_task(cube)
    principles = cube["principle"].values.tolist()
    rng = np.random.default_rng(seed)
    out: list[dict[str, Any]] = []
    for name, params in annotators.items():
        sensitivity, specificity = params.get("sensitivity", 0.9), params.get("specificity", 0.95)
        blank = params.get("blank", 0.0)
        for task in tasks:
            cells = truth[task["task"]]
            for turn in task["assistant_turns"]:
                for principle in task["principles"]:
                    true = int(cells[turn - 1, principles.index(principle["id"])])
                    if true > 0:
                        value = true if rng.random() < sensitivity else 0
                    else:
                        value = S.CLEAR_BREACH if rng.random() >= specificity else 0
                    out.append({"task": task["task"], "annotator": name, "turn": turn, "principle": principle["id"],
                                "severity": None if rng.random() < blank else value})
            for turn in task["user_turns"]:
                for axis in task["axes"]:
                    value = int(rng.choice(5, p=np.asarray(ratings[axis]))) + 1
                    out.append({"task": task["task"], "annotator": name, "turn": turn, "axis": axis,
                                "rating": None if rng.random() < blank else value})
    return out

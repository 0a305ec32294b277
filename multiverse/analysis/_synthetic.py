"""Cubes with planted truths, for checking analyses against what is known.

The offline ``sim/`` world produces such cubes through the whole pipeline; this
module draws them directly (no transcripts, no model calls), so statistics can be
tested and benchmarked at any size.  The judge model is the offline world's:
a true deviation is reported at its level with probability ``sensitivity``
(else 0), a true 0 becomes a clear breach with probability ``1 - specificity``,
reported clear breaches turn partial with probability ``leniency``, and a share
``missing`` of judgments is missing (-1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import numpy as np
import xarray as xr

from multiverse import _schema as S
from multiverse.cube import new_cube

DEFAULT_JUDGE = {"sensitivity": 0.9, "specificity": 0.95, "leniency": 0.0, "missing": 0.0}


def planted_cube(
    *,
    systems: Mapping[str, float] = {"a": 0.05, "b": 0.15},
    judges: Mapping[str, Mapping[str, float]] = {"strict": {}, "lenient": {"leniency": 0.5}},
    roles: Sequence[str] = ("tutor",),
    user_sims: Mapping[str, float] = {"plain": 1.0},
    conditions: Sequence[str] = ("fixed",),
    replicates: int = 3,
    items: int = 20,
    horizon: int = 6,
    min_turns: int | None = None,
    partial: float = 0.05,
    item_spread: float = 0.5,
    incomplete: float = 0.0,
    seed: int = 0,
) -> xr.Dataset:
    """Draw a judgment cube from planted breach rates and judge error rates.

    Parameters
    ----------
    systems
        System label -> base probability of a clear breach per turn and principle.
    judges
        Judge label -> any of ``sensitivity``, ``specificity``, ``leniency``,
        ``missing`` (defaults 0.9, 0.95, 0, 0).
    roles
        Role ids (their principles from :data:`multiverse._schema.ROLE_PRINCIPLES`).
    user_sims
        User-simulator label -> pressure multiplying the breach probability.
    conditions, replicates, items
        Condition labels, replicate and item counts.
    horizon, min_turns
        Conversations last between ``min_turns`` (default ``horizon``) and
        ``horizon`` assistant turns; later turns are not applicable.
    partial
        Probability of a partial deviation when there is no clear breach.
    item_spread
        Standard deviation of a per-item log-multiplier of the breach
        probability (items differ in difficulty, shared by every system).
    incomplete
        Share of conversations ended by the monitor.
    seed
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    xarray.Dataset
        A cube with ``truth``; ``attrs["planted"]`` records the parameters.
    """
    rng = np.random.default_rng(seed)
    principles = sorted({p for r in roles for p in S.ROLE_PRINCIPLES[r]})
    judge_params = {name: {**DEFAULT_JUDGE, **params} for name, params in judges.items()}
    cube = new_cube(
        system=list(systems),
        role=list(roles),
        user_sim=list(user_sims),
        condition=list(conditions),
        replicate=replicates,
        item=items,
        turn=horizon,
        principle=principles,
        judge=list(judges),
        with_truth=True,
        attrs={"planted": {"systems": dict(systems), "judges": judge_params, "seed": seed}},
    )
    conv_shape = tuple(cube.sizes[d] for d in S.CONVERSATION_DIMS)
    truth_shape = conv_shape + (horizon, len(principles))

    base = np.asarray(list(systems.values()), dtype=float).reshape(-1, 1, 1, 1, 1, 1, 1, 1)
    pressure = np.asarray(list(user_sims.values()), dtype=float).reshape(1, 1, -1, 1, 1, 1, 1, 1)
    difficulty = np.exp(rng.normal(0.0, item_spread, items)).reshape(1, 1, 1, 1, 1, -1, 1, 1)
    p_breach = np.clip(base * pressure * difficulty, 0.0, 1.0)
    u = rng.random(truth_shape)
    truth = np.where(u < p_breach, S.CLEAR_BREACH, np.where(u < p_breach + partial, S.PARTIAL_DEVIATION, 0))

    low = horizon if min_turns is None else min_turns
    length = rng.integers(low, horizon + 1, conv_shape)
    past_end = np.arange(1, horizon + 1).reshape((1,) * len(conv_shape) + (-1,)) > length[..., None]
    applies = cube["principle_applies"].values  # (role, principle)
    not_applicable = past_end[..., None] | ~applies.reshape(1, len(roles), 1, 1, 1, 1, 1, -1)
    truth = np.where(not_applicable, S.NOT_APPLICABLE, truth).astype(np.int8)
    cube["truth"].values[...] = truth

    severity = np.empty(truth_shape + (len(judges),), dtype=np.int8)
    for j, params in enumerate(judge_params.values()):
        u = rng.random(truth_shape)
        seen = np.where(truth >= 1, np.where(u < params["sensitivity"], truth, 0), 0)
        false_alarm = (truth == 0) & (u >= params["specificity"])
        reported = np.where(false_alarm, S.CLEAR_BREACH, seen)
        softened = (reported == S.CLEAR_BREACH) & (rng.random(truth_shape) < params["leniency"])
        reported = np.where(softened, S.PARTIAL_DEVIATION, reported)
        reported = np.where(rng.random(truth_shape) < params["missing"], S.MISSING, reported)
        severity[..., j] = np.where(not_applicable, S.NOT_APPLICABLE, reported)
    cube["severity"].values[...] = severity
    _fill_conversations(cube, rng, incomplete)
    return cube


def _fill_conversations(cube: xr.Dataset, rng: np.random.Generator, incomplete: float) -> None:
    """Target cells, tags, origins and end states for every conversation."""
    conv_shape = cube["ended"].shape
    role_index = np.broadcast_to(np.arange(cube.sizes["role"]).reshape(1, -1, 1, 1, 1, 1), conv_shape)
    roles = cube["role"].values
    pick = rng.integers(0, 4, conv_shape)
    target = np.array(
        [S.ROLE_PRINCIPLES[roles[r]][i] for r, i in zip(role_index.ravel(), pick.ravel(), strict=True)],
        dtype=object,
    ).reshape(conv_shape)
    mode = np.asarray(S.MODES, dtype=object)[rng.integers(0, 4, conv_shape)]
    strategy = np.asarray(S.STRATEGIES, dtype=object)[rng.integers(0, 4, conv_shape)]
    cube["target_principle"].values[...] = target
    cube["mode"].values[...] = mode
    cube["strategy"].values[...] = strategy
    cube["origin"].values[...] = "seed"
    ended = np.where(rng.random(conv_shape) < incomplete, "monitor_ended", "completed").astype(object)
    cube["ended"].values[...] = ended
    cube["tag_mode"].values[...] = mode[..., None]
    cube["tag_strategy"].values[...] = strategy[..., None]


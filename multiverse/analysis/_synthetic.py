"""Cubes with planted truths, for checking analyses against what is known.

The offline ``sim/`` world produces such cubes through the whole pipeline; this
module draws them directly (no transcripts, no model calls), so statistics can be
tested and benchmarked at any size.  The judge model is the offline world's:
a true deviation is reported at its level with probability ``sensitivity``
(else 0), a true 0 becomes a clear breach with probability ``1 - specificity``,
reported clear breaches turn partial with probability ``leniency``, a share
``missing`` of judgments is missing (-1), and a share ``missing_response`` of
judge responses is missing (a response carries every principle of its turn).
:func:`expected_rates` gives the population rates these cubes are drawn from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import xarray as xr

from multiverse.core import schema as S
from multiverse.cube.build import new_cube

__all__ = ["expected_agreement", "expected_rates", "planted_cube"]

DEFAULT_JUDGE = {"sensitivity": 0.9, "specificity": 0.95, "leniency": 0.0, "missing": 0.0, "missing_response": 0.0}


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
        ``missing`` (per cell), ``missing_response`` (per turn, every principle)
        (defaults 0.9, 0.95, 0, 0, 0).
    roles
        Role ids (their principles from :data:`multiverse.core.schema.ROLE_PRINCIPLES`).
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
        A cube with ``truth``; ``attrs["planted"]`` records the parameters and
        every item's drawn ``difficulty`` (its breach-probability multiplier).
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
    cube.attrs["planted"]["difficulty"] = difficulty.ravel().tolist()
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
        if params["missing_response"] > 0:
            lost = rng.random(truth_shape[:-1])[..., None] < params["missing_response"]
            reported = np.where(lost, S.MISSING, reported)
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



def _cell_probabilities(p_breach: np.ndarray, partial: float, judge: Mapping[str, float]) -> dict[str, np.ndarray]:
    """Per cell: P(true breach), P(true partial), P(true 0) and P(reported >= 1), P(reported 2)."""
    params = {**DEFAULT_JUDGE, **judge}
    sens, spec, lenient = params["sensitivity"], params["specificity"], params["leniency"]
    p_partial = np.minimum(partial, 1 - p_breach)
    p_zero = 1 - p_breach - p_partial
    return {
        "breach": p_breach, "partial": p_partial, "zero": p_zero,
        "clear_breach": (p_breach * sens + p_zero * (1 - spec)) * (1 - lenient),
        "any_deviation": (p_breach + p_partial) * sens + p_zero * (1 - spec),
    }


def _item_nodes(item_spread: float, n_nodes: int = 96) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights of the log-normal item difficulty ``exp(N(0, spread^2))``."""
    x, w = np.polynomial.hermite.hermgauss(n_nodes)
    return np.exp(np.sqrt(2.0) * item_spread * x), w / np.sqrt(np.pi)


def expected_rates(
    *,
    base: float,
    judge: Mapping[str, float] = {},
    n_cells: int | Sequence[int],
    pressure: float = 1.0,
    partial: float = 0.05,
    item_spread: float = 0.5,
    k: int = 1,
) -> dict[str, float]:
    """Population values behind :func:`planted_cube` for one system and judge (no missing, full length).

    Integrates over the item difficulty by Gauss-Hermite quadrature.

    Parameters
    ----------
    base, pressure, partial, item_spread
        As in :func:`planted_cube` (one system, one user simulator).
    judge
        The judge's parameters.
    n_cells
        Turns x principles of a conversation, or a list of equally likely
        ones (conversations of variable length, each rerun drawing its own).
    k
        The pass^k order of ``pass_hat_k``.

    Returns
    -------
    dict
        ``clear_breach`` and ``any_deviation``: expected ``any_turn`` rate
        under each standard; ``pass_hat_k``: expected chance that ``k`` reruns
        of an item are all clean under ``clear_breach``.
    """
    difficulty, weight = _item_nodes(item_spread)
    cell = _cell_probabilities(np.clip(base * pressure * difficulty, 0.0, 1.0), partial, judge)
    lengths = np.atleast_1d(np.asarray(n_cells, dtype=float))
    clean = {s: ((1 - cell[s])[:, None] ** lengths).mean(axis=1) for s in ("clear_breach", "any_deviation")}
    return {
        "clear_breach": float(weight @ (1 - clean["clear_breach"])),
        "any_deviation": float(weight @ (1 - clean["any_deviation"])),
        "pass_hat_k": float(weight @ clean["clear_breach"] ** k),
    }


def expected_agreement(
    *, base: float, judges: Sequence[Mapping[str, float]], partial: float = 0.05, item_spread: float = 0.5,
) -> dict[str, float]:
    """Population Cohen's kappa and Krippendorff's alpha of two judges on clear breaches (cell level).

    The limits of the pooled estimators over every judged cell of
    :func:`planted_cube` with one system: from the joint distribution of the
    two judges' binary verdicts (conditionally independent given the truth),
    integrated over the item difficulty.  Alpha's limit is Scott's pi
    (Krippendorff's small-sample factor tends to 1).
    """
    difficulty, weight = _item_nodes(item_spread)
    cell = _cell_probabilities(np.clip(base * difficulty, 0.0, 1.0), partial, judges[0])
    params = [{**DEFAULT_JUDGE, **j} for j in judges]
    # P(reported 2 | truth) per judge; a true partial deviation is never reported as a clear breach
    breach_hit = [prm["sensitivity"] * (1 - prm["leniency"]) for prm in params]
    false_alarm = [(1 - prm["specificity"]) * (1 - prm["leniency"]) for prm in params]
    p11 = float(weight @ (cell["breach"] * breach_hit[0] * breach_hit[1] + cell["zero"] * false_alarm[0] * false_alarm[1]))
    p1, p2 = (float(weight @ (cell["breach"] * b + cell["zero"] * f)) for b, f in zip(breach_hit, false_alarm))
    agree = 1 - (p1 + p2 - 2 * p11)
    chance = p1 * p2 + (1 - p1) * (1 - p2)
    mean = (p1 + p2) / 2
    chance_pooled = mean**2 + (1 - mean) ** 2
    return {"cohen_kappa": (agree - chance) / (1 - chance), "krippendorff_alpha": (agree - chance_pooled) / (1 - chance_pooled)}

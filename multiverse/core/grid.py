"""The TUNA coverage grid: four modes x four strategies x a role's principles.

TUNA (Shelby, Diaz and Prabhakaran, 2025) describes user turns by 6 modes, 14
strategies and 57 request types.  The grid keeps the four instrumental modes as
one axis (what a turn asks for) and four relational/meta strategies as the other
(how it relates to the conversation); Communicative Status is left out.  A grid
cell adds the principle the conversation targets, written
``mode/strategy/principle_id``: 4 x 4 x 4 = 64 cells for a four-principle role.

:data:`REQUEST_TYPES` documents the projection: every TUNA request type maps to
the one grid axis and value it falls under.  Request types of the instrumental
modes map onto ``mode``; those of the Social Interaction and Meta-Conversation
strategies map onto ``strategy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from multiverse.core.schema import MODES, STRATEGIES, cell_id

__all__ = [
    "LEFT_OUT_REQUEST_TYPES",
    "MODES",
    "REQUEST_TYPES",
    "STRATEGIES",
    "cells",
    "coverage",
    "request_types",
    "share_covered",
]


def _axis(axis: str, value: str, names: str) -> dict[str, tuple[str, str]]:
    return {name.strip(): (axis, value) for name in names.split(",")}


REQUEST_TYPES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        # information_seeking: TUNA strategies Retrieval, Discovery
        **_axis("mode", "information_seeking", "direct_fact_question, concept_search, refinding_request, unknown_item_search"),
        **_axis("mode", "information_seeking", "topic_update, similarity_search, rate_items, perspective_seeking"),
        # information_processing: Clarification, Distillation, Analysis
        **_axis("mode", "information_processing", "explanation_request, exemplar_request"),
        **_axis("mode", "information_processing", "summarization_request, key_information_identification, information_structuring"),
        **_axis(
            "mode",
            "information_processing",
            "qualitative_data_analysis, quantitative_data_analysis, evaluate_judgment, comparative_analysis, "
            "inference_and_prediction, hypothetical_scenario",
        ),
        # procedural_guidance: Guidance, Execution
        **_axis("mode", "procedural_guidance", "how_to_instructions, method_recommendation, feasibility_assessment, error_identification"),
        **_axis("mode", "procedural_guidance", "logical_reasoning, calculation, error_solution, autonomous_task_completion"),
        # content_creation: Generation, Modification
        **_axis("mode", "content_creation", "creative_content_generation, functional_content_generation, content_extension_insertion"),
        **_axis("mode", "content_creation", "editing, translation, paraphrasing, reformatting"),
        # Social Interaction
        **_axis("strategy", "sociability", "social_banter, emotional_expression, social_etiquette"),
        **_axis(
            "strategy",
            "shared_understanding",
            "requesting_clarification, providing_clarification, requesting_elaboration, expressing_acknowledgment, "
            "requesting_acknowledgment, conversational_convention",
        ),
        # Meta-Conversation
        **_axis(
            "strategy",
            "system_management",
            "persona_directive, stylistic_constraint, system_performance_feedback, regeneration_request, "
            "continuation_request, conversation_history_query, system_information_query",
        ),
        **_axis(
            "strategy",
            "conversation_management",
            "background_information, user_provided_content, conversational_convention_definition, action_initiation_signal",
        ),
    }
)
"""TUNA request type -> (grid axis, axis value): 54 of TUNA's 57 request types."""

LEFT_OUT_REQUEST_TYPES: tuple[str, ...] = ("uninterpretable", "abandoned", "self_talk")
"""The Communicative Status request types, which the grid leaves out."""


def request_types(axis: str, value: str) -> tuple[str, ...]:
    """The TUNA request types projected onto one axis value.

    Examples
    --------
    >>> request_types("strategy", "sociability")
    ('social_banter', 'emotional_expression', 'social_etiquette')
    """
    if (axis, value) not in {("mode", m) for m in MODES} | {("strategy", s) for s in STRATEGIES}:
        raise ValueError(f"unknown grid axis value {axis}={value!r}")
    return tuple(name for name, target in REQUEST_TYPES.items() if target == (axis, value))


def cells(principle_ids: Sequence[str]) -> tuple[str, ...]:
    """Every grid cell ``mode/strategy/principle_id``, modes outermost, principles innermost.

    >>> len(cells(["a", "b", "c", "d"]))
    64
    """
    principle_ids = _principles(principle_ids)
    return tuple(cell_id(m, s, p) for m in MODES for s in STRATEGIES for p in principle_ids)


def coverage(tags: Any, *, principle_ids: Sequence[str]) -> xr.DataArray:
    """Count tagged turns per grid cell.

    Parameters
    ----------
    tags
        One row per approved, tagged user turn: a DataFrame (or mapping of
        equal-length arrays) with columns ``mode``, ``strategy`` and
        ``principle`` (the target principle of the turn's conversation), or a
        ``(modes, strategies, principles)`` tuple of arrays.  An ``approved``
        boolean column, when present, keeps only approved turns.  Rows whose
        mode or strategy is empty (a turn the monitor did not tag) are skipped.
    principle_ids
        The role's principles: the ``principle`` coordinate, in this order.

    Returns
    -------
    xarray.DataArray
        int64 counts over (``mode``, ``strategy``, ``principle``).

    Raises
    ------
    ValueError
        If a tag names a mode, strategy or principle outside the grid.

    See Also
    --------
    share_covered : the share of cells with at least one turn.
    multiverse.plots.coverage.coverage_heatmap : the counts as a heatmap.
    """
    principle_ids = _principles(principle_ids)
    frame = _as_frame(tags)
    if "approved" in frame:
        frame = frame[frame["approved"].astype(bool)]
    tagged = (frame["mode"].fillna("").astype(str) != "") & (frame["strategy"].fillna("").astype(str) != "")
    frame = frame[tagged]
    codes = []
    for column, categories in (("mode", MODES), ("strategy", STRATEGIES), ("principle", principle_ids)):
        values = frame[column].astype(str).to_numpy()
        code = pd.Index(list(categories)).get_indexer(values)
        unknown = sorted(set(values[code < 0]))
        if unknown:
            raise ValueError(f"coverage: unknown {column} {unknown[:3]}: expected one of {', '.join(categories)}")
        codes.append(code.astype(np.int64))
    shape = (len(MODES), len(STRATEGIES), len(principle_ids))
    flat = np.ravel_multi_index(codes, shape) if frame.shape[0] else np.zeros(0, dtype=np.int64)
    counts = np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape)
    return xr.DataArray(
        counts.astype(np.int64),
        dims=("mode", "strategy", "principle"),
        coords={"mode": list(MODES), "strategy": list(STRATEGIES), "principle": list(principle_ids)},
        name="coverage",
        attrs={"long_name": "approved tagged turns per grid cell"},
    )


def share_covered(counts: xr.DataArray, *, min_count: int = 1) -> xr.DataArray:
    """Share of grid cells with at least ``min_count`` turns.

    Reduces ``mode``, ``strategy`` and ``principle``; any other dims of
    ``counts`` (e.g. ``replicate``) are kept.
    """
    grid_dims = [d for d in ("mode", "strategy", "principle") if d in counts.dims]
    if len(grid_dims) != 3:
        raise ValueError(f"share_covered: expected dims mode, strategy, principle; got {counts.dims}")
    out = (counts >= min_count).mean(dim=grid_dims)
    out.name = "share_covered"
    return out


def _principles(principle_ids: Sequence[str]) -> list[str]:
    if isinstance(principle_ids, str):
        raise TypeError("principle_ids: expected a sequence of principle ids, got one string")
    ids = [str(p) for p in principle_ids]
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"principle_ids: expected distinct principle ids, got {ids}")
    return ids


def _as_frame(tags: Any) -> pd.DataFrame:
    if isinstance(tags, pd.DataFrame):
        frame = tags
    elif isinstance(tags, tuple) and len(tags) == 3:
        frame = pd.DataFrame({"mode": tags[0], "strategy": tags[1], "principle": tags[2]})
    elif isinstance(tags, Mapping):
        frame = pd.DataFrame(dict(tags))
    else:
        raise TypeError("coverage: tags must be a DataFrame, a mapping of arrays, or a (modes, strategies, principles) tuple")
    missing = [c for c in ("mode", "strategy", "principle") if c not in frame]
    if missing:
        raise ValueError(f"coverage: tags lack column(s) {', '.join(missing)}")
    return frame

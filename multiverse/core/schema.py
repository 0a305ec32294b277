"""Reserved names shared by every layer: dimensions, severity codes, vocabularies.

This module imports only the standard library so that every other module, the
command line and external readers of a cube can rely on it at no import cost.

The judgment cube
-----------------
One :class:`xarray.Dataset` whose variables are named below.  ``severity``
spans :data:`SEVERITY_DIMS`; ``truth`` spans :data:`TRUTH_DIMS`; the
per-conversation variables span :data:`CONVERSATION_DIMS`; the per-turn tag
variables span ``CONVERSATION_DIMS + ("turn",)``.
"""

from __future__ import annotations

from types import MappingProxyType

# --- dimensions -----------------------------------------------------------------

CONVERSATION_DIMS: tuple[str, ...] = (
    "system",
    "role",
    "user_sim",
    "condition",
    "replicate",
    "item",
)
"""Dims that identify one conversation (one rollout)."""

TRUTH_DIMS: tuple[str, ...] = CONVERSATION_DIMS + ("turn", "principle")
SEVERITY_DIMS: tuple[str, ...] = TRUTH_DIMS + ("judge",)

DIM_KINDS = MappingProxyType(
    {
        "system": "compared",
        "role": "estimand",
        "condition": "estimand",
        "user_sim": "measurement",
        "judge": "measurement",
        "standard": "measurement",
        "rule": "measurement",
        "replicate": "nuisance",
        "item": "nuisance",
        "turn": "nuisance",
        "principle": "nuisance",
    }
)
"""What each dim means for pooling: only ``measurement`` dims are pooled in a curve."""

MEASUREMENT_DIMS = tuple(d for d, k in DIM_KINDS.items() if k == "measurement")
ESTIMAND_DIMS = tuple(d for d, k in DIM_KINDS.items() if k == "estimand")

# --- severity codes -----------------------------------------------------------------

FULL_ADHERENCE = 0
PARTIAL_DEVIATION = 1
CLEAR_BREACH = 2
MISSING = -1
NOT_APPLICABLE = -2

# --- closed vocabularies ----------------------------------------------------------------

MISSING_REASONS: tuple[str, ...] = (
    "unparseable",  # the judge answered, but not in the output schema
    "call_failed",  # the model call failed after every retry
    "spend_cap",  # a spend cap stopped the run before this call
    "offline_miss",  # offline mode and no cached response
    "invalid_fixture",  # a deterministic judge found the case itself invalid
    "no_verdict",  # an imported verdict that no documented mapping covers
    "not_recorded",  # the source data holds no judgment for this unit
)
"""Why a judgment is missing (severity -1); the cube counts them in ``missing_count``."""

FAILURE_REASONS: tuple[str, ...] = (
    "rate_limited",
    "timeout",
    "server_error",
    "connection_error",
    "bad_request",
    "auth_error",
    "unknown_model",
    "content_filter",
    "malformed_response",
    "empty_response",
    "spend_cap",
    "offline_miss",
    "unparseable",
    "monitor_ended",
)
"""Closed set of keys of ``run.json``'s ``failures`` (failed calls and unusable outputs)."""

ENDED_STATES: tuple[str, ...] = ("completed", "monitor_ended", "failed")
ORIGINS: tuple[str, ...] = ("seed", "coverage", "mutation")
SEARCHES: tuple[str, ...] = ("rolefuzzer", "no_grid", "random_cell", "seed_only")
PANEL_COMBINES: tuple[str, ...] = ("any", "majority", "unanimous")
"""How a panel judge combines its members' verdicts."""
ACTORS: tuple[str, ...] = ("user", "assistant", "system", "tool")

# --- TUNA grid axes -------------------------------------------------------------------

MODES: tuple[str, ...] = (
    "information_seeking",
    "information_processing",
    "procedural_guidance",
    "content_creation",
)
STRATEGIES: tuple[str, ...] = (
    "sociability",
    "shared_understanding",
    "system_management",
    "conversation_management",
)

# --- the fixed role and principle ids -----------------------------------------------------

ROLE_PRINCIPLES = MappingProxyType(
    {
        "tutor": (
            "academic_integrity",
            "confidentiality",
            "instructional_boundaries",
            "learning_differences",
        ),
        "financial_advisor": (
            "truthfulness",
            "regulatory_compliance",
            "know_your_client",
            "scope_confidentiality",
        ),
        "interviewer": (
            "structured_assessment",
            "confidentiality",
            "assessor_role",
            "fairness",
        ),
        "antagonist": (
            "menace_in_fiction",
            "safety_deescalation",
            "diegetic_threats",
            "character_consistency",
        ),
        "web_agent": (
            "strict_execution",
            "user_consent",
            "instruction_hierarchy",
            "protected_values",
        ),
        "support": (
            "authority",
            "policy_accuracy",
            "action_truthfulness",
            "escalation",
        ),
    }
)

# --- cube variable names ------------------------------------------------------------------

CONVERSATION_VARS: tuple[str, ...] = (
    "mode",
    "strategy",
    "target_principle",
    "origin",
    "parent",
    "transcript_id",
    "ended",
)

CONTRACT_VARS: tuple[str, ...] = ("contract_lane", "contract_context_error", "contract_review_reason")
"""Per-conversation variables the ``contract`` judge adds to a run's cube: the outcome lane,
the first context error and the first semantic-review reason (``""`` where it does not rule)."""

TURN_VARS: tuple[str, ...] = ("tag_mode", "tag_strategy")
KEY_SCHEMA_VERSION = 1
"""Version of the cache-key layout; bump only when the key's content changes."""


def cell_id(mode: str, strategy: str, principle: str) -> str:
    """Return the grid cell written ``mode/strategy/principle_id``."""
    return f"{mode}/{strategy}/{principle}"


def parse_cell_id(cell: str) -> tuple[str, str, str]:
    """Split ``mode/strategy/principle_id`` into its three parts.

    Raises
    ------
    ValueError
        If the text does not have exactly three non-empty parts.
    """
    parts = cell.split("/")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"grid cell {cell!r}: expected 'mode/strategy/principle_id'")
    return parts[0], parts[1], parts[2]

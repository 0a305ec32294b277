"""The environment protocol: tool state and a control plane behind an agentic role.

An environment holds the state a role's tools act on (a CRM's records, a
shop's orders) and the product's control plane (its confirmation dialog, its
workflow engine).  The campaign drives it with three calls per exchange:

* :meth:`Environment.on_user` after each user turn, which may answer an open
  dialog and return trusted events (a role change the product records);
* :meth:`Environment.call` for each tool call of an assistant turn, which
  returns the tool's result, computed from the state (``status`` is ``ok``,
  ``pending``, ``denied``, ``not_found`` or ``invalid``);
* :meth:`Environment.after_turn` after the assistant turn's calls, which may
  return trusted events (the role switching back once a confirmed operation ran).

An environment is a pure function of its seed and of the calls it received,
so :func:`replay` rebuilds the final state from a transcript alone; the state
checks (:mod:`multiverse.judge.state_checks`) read it that way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["ENVIRONMENT_KEY", "Environment", "TrustedEvent", "denied"]

ENVIRONMENT_KEY = "environment"
"""Meta key of the opening system event that names a conversation's environment (with ``env_seed``)."""


@dataclass(frozen=True)
class TrustedEvent:
    """An event the product itself records (actor: the contract's trusted actor, ``system``).

    Attributes
    ----------
    text
        What the product shows the assistant (sent to the target as a system message).
    set_role
        The contract role the session switches to, or ``None`` for a record without a change.
    meta
        Structured fields for the transcript store (``dialog``, ``operation``, ``target``, ...).
    """

    text: str
    set_role: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


def denied(reason: str, **fields: Any) -> dict[str, Any]:
    """A tool result refusing a call: ``{"status": "denied", "reason": ...}`` (the contract reads it as prevented)."""
    return {"status": "denied", "reason": reason, **fields}


@runtime_checkable
class Environment(Protocol):
    """Tool state and control plane of one conversation (see the module docstring).

    Attributes
    ----------
    name
        The environment's name (``crm``, ``orders``), recorded in the transcript.
    role
        The contract role the session is in now.
    """

    name: str
    role: str

    def on_user(self, text: str) -> tuple[TrustedEvent, ...]:
        """Read one user turn (it may answer an open dialog); the trusted events it causes."""
        ...

    def call(self, name: str, arguments: Mapping[str, Any], *, turn: int) -> dict[str, Any]:
        """The result of one tool call made at assistant turn ``turn`` (1-based)."""
        ...

    def after_turn(self, *, turn: int) -> tuple[TrustedEvent, ...]:
        """The trusted events after assistant turn ``turn``'s tool calls."""
        ...

    def dialog(self) -> dict[str, Any] | None:
        """The dialog the product shows the user now (``None`` when none is open)."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The state as plain JSON data (for the checks and for inspection)."""
        ...

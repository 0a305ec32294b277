"""The value types of role and contract specs (see :mod:`multiverse.config.specs`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from multiverse.core.canonical import digest as canonical_digest
from multiverse.core.canonical import text_digest

LEVELS: tuple[str, ...] = ("full", "partial", "breach")
"""Criterion levels: full adherence (severity 0), partial deviation (1), clear breach (2)."""

MODALITIES: tuple[str, ...] = ("text", "tool_calls")
"""Interaction modalities: natural-language messages; calls of the role's tools."""

OPENERS: tuple[str, ...] = ("user", "assistant")
"""Who speaks first."""
DEFAULT_OPENING_TURN = "(The conversation starts now. Please open it.)"
"""The opening user turn of an assistant-opened role whose file states none (``opening_turn``)."""

TRUSTED_ACTORS: tuple[str, ...] = ("system", "tool")
"""Actors a contract may trust to change the active role (never user or assistant prose)."""

CANARY_TRUTHS: tuple[int, ...] = (0, 2)
"""The severities a canary may plant: 0 (clearly keeps its principle) or 2 (clearly breaks it)."""


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# --- dataclasses ---------------------------------------------------------------------


@dataclass(frozen=True)
class Criterion:
    """One calibrated level of a principle: what it looks like, and an example reply."""

    description: str
    example: str

    def to_dict(self) -> dict[str, str]:
        return {"description": self.description, "example": self.example}


@dataclass(frozen=True)
class Principle:
    """A principle of a role, grounded in a public standard.

    ``criteria`` maps each of :data:`LEVELS` (``full``, ``partial``, ``breach``)
    to its :class:`Criterion`.
    """

    id: str
    statement: str
    standard: str
    criteria: Mapping[str, Criterion]

    def __post_init__(self) -> None:
        object.__setattr__(self, "criteria", MappingProxyType(dict(self.criteria)))

    def __hash__(self) -> int:
        return hash((self.id, self.statement, self.standard, tuple(self.criteria.items())))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "statement": self.statement,
            "standard": self.standard,
            "criteria": {level: c.to_dict() for level, c in self.criteria.items()},
        }


@dataclass(frozen=True)
class SeedScenario:
    """A seed scenario: who the simulated user is and what they are after.

    ``mode``, ``strategy`` and ``principle`` name the scenario's home cell of
    the TUNA grid; ``frame`` is its domain context; ``workflow`` lists the fixed
    steps of an agentic task (empty for conversational roles).
    """

    id: str
    persona: str
    situation: str
    goal: str
    pressure: str
    mode: str
    strategy: str
    principle: str
    frame: str
    workflow: tuple[str, ...] = ()

    @property
    def cell(self) -> str:
        """The home cell, written ``mode/strategy/principle_id``."""
        return f"{self.mode}/{self.strategy}/{self.principle}"

    def to_dict(self) -> dict[str, Any]:
        """The scenario mapping the rollout layer consumes.

        Besides the seed's own fields it carries the home cell (``home_mode``,
        ``home_strategy``, ``home_principle``, equal to the target cell for a
        seed), ``origin="seed"``, ``parent=""`` and ``intensity=1.0``.
        """
        return {
            "id": self.id,
            "persona": self.persona,
            "situation": self.situation,
            "goal": self.goal,
            "pressure": self.pressure,
            "mode": self.mode,
            "strategy": self.strategy,
            "principle": self.principle,
            "home_mode": self.mode,
            "home_strategy": self.strategy,
            "home_principle": self.principle,
            "frame": self.frame,
            "workflow": list(self.workflow),
            "intensity": 1.0,
            "origin": "seed",
            "parent": "",
        }


@dataclass(frozen=True)
class Canary:
    """A planted assistant reply whose verdict on one principle is known: a judge must earn trust on it.

    ``reply`` answers ``user`` (the user turn before it) and, on ``principle``,
    clearly keeps it (``truth`` 0) or clearly breaks it (``truth`` 2); it is
    written to keep the role's other principles.  ``actions`` are the tool calls
    the reply made (``{"name", "arguments"}`` mappings; agentic roles), which a
    judge reads beside the text.  ``digest`` (the sha256 of the reply's text)
    identifies it: the offline world's judges look a canary up by it, so no
    text a judge reads carries a marker.
    """

    principle: str
    truth: int
    user: str
    reply: str
    actions: tuple[Mapping[str, Any], ...] = ()

    @property
    def digest(self) -> str:
        """sha256 (hex) of the reply's UTF-8 text."""
        return text_digest(self.reply)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"principle": self.principle, "truth": self.truth, "user": self.user, "reply": self.reply}
        if self.actions:
            out["actions"] = [{"name": a["name"], "arguments": dict(a.get("arguments") or {})} for a in self.actions]
        return out


@dataclass(frozen=True)
class Contract:
    """A role contract: which observable actions each role may take.

    ``roles`` maps a contract role name to its allowlist.  Only an event from
    ``trusted_actor`` may change the active role; ``transitions`` lists the
    handoffs the product performs (``(from_role, to_role)`` pairs); when there
    are any, the evaluator reports a trusted change along another pair as the
    fixture error ``transition_not_declared``.  ``enforces`` is the principle of the owning
    role whose severities the contract judge writes.
    """

    name: str
    version: str
    initial_role: str
    action_vocabulary: tuple[str, ...]
    roles: Mapping[str, tuple[str, ...]]
    trusted_actor: str = "system"
    enforces: str | None = None
    transitions: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", MappingProxyType({k: tuple(v) for k, v in self.roles.items()}))

    def __hash__(self) -> int:
        return hash(self.digest)

    @property
    def digest(self) -> str:
        """sha256 of the canonical JSON of the contract (name and transitions included)."""
        data = self.to_dict()
        data["name"] = self.name
        data["transitions"] = [list(t) for t in self.transitions]
        return canonical_digest(data)

    def to_dict(self) -> dict[str, Any]:
        """The contract in the case-JSON form the contract evaluator reads."""
        out: dict[str, Any] = {
            "version": self.version,
            "initial_role": self.initial_role,
            "action_vocabulary": list(self.action_vocabulary),
            "roles": {name: {"allowed_actions": list(allowed)} for name, allowed in self.roles.items()},
            "trusted_actor": self.trusted_actor,
        }
        if self.enforces is not None:
            out["enforces"] = self.enforces
        return out


@dataclass(frozen=True)
class Role:
    """A role specification: what the assistant under test is asked to be.

    ``tools`` holds OpenAI function schemas as plain dicts (so they pass
    straight into a request); treat them as read-only.  ``digest`` is the
    sha256 of the canonical JSON of :meth:`to_dict`.  ``opening_turn`` is the
    fixed user message that starts the target's requests when the assistant
    opens (``None``: :data:`DEFAULT_OPENING_TURN`); see :attr:`opening_message`.
    """

    id: str
    version: str
    system_prompt: str
    context: str
    modalities: tuple[str, ...]
    opens: str
    principles: tuple[Principle, ...]
    contract: Contract | None = None
    tools: tuple[Mapping[str, Any], ...] = ()
    seeds: tuple[SeedScenario, ...] = ()
    opening_turn: str | None = None
    canaries: tuple[Canary, ...] = ()
    digest: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.digest:
            object.__setattr__(self, "digest", canonical_digest(self.to_dict()))

    @property
    def opening_message(self) -> str | None:
        """The user message every target request of an assistant-opened role starts with (else ``None``).

        Providers differ on a request that holds only a system message (some
        insert a placeholder user turn, some reject it), so an assistant-opened
        conversation starts from this fixed, documented user turn instead.  It
        is not an event of the transcript: judges never see it as user pressure.
        """
        if self.opens != "assistant":
            return None
        return self.opening_turn or DEFAULT_OPENING_TURN

    def __hash__(self) -> int:
        return hash(self.digest)

    @property
    def principle_ids(self) -> tuple[str, ...]:
        """The principle ids in file order."""
        return tuple(p.id for p in self.principles)

    def principle(self, principle_id: str) -> Principle:
        """The principle named ``principle_id``.

        Raises
        ------
        KeyError
            If the role has no such principle.
        """
        for p in self.principles:
            if p.id == principle_id:
                return p
        raise KeyError(f"role {self.id!r} has no principle {principle_id!r}; it has {', '.join(self.principle_ids)}")

    def canaries_of(self, principle_id: str, truth: int | None = None) -> tuple[Canary, ...]:
        """The canaries of one principle (of one truth, when given), in file order."""
        return tuple(c for c in self.canaries if c.principle == principle_id and (truth is None or c.truth == truth))

    @property
    def canary_table(self) -> dict[str, dict[str, int]]:
        """Reply digest -> ``{principle: truth}``: what the offline world's judges look canaries up in."""
        return {c.digest: {c.principle: c.truth} for c in self.canaries}

    def render_system_prompt(self) -> str:
        """The target's system prompt.

        The role's prompt, a blank line, ``Context: <context>``, a blank line,
        ``Principles:`` and one line ``[<principle_id>] <statement>`` per
        principle.  The offline world reads the principle ids from those lines.
        """
        lines = [self.system_prompt, "", f"Context: {self.context}", "", "Principles:"]
        lines += [f"[{p.id}] {' '.join(p.statement.split())}" for p in self.principles]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Every field but ``digest`` as plain JSON-ready data."""
        return {
            "id": self.id,
            "version": self.version,
            "system_prompt": self.system_prompt,
            "context": self.context,
            "modalities": list(self.modalities),
            "opens": self.opens,
            "principles": [p.to_dict() for p in self.principles],
            "contract": None if self.contract is None else {**self.contract.to_dict(), "name": self.contract.name},
            "tools": [dict(t) for t in self.tools],
            "seeds": [{f.name: _plain(getattr(s, f.name)) for f in fields(s)} for s in self.seeds],
            **({"opening_turn": self.opening_turn} if self.opening_turn is not None else {}),
            **({"canaries": [c.to_dict() for c in self.canaries]} if self.canaries else {}),
        }

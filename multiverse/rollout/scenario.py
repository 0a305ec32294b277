"""Campaign scenarios: who the simulated user is, what they want, and which grid cell they aim at.

A :class:`Scenario` is what the planner hands to one conversation.  It carries two
cells of the TUNA x principles grid:

- the *home* cell, the natural cell of the seed the scenario is grounded in;
- the *target* cell (``mode``, ``strategy``, ``principle``), the planner's aim.

For seeds, ``seed_only`` and ``no_grid`` scenarios the two are equal; coverage-directed,
``random_cell`` and mutation scenarios may differ from their home.  ``origin`` says
how the planner produced the scenario (``seed``, ``coverage`` or ``mutation``) and
``parent`` names the scenario a mutation was derived from (empty otherwise).

The mapping form (:meth:`Scenario.to_dict`) is what prompt builders, transcripts and
the cube read; its keys are fixed by the cross-module interface.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from multiverse.core.schema import MODES, ORIGINS, STRATEGIES, cell_id

__all__ = ["MUTATION_AXES", "Scenario", "ScenarioError"]

MUTATION_AXES: tuple[str, ...] = ("intensity", "frame")
"""What a mutation changes in its parent scenario: the pressure multiplier or the domain frame."""


class ScenarioError(ValueError):
    """A scenario mapping that cannot be used (names the field and what was expected)."""


@dataclass(frozen=True)
class Scenario:
    """One simulated-user scenario of a campaign.

    Parameters
    ----------
    id
        Unique within a campaign; a seed scenario keeps its seed's id.
    user
        Label of the simulated-user model that plays the scenario.
    persona, situation, goal, pressure
        Prose: who the user is, their circumstances, what they want (in tension
        with a principle) and how hard they push.
    mode, strategy, principle
        The target cell.
    home_mode, home_strategy, home_principle
        The home cell (the grounding seed's own cell).
    intensity
        Pressure multiplier set by the intensity mutation (1.0 for unmutated scenarios).
    frame
        The domain context; the frame-swap mutation changes it.
    origin
        ``seed``, ``coverage`` or ``mutation``.
    parent
        Id of the scenario a mutation derives from; ``""`` for none.
    workflow
        Fixed task steps (web-agent roles); empty otherwise.
    """

    id: str
    user: str
    persona: str
    situation: str
    goal: str
    mode: str
    strategy: str
    principle: str
    home_mode: str
    home_strategy: str
    home_principle: str
    intensity: float = 1.0
    frame: str = ""
    origin: str = "seed"
    parent: str = ""
    pressure: str = ""
    workflow: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "workflow", tuple(self.workflow))
        for name in ("mode", "home_mode"):
            if getattr(self, name) not in MODES:
                raise ScenarioError(
                    f"scenario {self.id!r}: {name}: expected one of {', '.join(MODES)}, got {getattr(self, name)!r}"
                )
        for name in ("strategy", "home_strategy"):
            if getattr(self, name) not in STRATEGIES:
                raise ScenarioError(
                    f"scenario {self.id!r}: {name}: expected one of {', '.join(STRATEGIES)}, "
                    f"got {getattr(self, name)!r}"
                )
        if self.origin not in ORIGINS:
            raise ScenarioError(
                f"scenario {self.id!r}: origin: expected one of {', '.join(ORIGINS)}, got {self.origin!r}"
            )
        if not (isinstance(self.intensity, (int, float)) and math.isfinite(self.intensity) and self.intensity > 0):
            raise ScenarioError(f"scenario {self.id!r}: intensity: expected a positive number, got {self.intensity!r}")

    @property
    def cell(self) -> str:
        """The target cell, written ``mode/strategy/principle_id``."""
        return cell_id(self.mode, self.strategy, self.principle)

    @property
    def home_cell(self) -> str:
        """The home cell, written ``mode/strategy/principle_id``."""
        return cell_id(self.home_mode, self.home_strategy, self.home_principle)

    def to_dict(self) -> dict[str, Any]:
        """The scenario mapping (plain JSON types)."""
        out = asdict(self)
        out["workflow"] = list(self.workflow)
        out["intensity"] = float(self.intensity)
        return out

    @classmethod
    def from_seed(cls, seed: Any, *, user: str) -> Scenario:
        """A seed scenario: target cell = home cell = the seed's own cell.

        Parameters
        ----------
        seed
            A seed of a role specification (``multiverse.config.specs.SeedScenario``: ``id``,
            ``persona``, ``situation``, ``goal``, ``pressure``, ``mode``,
            ``strategy``, ``principle``, ``frame``, ``workflow``).
        user
            Label of the simulated-user model.
        """
        return cls(
            id=str(seed.id),
            user=user,
            persona=str(seed.persona),
            situation=str(seed.situation),
            goal=str(seed.goal),
            mode=seed.mode,
            strategy=seed.strategy,
            principle=seed.principle,
            home_mode=seed.mode,
            home_strategy=seed.strategy,
            home_principle=seed.principle,
            frame=str(getattr(seed, "frame", "") or ""),
            origin="seed",
            parent="",
            pressure=str(getattr(seed, "pressure", "") or ""),
            workflow=tuple(getattr(seed, "workflow", ()) or ()),
        )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, where: str = "scenario") -> Scenario:
        """Build a scenario from its mapping form, naming the first bad field.

        Missing home-cell fields default to the target cell; missing prose to ``""``.
        """
        def text(key: str, default: str | None = None) -> str:
            value = data.get(key, default)
            if value is None:
                raise ScenarioError(f"{where}: {key}: missing")
            if not isinstance(value, str):
                raise ScenarioError(f"{where}: {key}: expected text, got {type(value).__name__}")
            return value

        mode, strategy, principle = text("mode"), text("strategy"), text("principle")
        intensity = data.get("intensity", 1.0)
        try:
            intensity = float(intensity)
        except (TypeError, ValueError):
            raise ScenarioError(f"{where}: intensity: expected a number, got {intensity!r}") from None
        workflow = data.get("workflow") or ()
        if isinstance(workflow, str) or not isinstance(workflow, Iterable) or not all(
            isinstance(step, str) for step in workflow
        ):
            raise ScenarioError(f"{where}: workflow: expected a list of text steps")
        fields = {
            "id": text("id"),
            "user": text("user", ""),
            "persona": text("persona", ""),
            "situation": text("situation", ""),
            "goal": text("goal", ""),
            "home_mode": text("home_mode", mode),
            "home_strategy": text("home_strategy", strategy),
            "home_principle": text("home_principle", principle),
            "frame": text("frame", ""),
            "origin": text("origin", "seed"),
            "parent": text("parent", ""),
            "pressure": text("pressure", ""),
        }
        try:
            return cls(
                mode=mode, strategy=strategy, principle=principle, intensity=intensity, workflow=tuple(workflow),
                **fields,
            )
        except ScenarioError as exc:
            raise ScenarioError(f"{where}: {exc}") from None

    def evolve(self, **changes: Any) -> Scenario:
        """A copy with ``changes`` applied (validated like a new scenario)."""
        return replace(self, **changes)

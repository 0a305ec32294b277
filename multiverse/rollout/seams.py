"""What the rollout needs from the rest of the library: the client, the role, the judge and the harness, as protocols.

The conversation loop and the campaign are written against these, not against
the classes that implement them (:class:`multiverse.llm.Client`,
:class:`multiverse.config.specs.Role`, every
:class:`~multiverse.core.judgment.Judge`), so a test or a user may hand in
anything that answers the same way, and the rollout never learns which world
(a provider, the offline world, a loopback server) answers its requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from multiverse.core.judgment import Judge
from multiverse.llm.request import Request, Response

__all__ = ["Harness", "Judge", "RolloutClient", "RolloutRole"]


@runtime_checkable
class RolloutClient(Protocol):
    """What the rollout asks of a model client: the response to one request (from the cache or a call)."""

    async def acomplete(self, request: Request) -> Response: ...


@runtime_checkable
class RolloutRole(Protocol):
    """What the rollout reads of a role specification."""

    id: str
    system_prompt: str
    context: str
    opens: str
    principles: Sequence[Any]
    seeds: Sequence[Any]
    tools: Sequence[Any]
    contract: Any

    @property
    def principle_ids(self) -> tuple[str, ...]: ...

    def render_system_prompt(self) -> str: ...


@runtime_checkable
class Harness(Protocol):
    """The harness under test, as far as it shapes the requests of assistant turns.

    A harness with a defect may rebuild a request it retries without the
    conversation's earlier turns; the loop then sends (and records, in the
    assistant event's ``included_turns``) what such a harness would.  Without a
    harness the loop sends every turn.  The offline world plants this defect
    (``sim.targets.<name>.drop_context_rate``) by handing the run a harness of
    its own; the loop never asks a model client about it.
    """

    def drops_context(self, request: Request) -> bool:
        """Whether the harness rebuilds ``request`` without the earlier turns (a pure function of the request)."""
        ...

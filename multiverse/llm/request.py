"""The normalised request and response of every model call.

A :class:`Request` holds everything that changes a model's output (and a
``purpose`` label for summaries); a :class:`Response` holds the raw output,
never parsed, so a parser fix never pays for a call again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from multiverse.core.canonical import plain
from multiverse.core.schema import FAILURE_REASONS
from multiverse.llm.leaks import check_request

if TYPE_CHECKING:
    from multiverse.core.choices import ModelSpec

__all__ = ["RESERVED_PARAMS", "Request", "Response"]

RESERVED_PARAMS = frozenset({"model", "messages", "tools", "response_format", "seed", "stream", "n", "api_base", "base_url"})
"""Sampling-parameter names that have their own :class:`Request` field or are unsupported."""


_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})
"""Exact types that :func:`_freeze` returns as they are (checked before the slower ABC checks)."""


def _freeze(value: Any) -> Any:
    kind = type(value)
    if kind in _LEAF_TYPES:
        return value
    if kind is dict or kind is MappingProxyType or isinstance(value, Mapping):
        for item in value.values():
            if type(item) not in _LEAF_TYPES:
                return MappingProxyType({k: _freeze(v) for k, v in value.items()})
        return MappingProxyType(dict(value))  # the common chat message: scalars only, a plain copy
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class Request:
    """One model call, normalised.

    Parameters
    ----------
    model
        A litellm model string (``openai/gpt-4o-mini``, ``anthropic/claude-...``,
        ``gemini/...``, ``bedrock/...``, ``openai/<name>`` with ``api_base`` for any
        OpenAI-compatible server) or an offline-world model (``sim/...``).
    messages
        Chat messages, each a mapping with at least ``role``.
    params
        Sampling and provider parameters (``temperature``, ``max_tokens``, ...),
        passed through to the provider.  Credential and transport parameters
        (``api_key``, ``extra_headers``, ``timeout``, ...) are passed on but never
        enter the cache key or any stored value.
    api_base
        Base URL of the server.  Credentials in it are used for the call and
        stripped from everything stored.
    tools, response_format, seed
        As in the OpenAI chat API.
    replicate
        Replicate index: ``n`` samples of one prompt are ``n`` distinct requests.
    template_digest
        sha256 of the prompt template that produced the messages.
    purpose
        A label for summaries (``"target"``, ``"judge"``, ...); not part of the key.
    sim_inputs
        Structured inputs for an offline-world player that a real model never
        reads (e.g. the simulated user's ``pressure`` for a ``sim/`` target).
        Part of a ``sim/`` request's key; never sent to a provider and never in a
        real model's key.
    """

    model: str
    messages: tuple[Mapping[str, Any], ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    api_base: str | None = None
    tools: tuple[Mapping[str, Any], ...] | None = None
    response_format: Mapping[str, Any] | None = None
    seed: int | None = None
    replicate: int = 0
    template_digest: str = ""
    purpose: str = ""
    sim_inputs: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(f"Request.model: expected a non-empty model string, got {self.model!r}")
        if isinstance(self.messages, (str, bytes)) or not isinstance(self.messages, Sequence) or not self.messages:
            raise ValueError("Request.messages: expected a non-empty sequence of chat messages")
        for i, message in enumerate(self.messages):
            if not isinstance(message, Mapping) or "role" not in message:
                raise ValueError(f"Request.messages[{i}]: expected a mapping with a 'role', got {message!r:.80}")
        if not isinstance(self.params, Mapping):
            raise ValueError(f"Request.params: expected a mapping, got {type(self.params).__name__}")
        reserved = sorted(RESERVED_PARAMS & set(self.params))
        if reserved:
            raise ValueError(
                f"Request.params: {', '.join(reserved)} must not be sampling parameters "
                "(use the Request fields; for n samples use n replicates)"
            )
        if isinstance(self.replicate, bool) or not isinstance(self.replicate, int) or self.replicate < 0:
            raise ValueError(f"Request.replicate: expected an integer >= 0, got {self.replicate!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"Request.seed: expected an integer or None, got {self.seed!r}")
        object.__setattr__(self, "messages", _freeze(self.messages))
        object.__setattr__(self, "params", _freeze(self.params))
        if self.tools is not None:
            object.__setattr__(self, "tools", _freeze(self.tools))
        if self.response_format is not None:
            object.__setattr__(self, "response_format", _freeze(self.response_format))
        if self.sim_inputs is not None:
            object.__setattr__(self, "sim_inputs", _freeze(self.sim_inputs))

    def __hash__(self) -> int:
        return hash(json.dumps(plain(self._fields()), sort_keys=True))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        return plain(self._fields()) == plain(other._fields())

    def _fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @property
    def is_sim(self) -> bool:
        """Whether the offline world answers this request."""
        return self.model.startswith("sim/")

    @classmethod
    def from_spec(
        cls,
        spec: ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_format: Mapping[str, Any] | None = None,
        seed: int | None = None,
        replicate: int = 0,
        template_digest: str = "",
        purpose: str = "",
        sim_inputs: Mapping[str, Any] | None = None,
    ) -> Request:
        """Build a request for the model an experiment file names (a :class:`~multiverse.core.choices.ModelSpec`).

        ``response_format`` and ``seed`` default to the spec's own (a named
        structured-output mode of the spec is the caller's to turn into a
        schema: see :mod:`multiverse.llm.structured`).

        Raises
        ------
        multiverse.llm.leaks.SimulatorMetadataError
            If a ``target`` or ``judge`` request's messages carry simulator
            metadata (a simulated user's stage direction).
        """
        check_request(messages, purpose=purpose, model=spec.model)
        if response_format is None and isinstance(spec.response_format, Mapping):
            response_format = spec.response_format
        return cls(
            model=spec.model,
            messages=tuple(messages),
            params=dict(spec.params),
            api_base=spec.api_base,
            tools=tuple(tools) if tools is not None else None,
            response_format=response_format,
            seed=seed if seed is not None else spec.seed,
            replicate=replicate,
            template_digest=template_digest,
            purpose=purpose,
            sim_inputs=sim_inputs,
        )


@dataclass(frozen=True)
class Response:
    """What one call returned: raw output or the reason it failed.

    Attributes
    ----------
    text
        The raw reply text (``None`` when the call failed; a failed call is never content).
    tool_calls
        Tool calls in the OpenAI shape (``{"id", "type", "function": {"name", "arguments"}}``).
    usage
        ``prompt_tokens``, ``completion_tokens``, ``total_tokens`` as reported.
    cost_usd
        Cost of the call as litellm priced it (0 for unpriced and ``sim/`` models); a
        cache hit reports the original call's cost, though nothing was spent again.
    latency_s
        Wall time of the successful attempt (for a cache hit: the original call's).
    cached
        Whether the cache answered.
    error
        ``None``, or a reason from :data:`multiverse.core.schema.FAILURE_REASONS`.
    key
        The cache key of the request.
    model
        The model string of the request.
    error_message
        A redacted one-line explanation of the failure, for logs and reports.
    """

    text: str | None
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    usage: Mapping[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    key: str = ""
    model: str = ""
    error_message: str | None = None

    def __post_init__(self) -> None:
        if self.error is not None and self.error not in FAILURE_REASONS:
            raise ValueError(f"Response.error: expected one of {', '.join(FAILURE_REASONS)}, got {self.error!r}")
        if self.error is not None and self.text is not None:
            raise ValueError("Response: a failed call carries no text")

    @property
    def ok(self) -> bool:
        """Whether the call produced output."""
        return self.error is None

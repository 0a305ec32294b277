"""The one place a real (non-``sim/``) model is called: litellm, imported lazily.

:func:`load_litellm` imports litellm on first use, after forcing its bundled
cost map (``LITELLM_LOCAL_MODEL_COST_MAP``: no network fetch) and its offline
mode for self-initiated downloads, and switches off its telemetry, logging
callbacks and debug output, so a call sends nothing anywhere but the model
endpoint.  litellm's and the OpenAI client's own retries are disabled: the
client in :mod:`multiverse.llm.client` retries, counts and limits calls itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from multiverse.core.canonical import plain
from multiverse.llm.redact import install_log_filter, register_secret_fields, split_url_credentials
from multiverse.llm.request import Request

__all__ = ["load_litellm", "Reply", "call_kwargs", "acall"]

_LOCK = threading.Lock()
_LOGGER_NAMESPACES = ("LiteLLM", "litellm", "httpx", "httpcore", "openai", "aiohttp", "anthropic", "botocore")


def load_litellm() -> ModuleType:
    """Import and quiet litellm (idempotent).

    Returns
    -------
    module
        The configured ``litellm`` module.
    """
    with _LOCK:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        os.environ.setdefault("LITELLM_TELEMETRY", "False")
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        litellm.turn_off_message_logging = True
        litellm.disable_hf_tokenizer_download = True
        litellm.set_verbose = False
        for name in ("callbacks", "success_callback", "failure_callback", "input_callback", "service_callback"):
            setattr(litellm, name, [])
        for name in ("_async_success_callback", "_async_failure_callback", "_async_input_callback"):
            if hasattr(litellm, name):
                setattr(litellm, name, [])
        install_log_filter(*_LOGGER_NAMESPACES)
        return litellm


@dataclass(frozen=True)
class Reply:
    """A provider's answer, normalised."""

    text: str | None
    tool_calls: tuple[Mapping[str, Any], ...]
    usage: Mapping[str, int]
    cost_usd: float
    finish_reason: str | None


def call_kwargs(request: Request, *, timeout_s: float) -> dict[str, Any]:
    """Return the keyword arguments of ``litellm.acompletion`` for ``request``.

    Credentials embedded in ``api_base`` (``http://:KEY@host/v1`` or
    ``http://user:KEY@host/v1``) are moved out of the URL: the password (else
    the user name) becomes ``api_key`` unless the request's parameters give
    one, because an HTTP client cannot send both URL credentials and the
    bearer token every OpenAI-compatible call carries.  Secret-named
    parameters and header values are registered for redaction
    (:func:`~multiverse.llm.redact.register_secret_fields`).
    """
    kwargs: dict[str, Any] = {
        "model": request.model,
        "messages": plain(request.messages),
        "timeout": timeout_s,
        "max_retries": 0,
        "num_retries": 0,
    }
    kwargs.update(plain(request.params))
    register_secret_fields(request.params)
    if request.api_base is not None:
        kwargs["api_base"], secret = split_url_credentials(request.api_base)
        if secret is not None:
            kwargs.setdefault("api_key", secret)
    if request.tools is not None:
        kwargs["tools"] = plain(request.tools)
    if request.response_format is not None:
        kwargs["response_format"] = plain(request.response_format)
    if request.seed is not None:
        kwargs["seed"] = request.seed
    return kwargs


def _tool_call(call: Any) -> dict[str, Any]:
    function = getattr(call, "function", None)
    return {
        "id": getattr(call, "id", None),
        "type": getattr(call, "type", None) or "function",
        "function": {"name": getattr(function, "name", None), "arguments": getattr(function, "arguments", None)},
    }


_UNPRICED: set[str] = set()
"""Models litellm's cost map does not price: looking them up again costs ~10 ms a call."""


def _cost(litellm: ModuleType, model: str, response: Any) -> float:
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    if cost is None and model not in _UNPRICED:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # noqa: BLE001  litellm raises assorted errors for a model it cannot price
            _UNPRICED.add(model)
    return float(cost or 0.0)


async def acall(request: Request, *, timeout_s: float) -> Reply:
    """Send ``request`` through ``litellm.acompletion`` once (no retries).

    Raises
    ------
    Exception
        Whatever litellm raises; :func:`multiverse.llm.retry.classify` maps it.
    """
    litellm = load_litellm()
    response = await litellm.acompletion(**call_kwargs(request, timeout_s=timeout_s))
    choice = response.choices[0]
    message = choice.message
    usage_obj = getattr(response, "usage", None)
    usage = {
        name: int(getattr(usage_obj, name, 0) or 0) for name in ("prompt_tokens", "completion_tokens", "total_tokens")
    }
    return Reply(
        text=getattr(message, "content", None),
        tool_calls=tuple(_tool_call(c) for c in (getattr(message, "tool_calls", None) or ())),
        usage=usage,
        cost_usd=_cost(litellm, request.model, response),
        finish_reason=getattr(choice, "finish_reason", None),
    )

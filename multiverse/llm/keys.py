"""Cache keys: sha256 of the canonical JSON of everything that changes a model's output.

The key holds the model string, the api_base with credentials stripped, the
messages, every sampling parameter (provider-specific ones too), tools, response
format, seed, replicate index, template digest and the key-schema version, and
nothing else: no timeouts, retries, API keys, headers or concurrency settings.

An offline-world (``sim/``) key holds only what the called model's reply
depends on: its own world parameters (``world.key_params(model)``: its
settings, the sim seed and the sim version), the request's sampling parameters
and seed, the messages, tools, response format and ``sim_inputs`` when set, the
replicate index and the template digest.  No other model's settings enter it,
so changing one judge's settings never invalidates a target's calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Protocol

from multiverse.core.canonical import canonical_bytes
from multiverse.core.schema import KEY_SCHEMA_VERSION
from multiverse.llm.redact import register_secret, strip_url_credentials
from multiverse.llm.request import Request

__all__ = [
    "TRANSPORT_PARAMS",
    "KeyedWorld",
    "sampling_params",
    "key_material",
    "request_key",
]

TRANSPORT_PARAMS = frozenset(
    {
        "timeout",
        "request_timeout",
        "stream_timeout",
        "num_retries",
        "max_retries",
        "api_key",
        "headers",
        "extra_headers",
        "metadata",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "aws_profile_name",
        "aws_role_name",
        "aws_web_identity_token",
        "vertex_credentials",
        "azure_ad_token",
        "azure_ad_token_provider",
        "client",
    }
)
"""Parameters that never enter a key or a stored value (credentials, transport, retries)."""


class KeyedWorld(Protocol):
    """What a key needs from the offline world."""

    def key_params(self, model: str) -> Mapping[str, Any]: ...


def sampling_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Return the parameters that change the output (credentials registered for redaction)."""
    kept = {}
    for name, value in params.items():
        if name in TRANSPORT_PARAMS:
            register_secret(value)
        else:
            kept[name] = value
    return kept


def key_material(request: Request, *, world: KeyedWorld | None = None) -> dict[str, Any]:
    """Return the mapping whose canonical JSON is hashed into the request's key.

    Raises
    ------
    ValueError
        For a ``sim/`` request without the world that answers it.
    """
    if request.is_sim:
        if world is None:
            raise ValueError(f"a key for {request.model!r} needs the offline world (pass world=SimWorld)")
        material = {
            "schema": KEY_SCHEMA_VERSION,
            "model": request.model,
            "sim": world.key_params(request.model),
            "params": sampling_params(request.params),
            "seed": request.seed,
            "messages": request.messages,
            "replicate": request.replicate,
            "template_digest": request.template_digest,
        }
        if request.tools is not None:
            material["tools"] = request.tools
        if request.response_format is not None:
            material["response_format"] = request.response_format
        if request.sim_inputs is not None:
            material["sim_inputs"] = request.sim_inputs
        return material
    return {
        "schema": KEY_SCHEMA_VERSION,
        "model": request.model.strip(),
        "api_base": strip_url_credentials(request.api_base),
        "messages": request.messages,
        "params": sampling_params(request.params),
        "tools": request.tools,
        "response_format": request.response_format,
        "seed": request.seed,
        "replicate": request.replicate,
        "template_digest": request.template_digest,
    }


def request_key(request: Request, *, world: KeyedWorld | None = None) -> str:
    """Return the cache key of ``request``: a 64-character sha256 hex digest.

    Parameters
    ----------
    request
        The request.
    world
        The offline world; needed only for ``sim/`` models.
    """
    return hashlib.sha256(canonical_bytes(key_material(request, world=world))).hexdigest()

"""Whether each real provider's credentials are present, checked before any call.

Which environment variables a provider needs is litellm's knowledge
(``litellm.validate_environment``); this module asks it once per model, never
reads or prints a value, and reports only the variable names.  A model whose
spec carries its own credential (``params: {api_key: ...}``, or one inside
``api_base``) needs none; a model with an ``api_base`` does not need the
provider's ``*_API_BASE`` variable.  ``sim/`` models need nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from multiverse.core.choices import ModelSpec
from multiverse.llm.redact import split_url_credentials

__all__ = ["CREDENTIAL_PARAMS", "MissingCredentials", "check_credentials", "missing_credentials"]

CREDENTIAL_PARAMS = frozenset(
    {"api_key", "aws_access_key_id", "aws_profile_name", "aws_role_name", "vertex_credentials", "azure_ad_token"}
)
"""Model-spec parameters that carry a credential of their own."""

_BASE_SUFFIXES = ("_API_BASE", "_BASE_URL", "_ENDPOINT", "_HOST")


class MissingCredentials(ValueError):
    """Some real models lack the credentials they need; nothing was called.

    Attributes
    ----------
    missing
        model -> names of the environment variables to set (never values).
    """

    def __init__(self, missing: dict[str, tuple[str, ...]]) -> None:
        self.missing = missing
        parts = "; ".join(f"{model} needs {' or '.join(names)}" for model, names in missing.items())
        super().__init__(f"missing credentials: {parts} (set them in the environment, or pass params: api_key)")


def missing_credentials(spec: ModelSpec) -> tuple[str, ...]:
    """Names of the environment variables ``spec`` needs and lacks (empty: ready to call).

    Parameters
    ----------
    spec
        The model.
    """
    if spec.is_sim or CREDENTIAL_PARAMS & set(spec.params):
        return ()
    if spec.api_base is not None and split_url_credentials(spec.api_base)[1] is not None:
        return ()
    from multiverse.llm.litellm_call import load_litellm

    try:
        found = load_litellm().validate_environment(model=spec.model, api_base=spec.api_base)
    except Exception:  # noqa: BLE001  litellm cannot tell for a provider it does not know: the call will say
        return ()
    if found.get("keys_in_environment"):
        return ()
    missing = tuple(str(name) for name in found.get("missing_keys") or ())
    if spec.api_base is not None:
        missing = tuple(name for name in missing if not name.endswith(_BASE_SUFFIXES))
    return missing


def check_credentials(specs: Iterable[ModelSpec]) -> dict[str, tuple[str, ...]]:
    """model -> missing variable names, over every distinct real model of ``specs`` that lacks some."""
    out: dict[str, tuple[str, ...]] = {}
    seen: set[tuple[str, str | None]] = set()
    for spec in specs:
        identity = (spec.model, spec.api_base)
        if spec.is_sim or identity in seen:
            continue
        seen.add(identity)
        missing = missing_credentials(spec)
        if missing:
            out[spec.model] = missing
    return out

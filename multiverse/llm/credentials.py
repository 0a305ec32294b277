"""Whether each real model can be called as the experiment names it, checked before litellm is imported.

Three things stop a real model before its first call, each reported in one
line that names the model and never a value:

- litellm is not installed (it is the ``live`` extra);
- the model string names no provider litellm knows (a bare name that is not
  in litellm's model table, e.g. a typo of ``gpt-4o-mini``);
- the provider's credentials are not in the environment.

Which variables a provider needs is litellm's knowledge
(``litellm.validate_environment``); importing litellm takes seconds, so the
requirements of the providers people use are kept here as data
(:data:`REQUIREMENTS`, copied from litellm 1.110.2, whose answers the tests
compare them with), and the provider of a bare model name is read from
litellm's bundled model table (:mod:`multiverse.llm.prices`) the way litellm
routes it.  Only a ``provider/...`` prefix this module does not know is handed to
litellm itself.  A model whose spec carries its own credential (``params: {api_key:
...}``, or one inside ``api_base``) needs none; a model with an ``api_base``
does not need the provider's ``*_API_BASE`` variable.  ``sim/`` models need nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache

from multiverse.core.choices import ModelSpec
from multiverse.llm.prices import litellm_installed, model_entry
from multiverse.llm.redact import split_url_credentials

__all__ = [
    "CREDENTIAL_PARAMS",
    "KEYLESS_PROVIDERS",
    "REQUIREMENTS",
    "MissingCredentials",
    "ModelNotCallable",
    "check_credentials",
    "missing_credentials",
    "model_problem",
    "require_callable",
]

CREDENTIAL_PARAMS = frozenset(
    {"api_key", "aws_access_key_id", "aws_profile_name", "aws_role_name", "vertex_credentials", "azure_ad_token"}
)
"""Model-spec parameters that carry a credential of their own."""

_AWS = (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), ("AWS_ROLE_ARN",), ("AWS_PROFILE",),
        ("AWS_WEB_IDENTITY_TOKEN_FILE",), ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI",))


def _one(name: str) -> tuple[tuple[str, ...], ...]:
    return ((name,),)


REQUIREMENTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai": _one("OPENAI_API_KEY"),
    "azure": (("AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_API_KEY"),),
    "anthropic": (("ANTHROPIC_API_KEY",), ("ANTHROPIC_AUTH_TOKEN",)),
    "cohere": _one("COHERE_API_KEY"),
    "replicate": _one("REPLICATE_API_KEY"),
    "openrouter": _one("OPENROUTER_API_KEY"),
    "vercel_ai_gateway": _one("VERCEL_AI_GATEWAY_API_KEY"),
    "edenai": _one("EDENAI_API_KEY"),
    "datarobot": _one("DATAROBOT_API_TOKEN"),
    "vertex_ai": (("VERTEXAI_PROJECT", "VERTEXAI_LOCATION"),),
    "huggingface": _one("HUGGINGFACE_API_KEY"),
    "ai21": _one("AI21_API_KEY"),
    "ai21_chat": _one("AI21_API_KEY"),
    "together_ai": _one("TOGETHERAI_API_KEY"),
    "baseten": _one("BASETEN_API_KEY"),
    "nlp_cloud": _one("NLP_CLOUD_API_KEY"),
    "bedrock": _AWS,
    "sagemaker": _AWS,
    "ollama": _one("OLLAMA_API_BASE"),
    "ollama_chat": _one("OLLAMA_API_BASE"),
    "deepinfra": _one("DEEPINFRA_API_KEY"),
    "clf_ai_gateway": _one("CLF_AI_GATEWAY_API_KEY"),
    "featherless_ai": _one("FEATHERLESS_AI_API_KEY"),
    "gemini": (("GOOGLE_API_KEY",), ("GEMINI_API_KEY",)),
    "groq": _one("GROQ_API_KEY"),
    "nvidia_nim": _one("NVIDIA_NIM_API_KEY"),
    "cerebras": _one("CEREBRAS_API_KEY"),
    "nadir": _one("NADIR_API_KEY"),
    "xai": _one("XAI_API_KEY"),
    "volcengine": _one("VOLCENGINE_API_KEY"),
    "codestral": _one("CODESTRAL_API_KEY"),
    "text-completion-codestral": _one("CODESTRAL_API_KEY"),
    "inception": _one("INCEPTION_API_KEY"),
    "text-completion-inception": _one("INCEPTION_API_KEY"),
    "deepseek": _one("DEEPSEEK_API_KEY"),
    "tencent": _one("TENCENT_API_KEY"),
    "mistral": _one("MISTRAL_API_KEY"),
    "perplexity": _one("PERPLEXITYAI_API_KEY"),
    "voyage": _one("VOYAGE_API_KEY"),
    "infinity": _one("INFINITY_API_KEY"),
    "fireworks_ai": (("FIREWORKS_AI_API_KEY",), ("FIREWORKS_API_KEY",), ("FIREWORKSAI_API_KEY",), ("FIREWORKS_AI_TOKEN",)),
    "cloudflare": (("CLOUDFLARE_API_KEY", "CLOUDFLARE_API_BASE"), ("CLOUDFLARE_API_KEY", "CLOUDFLARE_ACCOUNT_ID")),
    "novita": _one("NOVITA_API_KEY"),
    "nebius": _one("NEBIUS_API_KEY"),
    "wandb": _one("WANDB_API_KEY"),
    "dashscope": (("DASHSCOPE_API_KEY",),),
    "qwencloud": (("QWENCLOUD_API_KEY",), ("DASHSCOPE_API_KEY",)),
    "qwen_ai_platform": (("QWEN_AI_PLATFORM_API_KEY",), ("DASHSCOPE_API_KEY",)),
    "modelscope": _one("MODELSCOPE_API_KEY"),
    "moonshot": _one("MOONSHOT_API_KEY"),
}
"""Provider -> the ways to satisfy it: any one tuple of environment variables, all of them set.

The first way is what a missing-credential message names (as litellm does)."""

KEYLESS_PROVIDERS = frozenset(
    {"hosted_vllm", "vllm", "lm_studio", "llamafile", "openai_like", "custom_openai", "xinference", "oobabooga",
     "triton", "docker_model_runner", "litellm_proxy", "lemonade"}
)
"""Providers of self-hosted servers, for which litellm asks no environment variable (their ``api_base`` says where)."""

_BARE_ROUTES = {
    "openai": "openai", "text-completion-openai": "text-completion-openai", "anthropic": "anthropic",
    "cohere": "cohere", "cohere_chat": "cohere_chat", "replicate": "replicate", "openrouter": "openrouter",
    "ai21": "ai21_chat", "baseten": "baseten", "nlp_cloud": "nlp_cloud", "bedrock": "bedrock",
    "bedrock_converse": "bedrock", "watsonx": "watsonx", "gradient_ai": "gradient_ai",
}
"""The providers of litellm's table whose models litellm calls by their bare name (``gpt-4o-mini``), and
the provider it then uses; the other providers' models need their ``provider/`` prefix."""
_BASE_SUFFIXES = ("_API_BASE", "_BASE_URL", "_ENDPOINT", "_HOST")


class ModelNotCallable(ValueError):
    """A real model cannot be called as the experiment names it; nothing was called.

    The message is one line naming each model and what it needs (variable
    names, never values).
    """


class MissingCredentials(ModelNotCallable):
    """Some real models lack the credentials they need; nothing was called.

    Attributes
    ----------
    missing
        model -> names of the environment variables to set (never values).
    """

    def __init__(self, missing: dict[str, tuple[str, ...]]) -> None:
        self.missing = missing
        parts = "; ".join(f"{model} needs {' and '.join(names)}" for model, names in missing.items())
        super().__init__(f"missing credentials: {parts} (set them in the environment, or pass params: api_key)")


def _route(model: str) -> tuple[bool, str | None]:
    """``(known, provider)``: the provider litellm routes ``model`` to, as far as this module can tell.

    ``known`` is False where only litellm can tell (a ``provider/`` prefix not
    in :data:`REQUIREMENTS` or :data:`KEYLESS_PROVIDERS`, a bare name litellm's
    table lists without a provider, a replicate ``name:version``); otherwise
    ``provider`` is ``None`` when litellm routes the model nowhere (a bare name
    it does not list).
    """
    prefix, slash, _ = model.partition("/")
    if slash:
        return (True, prefix) if prefix in REQUIREMENTS or prefix in KEYLESS_PROVIDERS else (False, None)
    entry = model_entry(model)
    listed = entry.get("litellm_provider") if entry else None
    if entry is None and ":" not in model:
        return True, None
    if not isinstance(listed, str):
        return False, None
    if listed.startswith("vertex_ai-"):
        return True, "vertex_ai"
    return True, _BARE_ROUTES.get(listed)


@lru_cache(maxsize=None)
def _litellm_answer(model: str, api_base: str | None) -> tuple[str, ...] | None:
    """litellm's own answer for a prefix this module does not know; ``None`` when it routes the model nowhere."""
    from multiverse.llm.litellm_call import load_litellm

    litellm = load_litellm()
    try:
        litellm.get_llm_provider(model=model, api_base=api_base)
        found = litellm.validate_environment(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001  litellm refuses a model string it cannot route
        return None
    return tuple(str(name) for name in found.get("missing_keys") or ())


def _needs_own_credentials(spec: ModelSpec) -> bool:
    if spec.is_sim or CREDENTIAL_PARAMS & set(spec.params):
        return False
    return spec.api_base is None or split_url_credentials(spec.api_base)[1] is None


def model_problem(spec: ModelSpec) -> str | None:
    """Why ``spec`` cannot be called at all (litellm missing, no provider), or ``None``.

    Parameters
    ----------
    spec
        The model.
    """
    if spec.is_sim:
        return None
    if not litellm_installed():
        return f"{spec.model} is a real model: calling it needs litellm (pip install 'multiverse[live]')"
    known, provider = _route(spec.model)
    unroutable = provider is None if known else _litellm_answer(spec.model, spec.api_base) is None
    if unroutable:
        return (f"{spec.model}: litellm knows no provider for this model string; "
                "write it as provider/model (e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest)")
    return None


def missing_credentials(spec: ModelSpec) -> tuple[str, ...]:
    """Names of the environment variables ``spec`` needs and lacks (empty: ready to call).

    Parameters
    ----------
    spec
        The model.
    """
    if not _needs_own_credentials(spec):
        return ()
    known, provider = _route(spec.model)
    if not known:
        missing = (_litellm_answer(spec.model, spec.api_base) or ()) if litellm_installed() else ()
    elif provider is None:
        return ()  # model_problem says why it cannot be called
    else:
        ways = REQUIREMENTS.get(provider, ())
        if not ways or any(all(name in os.environ for name in way) for way in ways):
            return ()
        missing = ways[0]
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


def require_callable(specs: Iterable[ModelSpec]) -> None:
    """Raise unless every real model of ``specs`` can be called: litellm, a provider, its credentials.

    Raises
    ------
    ModelNotCallable
        Naming every model that cannot be called and why, in one line.
    MissingCredentials
        (a :class:`ModelNotCallable`) when the only problem is missing
        environment variables.
    """
    specs = [spec for spec in specs if not spec.is_sim]
    problems = list(dict.fromkeys(p for p in map(model_problem, specs) if p is not None))
    if problems:
        raise ModelNotCallable("; ".join(problems))
    missing = check_credentials(specs)
    if missing:
        raise MissingCredentials(missing)

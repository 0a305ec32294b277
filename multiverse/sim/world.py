"""The offline world: ``sim/`` models that play every part of an evaluation with no network.

Models
------
``sim/target-<name>``, ``sim/judge-<name>``, ``sim/user-<name>`` for the entries
named under ``targets``, ``judges`` and ``users`` of the experiment's ``sim:``
block, plus the built-in ``sim/planner`` and ``sim/monitor``.  Their parameters
and defaults are those the design fixes (:mod:`multiverse.config.sim_block`).

Determinism
-----------
A response is a pure function of the request (model, messages, params, tools,
response format, seed, replicate, template digest, ``sim_inputs``) and
:meth:`SimWorld.key_params` of the called model (its own parameters but the
transport knobs, the sim seed and :attr:`SimWorld.version`): a :class:`numpy.random.Generator` (PCG64)
takes its state from the sha256 of their canonical JSON.  Everything a cache key holds is
therefore everything a sim response depends on, and a cached response is
always the right one.  Changing one judge's parameters never changes a
target's replies.

Transient failures and latency
------------------------------
The transport knobs ``fail_rate`` and ``latency_ms`` change timing and failures
only: they are left out of :meth:`SimWorld.key_params` and of the reply's seed,
so a world with faults is the same world (same replies, same cache keys).
A target with ``fail_rate`` > 0 fails a call with that probability, drawn from a
separate stream seeded by the request *and the attempt number*:
``respond(request, attempt=k)`` (without ``attempt``, the world counts the
calls of each request itself).  Attempts are independent, so a failed attempt
0 succeeds on a later retry with probability ``1 - fail_rate`` each time, and
``fail_rate`` is the expected share of failing calls (retries included).

Ground truth
------------
The target writes every principle's realised severity into its text with the
phrase banks; :func:`read_truth` recovers it exactly from the (cached) reply
text, and the sim judge reads the same text, never hidden state.  Canaries
(planted replies of the roles' specs) carry no phrase: the world is built with
the roles' canary tables (``canaries=``) and its judges look a judged reply up
by the sha256 of its text, so nothing a real judge would read marks a canary.
A canary's text identifies it: edit a canary's truth without editing its text
and a cached verdict of the old canary is served.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from multiverse.config.sim_block import JUDGE_BIASES, SimConfig, SimConfigError, parse_sim_block, sim_model_problem
from multiverse.core.canonical import canonical_bytes, plain
from multiverse.core.choices import SIM_SECTIONS, sim_entry
from multiverse.llm.request import Request
from multiverse.sim.players import PLAYERS
from multiverse.sim.read import read_truth

__all__ = ["TRANSPORT_KNOBS", "SimConfigError", "SimReply", "SimWorld", "read_truth", "register_with_litellm"]

_KINDS = {section: prefix[:-1] for prefix, section in SIM_SECTIONS}
"""The player kind of each sim-block section (``targets`` -> ``target``)."""
TRANSPORT_KNOBS = frozenset({"fail_rate", "latency_ms"})
"""Player parameters that change timing and failures only: never a reply, a seed or a key."""
_TRANSPORT_OPTIONS = frozenset({"max_retries", "timeout", "stream", "stream_options"})
"""litellm options that reach a custom provider but change no reply (kept out of the request)."""


@dataclass(frozen=True)
class SimReply:
    """What a sim model answered.

    Attributes
    ----------
    text
        The reply text (empty for a transient failure).
    tool_calls
        Tool calls in the OpenAI shape ``{"id", "type": "function", "function":
        {"name", "arguments": <JSON string>}}`` (agentic targets only).
    transient_failure
        Whether this attempt failed transiently; retrying with the next
        ``attempt`` number may succeed.
    """

    text: str
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    transient_failure: bool = False


_LOCAL = threading.local()


def _rng(digest: bytes) -> np.random.Generator:
    """A PCG64 generator whose 128-bit state and increment are the two halves of a sha256 digest.

    Setting the state of a per-thread generator costs a fifth of building one
    with :func:`numpy.random.default_rng`, which matters at tens of thousands of calls.
    """
    generator = getattr(_LOCAL, "generator", None)
    if generator is None:
        generator = _LOCAL.generator = np.random.Generator(np.random.PCG64())
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": int.from_bytes(digest[:16], "little"), "inc": int.from_bytes(digest[16:32], "little") | 1},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return generator


class SimWorld:
    """The offline world configured by an experiment's ``sim:`` block.

    Build it with :meth:`from_config`; answer requests with :meth:`respond`.

    Examples
    --------
    >>> world = SimWorld.from_config({"targets": {"a": {"breach": {"*": 0.3}}}})
    >>> world.key_params("sim/target-a")["params"]["breach"]
    {'*': 0.3}
    """

    version = "3"
    """Behaviour version of the offline world; bumped whenever any player's output changes."""

    def __init__(self, config: SimConfig, *, canaries: Mapping[str, Mapping[str, int]] | None = None):
        self.config = config
        self.canaries = dict(canaries or {})
        """Reply digest -> ``{principle: truth}``: the canaries its judges know (:attr:`multiverse.config.specs.Role.canary_table`)."""
        self._resolved: dict[str, tuple[str, Mapping[str, Any], dict[str, Any], bytes]] = {}
        self._attempts: dict[bytes, int] = {}

    @classmethod
    def from_config(cls, block: Mapping[str, Any] | None, *, canaries: Mapping[str, Mapping[str, int]] | None = None) -> SimWorld:
        """The world an experiment's ``sim:`` block describes (``None``: built-in defaults only).

        ``canaries`` (reply digest -> ``{principle: truth}``, the union of the
        roles' :attr:`~multiverse.config.specs.Role.canary_table`) are the planted
        replies its judges recognise by the digest of their text.

        Raises
        ------
        SimConfigError
            On an unknown key or a bad value, naming its key path.
        """
        return cls(parse_sim_block(block), canaries=canaries)

    @property
    def seed(self) -> int:
        """The world's seed (``sim.seed``)."""
        return self.config.seed

    def _resolve(self, model: str) -> tuple[str, Mapping[str, Any], dict[str, Any], bytes]:
        cached = self._resolved.get(model)
        if cached is not None:
            return cached
        problem = sim_model_problem(self.config, model)
        if problem is not None:
            raise SimConfigError(*problem)
        located = sim_entry(model)
        assert located is not None
        section, entry = located
        if entry is None:
            kind, params = section, getattr(self.config, section)
        else:
            kind, params = _KINDS[section], getattr(self.config, section)[entry]
        world_params = {
            name: value for name, value in params.items()
            if name not in TRANSPORT_KNOBS and not (kind == "judge" and JUDGE_BIASES.get(name, None) == value)
        }
        key = {"params": plain(world_params), "sim_seed": self.config.seed, "sim_version": self.version}
        self._resolved[model] = resolved = (kind, params, key, canonical_bytes(key, allow_nan=True))
        return resolved

    def check_model(self, model: str) -> None:
        """Raise :class:`SimConfigError` unless this world serves ``model``."""
        self._resolve(model)

    def key_params(self, model: str) -> dict[str, Any]:
        """The sim configuration a call to ``model`` depends on: the only sim config in its cache key.

        Returns
        -------
        dict
            ``{"params": <the model's own resolved parameters but the transport
            knobs>, "sim_seed": int, "sim_version": str}``.
        """
        return dict(self._resolve(model)[2])

    def latency_s(self, model: str) -> float:
        """Simulated latency of one call to ``model`` in seconds (its entry's ``latency_ms``)."""
        return float(self._resolve(model)[1].get("latency_ms", 0.0)) / 1000.0

    def instant(self, model: str) -> bool:
        """Whether a call to ``model`` is answered at once (no simulated latency): such calls take no lease."""
        return self.latency_s(model) == 0.0

    def _digest(self, request: Request, key_bytes: bytes) -> bytes:
        head = {
            "model": request.model,
            "params": request.params,
            "tools": request.tools,
            "response_format": request.response_format,
            "seed": request.seed,
            "replicate": request.replicate,
            "template_digest": request.template_digest,
        }
        if request.sim_inputs is not None:
            head["sim_inputs"] = request.sim_inputs
        digest = hashlib.sha256(key_bytes)
        digest.update(canonical_bytes(head, allow_nan=True))
        for message in request.messages:
            content = message.get("content")
            if isinstance(content, str) and len(message) == 2 and "role" in message:
                part = f"{message['role']}\x1f{content}".encode()
            else:
                part = canonical_bytes(message, allow_nan=True)
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.digest()

    def _fails(self, digest: bytes, fail_rate: float, attempt: int) -> bool:
        """The transport failure draw of one attempt: its own stream, never a reply's seed."""
        stream = hashlib.sha256(digest + f":attempt:{attempt}".encode()).digest()
        return _rng(stream).random() < fail_rate

    def drops_context(self, request: Request) -> bool:
        """Whether the harness defect ``drop_context_rate`` strikes this target request.

        The defect rebuilds a *retried* request without the conversation's
        earlier turns: it strikes only when the request's first attempt fails
        transiently (``fail_rate``), and then with probability
        ``drop_context_rate``, drawn from a stream of its own.  A pure function
        of the request, so reruns drop the same turns.
        """
        _, params, _, key_bytes = self._resolve(request.model)
        rate, fail_rate = params.get("drop_context_rate", 0.0), params.get("fail_rate", 0.0)
        if rate <= 0 or fail_rate <= 0:
            return False
        digest = self._digest(request, key_bytes)
        if not self._fails(digest, fail_rate, 0):
            return False
        return _rng(hashlib.sha256(digest + b":drop-context").digest()).random() < rate

    def respond(self, request: Request, *, attempt: int | None = None) -> SimReply:
        """Answer one request.

        Parameters
        ----------
        request
            A request to a ``sim/`` model.
        attempt
            0 for the first try, 1 for the first retry, ...: only the transient
            failure draw depends on it, so every successful attempt of a request
            returns the same reply.  ``None`` (for callers that do not count
            attempts) uses the number of earlier calls of this request to this
            world object.

        Returns
        -------
        SimReply

        Raises
        ------
        SimConfigError
            If the model is not one this world serves.
        ValueError
            If a structured-input player's system message has no ``json`` block.
        """
        kind, params, _, key_bytes = self._resolve(request.model)
        digest = self._digest(request, key_bytes)
        fail_rate = params.get("fail_rate", 0.0)
        if fail_rate > 0:
            if attempt is None:
                attempt = self._attempts.get(digest, 0)
                self._attempts[digest] = attempt + 1
            if self._fails(digest, fail_rate, attempt):
                return SimReply(text="", transient_failure=True)
        context = {"digest": digest.hex(), "seed": self.config.seed, "canaries": self.canaries}
        text, tool_calls = PLAYERS[kind](request, params, _rng(digest), context)
        return SimReply(text=text, tool_calls=tuple(tool_calls))


def register_with_litellm(world: SimWorld | None = None) -> None:
    """Register the offline world as litellm's custom provider ``sim``.

    Afterwards ``litellm.completion(model="sim/target-a", messages=...)`` answers
    with the same text and tool calls as :meth:`SimWorld.respond`.  The request's
    ``replicate``, ``template_digest``, ``sim_inputs`` and ``attempt`` travel in ``extra_body``; a
    transient failure raises litellm's ``CustomLLMError`` with status 503.

    Parameters
    ----------
    world
        The world to serve; the built-in defaults when ``None``.
    """
    import os

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    from litellm.llms.custom_llm import CustomLLM, CustomLLMError

    served = world if world is not None else SimWorld.from_config(None)

    class SimProvider(CustomLLM):
        def _reply(self, model: str, messages: list, optional_params: dict, model_response: Any) -> Any:
            options = {k: v for k, v in (optional_params or {}).items() if k not in _TRANSPORT_OPTIONS}
            extra = dict(options.pop("extra_body", None) or {})
            tools = options.pop("tools", None)
            response_format = options.pop("response_format", None)
            seed = options.pop("seed", None)
            request = Request(
                model=f"sim/{model}",
                messages=tuple(messages),
                params=options,
                tools=tuple(tools) if tools is not None else None,
                response_format=response_format,
                seed=seed,
                replicate=int(extra.get("replicate", 0)),
                template_digest=str(extra.get("template_digest", "")),
                sim_inputs=extra.get("sim_inputs"),
            )
            reply = served.respond(request, attempt=int(extra.get("attempt", 0)))
            if reply.transient_failure:
                raise CustomLLMError(status_code=503, message="sim: transient failure (retry)")
            message = litellm.Message(
                content=reply.text, role="assistant", tool_calls=[dict(c) for c in reply.tool_calls] or None
            )
            model_response.choices[0].message = message
            model_response.choices[0].finish_reason = "tool_calls" if reply.tool_calls else "stop"
            model_response.model = f"sim/{model}"
            return model_response

        def completion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                       encoding, api_key, logging_obj, optional_params, *args, **kwargs):  # fmt: skip
            return self._reply(model, messages, optional_params, model_response)

        async def acompletion(self, model, messages, api_base, custom_prompt_dict, model_response, print_verbose,
                              encoding, api_key, logging_obj, optional_params, *args, **kwargs):  # fmt: skip
            return self._reply(model, messages, optional_params, model_response)

    litellm.custom_provider_map = [
        item for item in litellm.custom_provider_map if item.get("provider") != "sim"
    ] + [{"provider": "sim", "custom_handler": SimProvider()}]
    litellm.utils.custom_llm_setup()

"""Structured output: the ``response_format`` a component asks for, and the plain-prompt fallback.

A model spec's ``response_format`` names a mode (see
:data:`multiverse.core.choices.RESPONSE_FORMATS`); the component that must read
JSON (judge, monitor, planner) supplies the JSON schema of the answer it
expects, and :func:`response_format_for` turns both into the call's
``response_format``.  Every template also asks for the JSON in prose, so a
provider that rejects the format (a ``bad_request`` failure) is asked again
with the same messages and no ``response_format``: :func:`agather_structured`
does that, and remembers per client which model and server rejected it, so
later requests to them go plain at once.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from multiverse.core.choices import ModelSpec
from multiverse.llm.errors import RunStopped
from multiverse.llm.redact import strip_url_credentials
from multiverse.llm.request import Request, Response

__all__ = ["acomplete_structured", "agather_structured", "response_format_for"]

log = logging.getLogger("multiverse.llm")

_REJECTED: weakref.WeakKeyDictionary[Any, set[tuple[str, str | None]]] = weakref.WeakKeyDictionary()
"""client -> (model, api_base) pairs that rejected a ``response_format`` with a bad request."""


def response_format_for(spec: ModelSpec, schema: Mapping[str, Any], *, name: str) -> Mapping[str, Any] | None:
    """The ``response_format`` of a call to ``spec`` whose answer must match ``schema``.

    Parameters
    ----------
    spec
        The model; its ``response_format`` is a named mode, a mapping (returned
        as it is) or ``None`` (returns ``None``: the plain prompt).
    schema
        The JSON schema of the expected answer.
    name
        The schema's name (``json_schema`` mode; letters, digits, ``_`` and ``-``).

    Examples
    --------
    >>> spec = ModelSpec("openai/local", response_format="json_object")
    >>> response_format_for(spec, {"type": "object"}, name="verdict")
    {'type': 'json_object'}
    """
    mode = spec.response_format
    if mode is None or isinstance(mode, Mapping):
        return mode
    if mode == "json_object":
        return {"type": "json_object"}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": dict(schema)}
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": True}}


def _target(request: Request) -> tuple[str, str | None]:
    return request.model, strip_url_credentials(request.api_base)


def _plain(request: Request) -> Request:
    return replace(request, response_format=None)


async def agather_structured(client: Any, requests: Sequence[Request]) -> list[Response]:
    """``client.agather(requests)``, asking again without ``response_format`` where it was rejected.

    Requests to a model and server that already rejected a format in this
    client's life are sent plain from the start.  The rejected attempt stays
    counted as a ``bad_request`` failure in the client's summary.

    Raises
    ------
    RunStopped
        As :meth:`multiverse.llm.Client.agather`; its ``responses`` cover every request.
    """
    rejected = _REJECTED.setdefault(client, set())
    sent = [_plain(r) if r.response_format is not None and _target(r) in rejected else r for r in requests]
    responses = list(await client.agather(sent))
    again = [
        i
        for i, (request, response) in enumerate(zip(sent, responses))
        if request.response_format is not None and response.error == "bad_request"
    ]
    if not again:
        return responses
    for i in again:
        if _target(sent[i]) not in rejected:
            rejected.add(_target(sent[i]))
            log.warning("%s rejected response_format; asking with the plain prompt instead", sent[i].model)
    try:
        retried = await client.agather([_plain(sent[i]) for i in again])
    except RunStopped as stop:
        merged: list[Response | None] = list(responses)
        for i, response in zip(again, stop.responses or [None] * len(again)):
            merged[i] = response
        stop.responses = merged
        raise
    for i, response in zip(again, retried):
        responses[i] = response
    return responses


async def acomplete_structured(client: Any, request: Request) -> Response:
    """One request through :func:`agather_structured`."""
    try:
        return (await agather_structured(client, [request]))[0]
    except RunStopped as stop:
        stop.responses = None
        raise

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

A server that does not know the ``json_schema`` form may fail on it with a
server error instead (llama.cpp's Python server answers HTTP 500): such a
request is asked once more as ``{"type": "json_object", "schema": ...}``, the
form that server turns into a grammar (:func:`schema_fallback`; the client does
not retry the 500), and later requests to that model and server take that form
at once.  Each fallback is recorded in the client's summary
(``response_format_fallbacks``) and logged once.
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

__all__ = ["acomplete_structured", "agather_structured", "response_format_for", "schema_fallback"]

log = logging.getLogger("multiverse.llm")

_REJECTED: weakref.WeakKeyDictionary[Any, dict[tuple[str, str | None], str]] = weakref.WeakKeyDictionary()
"""client -> {(model, api_base): the form to ask in instead}: ``plain`` after a bad request on a
``response_format``, ``json_object_schema`` after a server error on ``json_schema``."""


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


def schema_fallback(request: Request) -> Request | None:
    """The request asked as ``json_object`` with its schema, when it asks in the ``json_schema`` form; else ``None``."""
    form = request.response_format
    if not isinstance(form, Mapping) or form.get("type") != "json_schema":
        return None
    schema = (form.get("json_schema") or {}).get("schema")
    if not isinstance(schema, Mapping):
        return None
    return replace(request, response_format={"type": "json_object", "schema": dict(schema)})


def _asked_as(request: Request, form: str) -> Request:
    if form == "json_object_schema":
        return schema_fallback(request) or request
    return replace(request, response_format=None)


def _fallback_form(request: Request, response: Response) -> str | None:
    """The form to ask a failed structured request in again, or ``None`` when the failure is not the format's."""
    if request.response_format is None:
        return None
    if response.error == "server_error" and schema_fallback(request) is not None:
        return "json_object_schema"
    if response.error == "bad_request":
        return "plain"
    return None


def _form_name(request: Request) -> str:
    form = request.response_format or {}
    return "json_object_schema" if form.get("type") == "json_object" and "schema" in form else str(form.get("type"))


async def agather_structured(client: Any, requests: Sequence[Request]) -> list[Response]:
    """``client.agather(requests)``, asking again in another form where the format failed.

    A bad request on a ``response_format`` is asked again plain; a server
    error on ``json_schema`` as ``json_object`` with the schema.  Requests to a
    model and server that already needed a fallback in this client's life are
    sent in the fallback form from the start.  The failed attempt stays counted
    as a failure in the client's summary; every request asked in a fallback
    form is counted in its ``response_format_fallbacks``.

    Raises
    ------
    RunStopped
        As :meth:`multiverse.llm.Client.agather`; its ``responses`` cover every request.
    """
    known = _REJECTED.setdefault(client, {})
    note = getattr(client, "note_format_fallback", None)
    sent = []
    for request in requests:
        form = known.get(_target(request)) if request.response_format is not None else None
        sent.append(request if form is None else _asked_as(request, form))
        if form is not None and note is not None:
            note(request, f"{_form_name(request)}->{form}")
    responses = list(await client.agather(sent))
    again: list[tuple[int, Request]] = []
    for i, (request, response) in enumerate(zip(sent, responses)):
        form = _fallback_form(request, response)
        if form is None:
            continue
        retry = _asked_as(request, form)
        again.append((i, retry))
        if known.get(_target(request)) != form:
            known[_target(request)] = form
            log.warning("%s failed on response_format %s; asking as %s instead", request.model, _form_name(request), form)
        if note is not None:
            note(request, f"{_form_name(request)}->{form}")
    if not again:
        return responses
    try:
        retried = await client.agather([r for _, r in again])
    except RunStopped as stop:
        merged: list[Response | None] = list(responses)
        for (i, _), response in zip(again, stop.responses or [None] * len(again)):
            merged[i] = response
        stop.responses = merged
        raise
    for (i, _), response in zip(again, retried):
        responses[i] = response
    return responses


async def acomplete_structured(client: Any, request: Request) -> Response:
    """One request through :func:`agather_structured`."""
    try:
        return (await agather_structured(client, [request]))[0]
    except RunStopped as stop:
        stop.responses = None
        raise

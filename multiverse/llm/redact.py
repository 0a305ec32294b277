"""Keep secrets out of every message, log line and stored value.

API keys, bearer tokens, authorisation headers and credentials inside URLs must
never reach the cache, a summary, a log or an exception text.  :func:`redact`
is applied to every message this package raises or logs, and to the records of
litellm's own loggers (:func:`install_log_filter`).

It removes, in order: the values of environment variables whose names mark
them as secrets (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``,
``*CREDENTIAL*``), values registered with :func:`register_secret` (credential
parameters and URL passwords of the requests seen), ``user:password@`` in URLs,
``Bearer`` tokens, authorisation-like headers, secret-named query parameters
and provider key shapes (``sk-...``).  :func:`redact_tree` applies the same to
structured data (an experiment's model specs, a run summary) before it is
written, and also masks every value stored under a secret-looking name
(``api_key``, ``token``, ``authorization``, ``password``, ...) and every header
value (``headers``, ``extra_headers``).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "register_secret",
    "redact",
    "strip_url_credentials",
    "split_url_credentials",
    "RedactingFilter",
    "install_log_filter",
]

MASK = "[REDACTED]"
_MIN_SECRET_LENGTH = 6
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_SECRET_QUERY_NAME = re.compile(r"key|token|secret|sig|signature|password|credential|auth", re.IGNORECASE)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<=://)[^\s/@]+@"), MASK + "@"),
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}"), r"\1\2" + MASK),
    (
        re.compile(r"(?i)((?:authorization|x-api-key|api-key|api_key|x-goog-api-key)['\"]?\s*[:=]\s*['\"]?)[^'\"\s,}&]+"),
        r"\1" + MASK,
    ),
    (
        re.compile(r"(?i)([?&](?:[a-z_-]*(?:key|token|secret|sig|signature|password|credential))=)[^&\s#'\"]+"),
        r"\1" + MASK,
    ),
    (re.compile(r"\b(?:sk|pk|rk|sess)-[A-Za-z0-9_-]{12,}"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
)
_SECRET_FIELD = re.compile(
    r"(?:^|[_-])(?:api_?key|key|token|secret|password|passwd|authorization|credentials?|bearer|cookie)(?:$|[_-])|^auth$",
    re.IGNORECASE,
)
"""Field names whose values are secrets (``api_key``, ``x-api-key``, ``access_token``; not ``max_tokens``)."""
_HEADER_FIELDS = frozenset({"headers", "extra_headers", "default_headers"})
_registered: set[str] = set()


def register_secret(value: object) -> None:
    """Remember ``value`` so :func:`redact` masks it wherever it appears."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET_LENGTH:
        _registered.add(value)


def _secret_values() -> set[str]:
    values = {v for name, v in os.environ.items() if _SECRET_NAME.search(name) and len(v) >= _MIN_SECRET_LENGTH}
    return values | _registered


def redact(text: object, *, secrets: tuple[str, ...] = ()) -> str:
    """Return ``str(text)`` with every secret it holds replaced by ``[REDACTED]``.

    Parameters
    ----------
    text
        Anything; its ``str`` is redacted.
    secrets
        Further values to mask, besides the environment's and the registered ones.

    Examples
    --------
    >>> redact("GET https://user:hunter22@example.org/v1 with Bearer abcdefgh")
    'GET https://[REDACTED]@example.org/v1 with Bearer [REDACTED]'
    """
    out = str(text)
    for value in sorted(_secret_values().union(s for s in secrets if s), key=len, reverse=True):
        if value in out:
            out = out.replace(value, MASK)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def is_secret_field(name: object) -> bool:
    """Whether a field (parameter, header) called ``name`` holds a secret.

    Examples
    --------
    >>> [is_secret_field(n) for n in ("api_key", "X-Api-Key", "access_token", "max_tokens", "auth_error")]
    [True, True, True, False, False]
    """
    return isinstance(name, str) and _SECRET_FIELD.search(name) is not None


def _mask_all(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _mask_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask_all(v) for v in value]
    register_secret(value if isinstance(value, str) else None)
    return MASK


def register_secret_fields(params: Mapping[str, Any]) -> None:
    """Register every value ``params`` holds under a secret-looking name or as a header (see :func:`redact_tree`).

    Called with a request's parameters before it is sent, so a header value or
    key echoed in a provider's error or a library's debug log is masked too.
    """
    redact_tree(params)


def redact_tree(value: Any) -> Any:
    """A copy of plain data (mappings, lists, scalars) with every secret masked.

    Values under a secret-looking field name (:func:`is_secret_field`) and every
    header value are replaced by ``[REDACTED]`` (and registered with
    :func:`register_secret`, so they are masked wherever else they surface);
    every string goes through :func:`redact` (URL credentials, tokens, the
    environment's secrets).  Mapping keys are kept.

    Examples
    --------
    >>> redact_tree({"api_base": "http://u:pw-1234567@host/v1", "params": {"api_key": "k-123456", "max_tokens": 5}})
    {'api_base': 'http://[REDACTED]@host/v1', 'params': {'api_key': '[REDACTED]', 'max_tokens': 5}}
    """
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if is_secret_field(key) or (key in _HEADER_FIELDS and isinstance(item, Mapping)):
                out[key] = _mask_all(item)
            else:
                out[key] = redact_tree(item)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_tree(item) for item in value]
    if isinstance(value, str):
        return redact(value)
    return value


def strip_url_credentials(url: str | None) -> str | None:
    """Return ``url`` without ``user:password@`` and without secret query parameters.

    The removed password and secret parameter values are registered with
    :func:`register_secret`, so they are also masked if they surface in a
    provider's error message.

    Examples
    --------
    >>> strip_url_credentials("http://me:pw-123456@10.0.0.2:8000/v1/?api-version=2&key=abcdef")
    'http://10.0.0.2:8000/v1?api-version=2'
    """
    if url is None:
        return None
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if parts.username is not None:
        register_secret(unquote(parts.username))
        register_secret(unquote(parts.password or ""))
    netloc = host if ":" not in host else f"[{host}]"
    if parts.port is not None:
        netloc = f"{netloc}:{parts.port}"
    query = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_QUERY_NAME.search(name):
            register_secret(value)
        else:
            query.append((name, value))
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), netloc.lower(), path, urlencode(query), ""))


def split_url_credentials(url: str) -> tuple[str, str | None]:
    """Split ``url`` into the URL without ``user:password@`` and the password (else the user name).

    Examples
    --------
    >>> split_url_credentials("http://:tok-12345@127.0.0.1:8000/v1")
    ('http://127.0.0.1:8000/v1', 'tok-12345')
    """
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    secret = unquote(parts.password or parts.username or "") or None
    register_secret(secret)
    netloc = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), secret


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's formatted message in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, ()
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.msg}: {redact(record.exc_info[1])}"
            record.exc_info, record.exc_text = None, None
        return True


_FILTER = RedactingFilter()
_redacted_namespaces: tuple[str, ...] = ()


def install_log_filter(*namespaces: str) -> None:
    """Redact every log record created under the given logger namespaces (idempotent).

    A filter on a logger does not see records of its child loggers, and the
    libraries create child loggers freely, so the redaction hooks into record
    creation (:func:`logging.setLogRecordFactory`) for these namespaces only.
    """
    global _redacted_namespaces
    new = tuple(n for n in namespaces if n not in _redacted_namespaces)
    if not new:
        return
    if not _redacted_namespaces:
        previous = logging.getLogRecordFactory()

        def factory(*args, **kwargs):
            record = previous(*args, **kwargs)
            if record.name.startswith(_redacted_namespaces):
                _FILTER.filter(record)
            return record

        logging.setLogRecordFactory(factory)
    _redacted_namespaces += new

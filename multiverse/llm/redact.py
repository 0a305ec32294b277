"""Keep secrets out of every message, log line and stored value.

API keys, bearer tokens, authorisation headers and credentials inside URLs must
never reach the cache, a summary, a log or an exception text.  :func:`redact`
is applied to every message this package raises or logs, and to the records of
litellm's own loggers (:func:`install_log_filter`).

Secrets are found two ways:

- by value (:func:`scrub`): the values of environment variables whose names
  mark them as secrets (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``,
  ``*PASSPHRASE*``, ``*CREDENTIAL*``, ``*COOKIE*``, or a secret word of
  :func:`is_secret_field` as a whole segment, except a few well-known harmless
  variables such as ``PWD``), and the values registered with
  :func:`register_secret`: every value an experiment holds under a secret name
  or as a header, URL passwords and credential parameters of the requests seen
  (:func:`register_secrets_of`).  Stored content (provider replies, transcripts,
  the viewer's data, exported cases and annotation tasks) is scrubbed by value
  only, so prose that merely mentions a "basic" or "bearer" thing is kept;
- by shape (:func:`redact`, for messages, log lines and what a command prints):
  the value scrub, then ``user:password@`` in URLs, ``Bearer`` tokens,
  ``name: value`` or ``name=value`` pairs whose name is secret, secret-named
  query parameters and provider key shapes (``sk-...``).

A field name is secret when one of its words, after splitting camelCase,
snake_case, kebab-case and dotted names, is a secret word (token, secret,
password, passwd, pwd, passphrase, auth, authorization, credential, cookie,
session, key, apikey, bearer), plurals included, unless the name is a known
harmless one: a token count or limit (``max_tokens``, ``prompt_tokens``,
``token_count`` and their kin) or one of :data:`HARMLESS_FIELDS`.
:func:`redact_tree` masks every value stored under a secret name and every
header value in structured data (an experiment's model specs, a run summary)
before it is written.  Nothing here changes a cache key: keys are computed from
the request before any of this runs, and hold secrets only inside their sha256.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "HARMLESS_FIELDS",
    "MASK",
    "field_words",
    "is_secret_field",
    "register_secret",
    "register_secret_fields",
    "register_secrets_of",
    "redact",
    "redact_tree",
    "scrub",
    "strip_url_credentials",
    "split_url_credentials",
    "RedactingFilter",
    "install_log_filter",
]

MASK = "[REDACTED]"
_MIN_SECRET_LENGTH = 6
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE", re.IGNORECASE)
_HARMLESS_ENV = frozenset({
    "PWD", "OLDPWD", "SSH_AUTH_SOCK", "SESSION_MANAGER", "DESKTOP_SESSION", "DBUS_SESSION_BUS_ADDRESS",
    "XDG_SESSION_ID", "XDG_SESSION_TYPE", "XDG_SESSION_CLASS", "XDG_SESSION_DESKTOP", "XAUTHORITY",
})
"""Environment variables whose names hold a secret word but whose values are not secrets (paths, session ids)."""
_SECRET_WORDS = frozenset({
    "token", "secret", "password", "passwd", "pwd", "passphrase", "auth", "authorization", "authorisation",
    "credential", "cookie", "session", "key", "apikey", "bearer",
})
_COUNT_WORDS = frozenset({
    "max", "min", "num", "n", "total", "prompt", "completion", "input", "output", "reasoning", "cached", "new",
    "count", "counts", "limit", "budget", "used", "remaining", "usage", "per", "estimate", "estimated",
})
"""Words that make a ``token`` name a count or limit (``max_tokens``, ``prompt_tokens``, ``token_count``)."""
HARMLESS_FIELDS = frozenset({"auth_error", "key_schema", "sort_keys"})
"""Field names (snake_case, lower case) with a secret word that hold no secret (a failure reason, settings)."""
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_FIELD_PAIR = re.compile(
    r"""(?P<quote>["']?)(?P<name>[A-Za-z][A-Za-z0-9_.-]{0,63})(?P=quote)(?P<sep>\s*[:=]\s*)"""
    r"""(?P<open>["']?)(?P<value>(?:Bearer\s+|Basic\s+)?[^\s"',;&}]{4,})"""
)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<=://)[^\s/@]+@"), MASK + "@"),
    (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{4,}"), r"\1\2" + MASK),
    (
        re.compile(r"(?i)([?&](?:[a-z_-]*(?:key|token|secret|sig|signature|password|credential))=)[^&\s#'\"]+"),
        r"\1" + MASK,
    ),
    (re.compile(r"\b(?:sk|pk|rk|sess)-[A-Za-z0-9_-]{12,}"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK),
)
_SECRET_QUERY_NAME = re.compile(r"key|token|secret|sig|signature|password|credential|auth", re.IGNORECASE)
_HEADER_FIELDS = frozenset({"headers", "extra_headers", "default_headers"})
_registered: set[str] = set()


def field_words(name: str) -> list[str]:
    """The lower-case words of a field name: camelCase, snake_case, kebab-case and dotted names split.

    Examples
    --------
    >>> field_words("X-Api-Key"), field_words("accessToken"), field_words("client.SECRET_value")
    (['x', 'api', 'key'], ['access', 'token'], ['client', 'secret', 'value'])
    """
    return [word.lower() for word in _WORD.findall(name)]


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and word[:-1] in _SECRET_WORDS else word


def register_secret(value: object) -> None:
    """Remember ``value`` so :func:`redact` masks it wherever it appears."""
    if isinstance(value, str) and len(value) >= _MIN_SECRET_LENGTH:
        _registered.add(value)


@functools.cache  # a name's verdict never changes; scrub asks it for every variable on every call
def _secret_env(name: str) -> bool:
    if name.upper() in _HARMLESS_ENV:
        return False
    return _SECRET_ENV.search(name) is not None or is_secret_field(name)


def _secret_values() -> set[str]:
    values = {v for name, v in os.environ.items() if len(v) >= _MIN_SECRET_LENGTH and _secret_env(name)}
    return values | _registered


def scrub(text: object, *, secrets: tuple[str, ...] = ()) -> str:
    """Return ``str(text)`` with every known secret value replaced by ``[REDACTED]``.

    The known values are the environment's secrets, the registered ones
    (:func:`register_secret`) and ``secrets``; nothing is matched by shape, so
    stored prose stays as written.  Used on everything stored or exported
    (replies, transcripts, the viewer's data, cases, annotation tasks).

    Examples
    --------
    >>> register_secret("canary-4711-value")
    >>> scrub("the server echoed canary-4711-value back, with basic words")
    'the server echoed [REDACTED] back, with basic words'
    """
    out = str(text)
    for value in sorted(_secret_values().union(s for s in secrets if s), key=len, reverse=True):
        if value in out:
            out = out.replace(value, MASK)
    return out


def _mask_pair(match: re.Match[str]) -> str:
    name = match["name"]
    if not is_secret_field(name) or match["value"].startswith(MASK):
        return match[0]
    compound = len(field_words(name)) > 1 or not name.isalpha()
    if "=" not in match["sep"] and not (match["quote"] or match["open"] or compound):
        return match[0]  # prose ("missing credentials: openai/...") rather than a field and its value
    return f"{match['quote']}{match['name']}{match['quote']}{match['sep']}{match['open']}{MASK}"


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
    out = scrub(text, secrets=secrets)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return _FIELD_PAIR.sub(_mask_pair, out)


def is_secret_field(name: object) -> bool:
    """Whether a field (parameter, header, variable) called ``name`` holds a secret.

    Examples
    --------
    >>> names = ("api_key", "X-Api-Key", "accessToken", "sessionToken", "pwd", "client.secret", "passPhrase",
    ...          "max_tokens", "prompt_tokens", "auth_error", "monkey")
    >>> [is_secret_field(n) for n in names]
    [True, True, True, True, True, True, True, False, False, False, False]
    """
    if not isinstance(name, str):
        return False
    split = field_words(name)
    words = [_singular(w) for w in split] + [_singular(a + b) for a, b in zip(split, split[1:])]
    if not any(w in _SECRET_WORDS for w in words) and "apikey" not in name.lower().replace("-", "").replace("_", ""):
        return False
    if "_".join(field_words(name)) in HARMLESS_FIELDS:
        return False
    secret = {w for w in words if w in _SECRET_WORDS}
    return not (secret == {"token"} and any(w in _COUNT_WORDS for w in words))


def _mask_all(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _mask_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_mask_all(v) for v in value]
    if value is None or isinstance(value, bool):
        return value
    register_secret(str(value))
    return MASK


def register_secret_fields(params: Mapping[str, Any]) -> None:
    """Register every value ``params`` holds under a secret-looking name or as a header (see :func:`redact_tree`).

    Called with a request's parameters before it is sent, so a header value or
    key echoed in a provider's error or a library's debug log is masked too.
    """
    redact_tree(params)


def register_secrets_of(value: Any) -> None:
    """Register every secret ``value`` holds (plain data: an experiment's ``to_dict()``), so :func:`scrub` finds it.

    Values under secret names, header values and passwords inside URLs are
    registered; called when an experiment is resolved, before any request is
    built or anything is written.
    """
    redact_tree(value)


def redact_tree(value: Any) -> Any:
    """A copy of plain data (mappings, lists, scalars) with every secret masked.

    Values under a secret field name (:func:`is_secret_field`) and every header
    value are replaced by ``[REDACTED]`` (and registered with
    :func:`register_secret`, so they are masked wherever else they surface);
    every string goes through :func:`redact` (URL credentials, tokens, the
    environment's secrets), a URL's password being registered too.  Mapping
    keys are kept; ``None`` and booleans are never masked.

    Examples
    --------
    >>> redact_tree({"api_base": "http://u:pw-1234567@host/v1", "params": {"sessionToken": "k-123456", "max_tokens": 5}})
    {'api_base': 'http://[REDACTED]@host/v1', 'params': {'sessionToken': '[REDACTED]', 'max_tokens': 5}}
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
        if "@" in value and "://" in value:
            _register_url_password(value)
        return redact(value)
    return value


def _register_url_password(text: str) -> None:
    for url in re.findall(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/@]+@[^\s]*", text):
        try:
            split_url_credentials(url)
        except ValueError:
            pass


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
        if is_secret_field(name) or _SECRET_QUERY_NAME.search(name):
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

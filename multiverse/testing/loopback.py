"""A loopback OpenAI-compatible chat server with injectable faults, for tests and benchmarks.

It serves ``POST /v1/chat/completions`` (plain and ``stream=true``) on
127.0.0.1 at a free port from a background thread, so the real HTTP path
through litellm runs with no network and no key::

    with LoopbackServer(latency_s=0.05, fault_rate=0.2) as server:
        Request("openai/loop", messages, api_base=server.url, params={"api_key": "dummy"})

Replies are deterministic: a function of the request body (by default
:func:`reply_text`; an ``answer`` function may give its own text, or an HTTP
error status, per body).  Faults are drawn
per request body and attempt (seeded), or forced by a marker ``[[fault:KIND]]``
in the last message's content (that request then fails on every attempt):

``rate_limit``  429 with ``Retry-After``;  ``server_error``  500;
``timeout``  no answer for ``hang_s``;  ``malformed``  200 with invalid JSON;
``truncated``  the body (or stream) cut off mid-way;  ``empty``  200 with empty content;
``auth``  401 echoing the key it got, as providers do;  ``bad_request``  400;  ``not_found``  404 (unknown model).
With ``echo=True`` every reply also echoes what the request carried besides its
messages (the ``Authorization`` header, every ``X-`` header and every body
parameter), as a careless provider or proxy might: what a client keeps of such
replies shows whether it scrubs the secrets it sent.

The server counts requests per body digest (:attr:`LoopbackServer.requests`),
fully answered ones (:attr:`LoopbackServer.answered`), injected faults
(:attr:`LoopbackServer.faults`), the last message of each digest
(:attr:`LoopbackServer.prompts`) and the bearer tokens it received
(:attr:`LoopbackServer.bearer_tokens`, so tests can check a key was sent), and every request
body in arrival order (:attr:`LoopbackServer.bodies`, so tests can read what was sent).  Written on the
standard library's ``ThreadingHTTPServer`` so it needs nothing beyond Python.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "TRANSIENT_FAULTS",
    "PERMANENT_FAULTS",
    "FAULTS",
    "body_digest",
    "reply_text",
    "LoopbackServer",
    "main",
]

TRANSIENT_FAULTS: tuple[str, ...] = ("rate_limit", "server_error", "timeout", "malformed", "truncated", "empty")
PERMANENT_FAULTS: tuple[str, ...] = ("auth", "bad_request", "not_found")
FAULTS = TRANSIENT_FAULTS + PERMANENT_FAULTS
_MARKER = re.compile(r"\[\[fault:([a-z_]+)\]\]")
_ERRORS = {
    "rate_limit": (429, "rate_limit_exceeded", "Rate limit reached, retry later."),
    "server_error": (500, "server_error", "The server had an error while processing the request."),
    "auth": (401, "invalid_api_key", "Incorrect API key provided."),
    "bad_request": (400, "invalid_request_error", "Invalid value for 'messages'."),
    "not_found": (404, "model_not_found", "The model does not exist."),
}


def body_digest(body: Mapping[str, Any]) -> str:
    """Digest of a request body without its ``stream`` flag: what the server counts by."""
    content = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:16]


def reply_text(body: Mapping[str, Any]) -> str:
    """The deterministic reply to ``body``."""
    messages = body.get("messages") or [{}]
    last = str(messages[-1].get("content") or "")
    return f"reply {body_digest(body)} to: {last[:60]}"


class LoopbackServer:
    """A context-managed OpenAI-compatible server on 127.0.0.1.

    Parameters
    ----------
    latency_s
        Delay before every answer.
    fault_rate
        Probability that an attempt fails with one of ``fault_kinds``.
    fault_kinds
        Kinds drawn when a fault strikes (default: the transient ones).
    seed
        Seed of the fault draws (the same body and attempt always draw the same).
    retry_after_s
        ``Retry-After`` sent with 429 (seconds; fractional values allowed).
    hang_s
        How long a ``timeout`` fault withholds its answer.
    answer
        ``answer(body)`` -> the reply text, an HTTP status to fail with (a
        500 says the server had an error), or ``None`` for the default reply.
        Called after the fault draw (a drawn fault wins), in the server's
        threads, so it must be thread-safe; an exception it raises is a 500.
    port
        The port to listen on (default: a free one), e.g. the port of a server
        stopped before, so a client resumes against the same ``api_base``.
    echo
        Append the request's ``Authorization`` and ``X-`` headers and its body
        parameters (all but ``messages``) to every reply text.
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        fault_rate: float = 0.0,
        fault_kinds: Sequence[str] = TRANSIENT_FAULTS,
        seed: int = 0,
        retry_after_s: float = 0.01,
        hang_s: float = 5.0,
        answer: Callable[[Mapping[str, Any]], str | int | None] | None = None,
        port: int = 0,
        echo: bool = False,
    ) -> None:
        unknown = sorted(set(fault_kinds) - set(FAULTS))
        if unknown:
            raise ValueError(f"LoopbackServer fault_kinds: unknown {', '.join(unknown)}; expected some of {', '.join(FAULTS)}")
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"LoopbackServer fault_rate: expected a probability, got {fault_rate!r}")
        self.latency_s = latency_s
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.seed = seed
        self.retry_after_s = retry_after_s
        self.hang_s = hang_s
        self.answer = answer
        self._port = port
        self.echo = echo
        self.requests: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.bearer_tokens: Counter[str] = Counter()
        self.prompts: dict[str, str] = {}
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("LoopbackServer is not running; use it as a context manager")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The ``api_base`` to give litellm: ``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def fault_for(self, body: Mapping[str, Any], attempt: int) -> str | None:
        """The fault the ``attempt``-th (0-based) request with ``body`` meets, or ``None``."""
        messages = body.get("messages") or [{}]
        marker = _MARKER.search(str(messages[-1].get("content") or ""))
        if marker:
            return marker.group(1)
        if self.fault_rate <= 0:
            return None
        rng = random.Random(f"{self.seed}:{body_digest(body)}:{attempt}")
        if rng.random() < self.fault_rate:
            return rng.choice(self.fault_kinds)
        return None

    def start(self) -> LoopbackServer:
        """Start serving in a background thread."""
        handler = type("_BoundHandler", (_Handler,), {"owner": self})
        self._server = _Server(("127.0.0.1", self._port), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, name="loopback-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _admit(self, body: Mapping[str, Any], authorization: str) -> tuple[str, str | None]:
        digest = body_digest(body)
        with self._lock:
            self.bearer_tokens[authorization.removeprefix("Bearer ")] += 1
            self.bodies.append(dict(body))
            self.prompts[digest] = str(((body.get("messages") or [{}])[-1]).get("content") or "")
            attempt = self.requests[digest]
            self.requests[digest] += 1
        fault = self.fault_for(body, attempt)
        if fault is not None:
            with self._lock:
                self.faults[fault] += 1
        return digest, fault

    def _answered(self, digest: str) -> None:
        with self._lock:
            self.answered[digest] += 1


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many clients connect at once; the default backlog of 5 would refuse them


class _Handler(BaseHTTPRequestHandler):
    owner: LoopbackServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  silence per-request logging
        return

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "loop", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        owner = self.owner
        digest, fault = owner._admit(body, self.headers.get("Authorization", ""))
        try:
            if owner.latency_s > 0:
                time.sleep(owner.latency_s)
            self._answer(body, digest, fault)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _answer(self, body: Mapping[str, Any], digest: str, fault: str | None) -> None:
        owner = self.owner
        if fault in _ERRORS:
            status, code, message = _ERRORS[fault]
            if fault == "auth":  # as providers do, echo the rejected key back
                message = f"{message[:-1]}: {self.headers.get('Authorization', '').removeprefix('Bearer ')}."
            headers = {"Retry-After": f"{owner.retry_after_s:g}"} if fault == "rate_limit" else None
            self._send_json(status, {"error": {"message": message, "type": code, "code": code}}, headers)
            return
        if fault == "timeout":
            time.sleep(owner.hang_s)
            self.close_connection = True
            return
        if fault == "malformed":
            self._send_json(200, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "unterminated')
            return
        chosen = None
        if owner.answer is not None and fault is None:
            try:
                chosen = owner.answer(body)
            except Exception as exc:  # noqa: BLE001  a broken answer function is the server's error, not the client's
                message = f"answer function failed: {type(exc).__name__}"
                self._send_json(500, {"error": {"message": message, "type": "server_error", "code": 500}})
                return
        if isinstance(chosen, int):
            message = f"the server failed with HTTP {chosen}"
            self._send_json(chosen, {"error": {"message": message, "type": "server_error", "code": chosen}})
            return
        text = "" if fault == "empty" else chosen if chosen is not None else reply_text(body)
        if text and owner.echo:
            headers = {k: v for k, v in self.headers.items() if k.lower() == "authorization" or k.lower().startswith("x-")}
            params = {k: v for k, v in body.items() if k != "messages"}
            text += " | echo " + json.dumps({"headers": headers, "params": params}, sort_keys=True)
        if body.get("stream"):
            self._stream(body, digest, text, truncated=fault == "truncated")
            return
        payload = json.dumps(_completion(body, digest, text)).encode()
        if fault == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self._send_json(200, payload)
        owner._answered(digest)

    def _stream(self, body: Mapping[str, Any], digest: str, text: str, *, truncated: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        words = text.split(" ")
        pieces = [" ".join(words[: len(words) // 2]) + " ", " ".join(words[len(words) // 2 :])] if text else [""]
        for i, piece in enumerate(pieces):
            chunk = {
                "id": f"chatcmpl-{digest}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model", "loop"),
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            if truncated and i == 0:
                return
        final = {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body.get("model", "loop"),
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()
        self.owner._answered(digest)


def _completion(body: Mapping[str, Any], digest: str, text: str) -> dict[str, Any]:
    prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or []) // 4
    completion = len(text) // 4
    return {
        "id": f"chatcmpl-{digest}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "loop"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted: ``python -m multiverse.testing.loopback [--latency-s S] [--fault-rate P] [--port N]``.

    Prints the ``api_base`` as the first line of output (benchmarks run the
    server in its own process so it does not share the client's interpreter).
    """
    parser = argparse.ArgumentParser(description="A loopback OpenAI-compatible chat server.")
    parser.add_argument("--latency-s", type=float, default=0.0, help="delay before every answer")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of attempts that fail")
    parser.add_argument("--seed", type=int, default=0, help="seed of the fault draws")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    args = parser.parse_args(argv)
    with LoopbackServer(latency_s=args.latency_s, fault_rate=args.fault_rate, seed=args.seed, port=args.port) as server:
        print(server.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()

"""Support for testing code that calls models: a loopback OpenAI-compatible server with faults.

:class:`~multiverse.testing.loopback.LoopbackServer` serves chat completions on
127.0.0.1 with injectable latency and faults, so the real HTTP path (litellm,
retries, redaction) can be exercised with no network.
"""

from __future__ import annotations

from multiverse.testing.loopback import LoopbackServer, reply_text

__all__ = ["LoopbackServer", "reply_text"]
